//! [`BlobStore`] on S3.

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::MetadataDirective;
use aws_sdk_s3::Client;
use docket_core::model::run::ObjectRef;
use docket_core::ports::{BlobStore, ObjectMeta};
use docket_core::Error;

use crate::errors::{classify, classify_effect, code};

/// S3 objects.
#[derive(Debug, Clone)]
pub struct S3Blobs {
    client: Client,
}

impl S3Blobs {
    /// From an SDK config (path-style addressing when a custom endpoint is set).
    pub fn new(config: &aws_config::SdkConfig) -> Self {
        Self::with_faults(config, &crate::Faults::none())
    }

    /// Like [`S3Blobs::new`], with `faults` injected (tests and local runs only).
    pub fn with_faults(config: &aws_config::SdkConfig, faults: &crate::Faults) -> Self {
        let builder =
            aws_sdk_s3::config::Builder::from(config).force_path_style(crate::custom_endpoint());
        let conf = crate::with_faults(builder, faults).build();
        S3Blobs {
            client: Client::from_conf(conf),
        }
    }

    /// The SDK client, for operator tools.
    pub fn client(&self) -> &Client {
        &self.client
    }
}

/// `bucket/key?versionId=v`, URL-encoded as CopyObject's CopySource wants.
fn copy_source(obj: &ObjectRef) -> String {
    let mut key = String::new();
    for b in obj.key.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            key.push(b as char);
        } else {
            key.push_str(&format!("%{b:02X}"));
        }
    }
    match &obj.version_id {
        Some(v) => format!("{}/{key}?versionId={v}", obj.bucket),
        None => format!("{}/{key}", obj.bucket),
    }
}

impl S3Blobs {
    /// The object's bytes, or those of a `range` (`bytes=0-7`; an empty object has none).
    async fn read(&self, obj: &ObjectRef, range: Option<String>) -> Result<Vec<u8>, Error> {
        let result = self
            .client
            .get_object()
            .bucket(&obj.bucket)
            .key(&obj.key)
            .set_version_id(obj.version_id.clone())
            .set_range(range)
            .send()
            .await;
        let out = match result {
            Ok(out) => out,
            Err(e) if e.as_service_error().is_some_and(|s| s.is_no_such_key()) => {
                return Err(Error::BadInput(format!("no such object {obj}")));
            }
            // A range of an empty object is unsatisfiable (416): it has no bytes.
            Err(e) if code(&e) == Some("InvalidRange") => return Ok(vec![]),
            Err(e) => return Err(classify("s3 GetObject", e)),
        };
        // Chunk by chunk into one buffer of the object's size: the bytes are held once (a
        // collect, then a contiguous copy, held them two or three times at their peak).
        let size = usize::try_from(out.content_length.unwrap_or(0)).unwrap_or(0);
        let mut bytes = Vec::with_capacity(size);
        let mut body = out.body;
        while let Some(chunk) = body
            .try_next()
            .await
            .map_err(|e| Error::Dependency(format!("s3 GetObject body: {e}")))?
        {
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }
}

impl BlobStore for S3Blobs {
    async fn head(&self, obj: &ObjectRef) -> Result<Option<ObjectMeta>, Error> {
        let result = self
            .client
            .head_object()
            .bucket(&obj.bucket)
            .key(&obj.key)
            .set_version_id(obj.version_id.clone())
            .send()
            .await;
        match result {
            Ok(out) => Ok(Some(ObjectMeta {
                size: out.content_length().unwrap_or(0).max(0) as u64,
                version_id: out.version_id().map(str::to_string),
            })),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_not_found()) => Ok(None),
            // A HEAD of a deleted version answers 400/405 with no body; treat "gone" codes as None.
            Err(e)
                if matches!(
                    code(&e),
                    Some("NoSuchVersion" | "NoSuchKey" | "MethodNotAllowed")
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(classify("s3 HeadObject", e)),
        }
    }

    async fn get(&self, obj: &ObjectRef) -> Result<Vec<u8>, Error> {
        self.read(obj, None).await
    }

    async fn get_prefix(&self, obj: &ObjectRef, len: u64) -> Result<Vec<u8>, Error> {
        if len == 0 {
            return Ok(vec![]);
        }
        self.read(obj, Some(format!("bytes=0-{}", len - 1))).await
    }

