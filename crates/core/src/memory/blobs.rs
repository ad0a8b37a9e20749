//! Object storage: versioned, with metadata on copies.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::model::run::ObjectRef;
use crate::ports::{BlobStore, ObjectMeta};
use crate::Error;

/// A versioned object store.
#[derive(Debug, Default)]
pub struct MemoryBlobs {
    /// (bucket, key) → versions, oldest first: (version id, bytes, metadata).
    objects: Mutex<BTreeMap<(String, String), Vec<StoredObject>>>,
    /// (bucket, key) → how many times an object was read whole.
    whole_reads: Mutex<BTreeMap<(String, String), usize>>,
}

type StoredObject = (String, Vec<u8>, BTreeMap<String, String>);

impl MemoryBlobs {
    /// Stores `body` as a new version and returns the version id.
    pub fn upload(&self, bucket: &str, key: &str, body: &[u8]) -> String {
        let mut objects = self.objects.lock().unwrap();
        let versions = objects.entry((bucket.into(), key.into())).or_default();
        let version = format!("v{}", versions.len() + 1);
        versions.push((version.clone(), body.to_vec(), BTreeMap::new()));
        version
    }

    /// The metadata of the latest version of an object.
    pub fn metadata(&self, bucket: &str, key: &str) -> Option<BTreeMap<String, String>> {
        let objects = self.objects.lock().unwrap();
        objects
            .get(&(bucket.into(), key.into()))
            .and_then(|v| v.last())
            .map(|(_, _, m)| m.clone())
    }

    /// Every key in a bucket.
    pub fn keys(&self, bucket: &str) -> Vec<String> {
        let objects = self.objects.lock().unwrap();
        objects
            .keys()
            .filter(|(b, _)| b == bucket)
            .map(|(_, k)| k.clone())
            .collect()
    }

    /// How many times any version of an object was read whole (`get`), not counting prefixes.
    pub fn whole_reads(&self, bucket: &str, key: &str) -> usize {
        let reads = self.whole_reads.lock().unwrap();
        reads
            .get(&(bucket.into(), key.into()))
            .copied()
            .unwrap_or(0)
    }

    fn find(&self, obj: &ObjectRef) -> Option<StoredObject> {
        let objects = self.objects.lock().unwrap();
        let versions = objects.get(&(obj.bucket.clone(), obj.key.clone()))?;
        match &obj.version_id {
            Some(v) => versions.iter().find(|(id, _, _)| id == v).cloned(),
            None => versions.last().cloned(),
        }
    }
}

impl BlobStore for MemoryBlobs {
    async fn head(&self, obj: &ObjectRef) -> Result<Option<ObjectMeta>, Error> {
        Ok(self.find(obj).map(|(version, bytes, _)| ObjectMeta {
            size: bytes.len() as u64,
            version_id: Some(version),
        }))
    }

    async fn get(&self, obj: &ObjectRef) -> Result<Vec<u8>, Error> {
        let key = (obj.bucket.clone(), obj.key.clone());
        *self.whole_reads.lock().unwrap().entry(key).or_default() += 1;
        self.find(obj)
            .map(|(_, bytes, _)| bytes)
            .ok_or_else(|| Error::BadInput(format!("no such object {obj}")))
    }

    async fn get_prefix(&self, obj: &ObjectRef, len: u64) -> Result<Vec<u8>, Error> {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.find(obj)
            .map(|(_, mut bytes, _)| {
                bytes.truncate(len);
                bytes
            })
            .ok_or_else(|| Error::BadInput(format!("no such object {obj}")))
    }

    async fn put(&self, obj: &ObjectRef, body: Vec<u8>, _: &str) -> Result<Option<String>, Error> {
        Ok(Some(self.upload(&obj.bucket, &obj.key, &body)))
    }

    async fn copy(
        &self,
        from: &ObjectRef,
        to: &ObjectRef,
        metadata: &BTreeMap<String, String>,
    ) -> Result<(), Error> {
        let (_, bytes, _) = self
            .find(from)
            .ok_or_else(|| Error::BadInput(format!("no such object {from}")))?;
        let mut objects = self.objects.lock().unwrap();
        let versions = objects
            .entry((to.bucket.clone(), to.key.clone()))
            .or_default();
        let version = format!("v{}", versions.len() + 1);
        versions.push((version, bytes, metadata.clone()));
        Ok(())
    }

    /// `memory://<bucket>/<key>?versionId=<v>&expiresIn=<seconds>`: no one can fetch it, but it
    /// names what a real one would, the same for the same object and time.
    async fn presign_get(&self, obj: &ObjectRef, ttl: Duration) -> Result<String, Error> {
        let version = match &obj.version_id {
            Some(v) => format!("versionId={v}&"),
            None => String::new(),
        };
        Ok(format!(
            "memory://{}/{}?{version}expiresIn={}",
            obj.bucket,
            obj.key,
            ttl.as_secs()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_presigned_url_names_the_object_its_version_and_its_lifetime() {
        let blobs = MemoryBlobs::default();
        let version = blobs.upload("raw", "inbox/acme/a.pdf", b"%PDF");
        let obj = ObjectRef {
            bucket: "raw".into(),
            key: "inbox/acme/a.pdf".into(),
            version_id: Some(version),
        };
        let ttl = Duration::from_secs(300);

        let url = blobs.presign_get(&obj, ttl).await.unwrap();
        let latest = ObjectRef {
            version_id: None,
            ..obj.clone()
        };

        assert_eq!(
            url,
            "memory://raw/inbox/acme/a.pdf?versionId=v1&expiresIn=300"
        );
        assert_eq!(blobs.presign_get(&obj, ttl).await.unwrap(), url);
        assert_eq!(
            blobs.presign_get(&latest, ttl).await.unwrap(),
            "memory://raw/inbox/acme/a.pdf?expiresIn=300"
        );
    }
}
