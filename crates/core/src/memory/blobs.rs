//! Object storage: versioned, with metadata on copies.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::model::run::ObjectRef;
use crate::ports::{BlobStore, ObjectMeta};
use crate::Error;

/// A versioned object store.
#[derive(Debug, Default)]
pub struct MemoryBlobs {
    /// (bucket, key) → versions, oldest first: (version id, bytes, metadata).
    objects: Mutex<BTreeMap<(String, String), Vec<StoredObject>>>,
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
        self.find(obj)
            .map(|(_, bytes, _)| bytes)
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
}