    async fn put(
        &self,
        obj: &ObjectRef,
        body: Vec<u8>,
        content_type: &str,
    ) -> Result<Option<String>, Error> {
        let out = self
            .client
            .put_object()
            .bucket(&obj.bucket)
            .key(&obj.key)
            .content_type(content_type)
            .body(ByteStream::from(body))
            .send()
            .await
            .map_err(|e| classify_effect("s3 PutObject", e))?;
        Ok(out.version_id().map(str::to_string))
    }

    async fn copy(
        &self,
        from: &ObjectRef,
        to: &ObjectRef,
        metadata: &BTreeMap<String, String>,
    ) -> Result<(), Error> {
        self.client
            .copy_object()
            .copy_source(copy_source(from))
            .bucket(&to.bucket)
            .key(&to.key)
            .metadata_directive(MetadataDirective::Replace)
            .set_metadata(Some(metadata.clone().into_iter().collect()))
            .send()
            .await
            .map_err(|e| classify_effect("s3 CopyObject", e))?;
        Ok(())
    }

    /// Signed locally with the client's credentials (nothing is sent). The URL's host is the
    /// client's endpoint: on AWS the bucket's virtual host; with a custom endpoint (LocalStack)
    /// that endpoint, path-style, as the function's `AWS_ENDPOINT_URL` names it.
    async fn presign_get(&self, obj: &ObjectRef, ttl: Duration) -> Result<String, Error> {
        let config = PresigningConfig::expires_in(ttl)
            .map_err(|e| Error::BadInput(format!("presigned URL lifetime: {e}")))?;
        let request = self
            .client
            .get_object()
            .bucket(&obj.bucket)
            .key(&obj.key)
            .set_version_id(obj.version_id.clone())
            .presigned(config)
            .await
            .map_err(|e| classify("s3 GetObject presign", e))?;
        Ok(request.uri().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// S3 blobs at an endpoint nothing listens on, with fixed credentials.
    fn offline() -> S3Blobs {
        let conf = aws_sdk_s3::config::Builder::new()
            .behavior_version_latest()
            .region(aws_sdk_s3::config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_s3::config::Credentials::for_tests())
            .endpoint_url("http://127.0.0.1:9")
            .force_path_style(true)
            .build();
        S3Blobs {
            client: Client::from_conf(conf),
        }
    }

    #[tokio::test]
    async fn a_presigned_get_names_the_version_and_lifetime_and_is_made_without_a_request() {
        let obj = ObjectRef {
            bucket: "raw".into(),
            key: "inbox/acme/a b.pdf".into(),
            version_id: Some("3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrH".into()),
        };

        let url = offline()
            .presign_get(&obj, Duration::from_secs(300))
            .await
            .unwrap();

        assert!(
            url.starts_with("http://127.0.0.1:9/raw/inbox/acme/a%20b.pdf?"),
            "{url}"
        );
        assert!(
            url.contains("versionId=3HL4kqtJlcpXroDTDmJ%2BrmSpXd3dIbrH"),
            "{url}"
        );
        assert!(url.contains("X-Amz-Expires=300"), "{url}");
        assert!(url.contains("X-Amz-Signature="), "{url}");
    }

    #[tokio::test]
    async fn a_lifetime_past_a_week_is_refused() {
        let obj = ObjectRef {
            bucket: "raw".into(),
            key: "k".into(),
            version_id: None,
        };

        let refused = offline()
            .presign_get(&obj, Duration::from_secs(8 * 24 * 3600))
            .await;

        assert!(matches!(refused, Err(Error::BadInput(_))), "{refused:?}");
    }

    #[test]
    fn copy_source_encodes_spaces_plus_and_unicode_but_keeps_slashes() {
        let obj = ObjectRef {
            bucket: "raw".into(),
            key: "inbox/acme/a b+c/é.pdf".into(),
            version_id: Some("v1".into()),
        };
        assert_eq!(
            copy_source(&obj),
            "raw/inbox/acme/a%20b%2Bc/%C3%A9.pdf?versionId=v1"
        );
    }
}
