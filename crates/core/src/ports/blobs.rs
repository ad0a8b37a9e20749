//! Object storage (S3).

use std::collections::BTreeMap;
use std::future::Future;

use crate::model::run::ObjectRef;
use crate::Error;

/// What a HEAD of an object tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// Size in bytes.
    pub size: u64,
    /// The version id, on a versioned bucket.
    pub version_id: Option<String>,
}

/// Object storage.
pub trait BlobStore: Send + Sync {
    /// The object's metadata, or `None` when it does not exist.
    fn head(
        &self,
        obj: &ObjectRef,
    ) -> impl Future<Output = Result<Option<ObjectMeta>, Error>> + Send;
    /// The object's bytes (`Error::BadInput` when it does not exist).
    fn get(&self, obj: &ObjectRef) -> impl Future<Output = Result<Vec<u8>, Error>> + Send;
    /// Writes an object; returns its version id on a versioned bucket.
    fn put(
        &self,
        obj: &ObjectRef,
        body: Vec<u8>,
        content_type: &str,
    ) -> impl Future<Output = Result<Option<String>, Error>> + Send;
    /// Server-side copy, with metadata (`x-amz-meta-*`) on the copy.
    fn copy(
        &self,
        from: &ObjectRef,
        to: &ObjectRef,
        metadata: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<(), Error>> + Send;
}
