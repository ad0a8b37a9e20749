//! Object storage (S3).

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

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
    /// The object's first `len` bytes, all of a shorter one (`Error::BadInput` when it does not
    /// exist): enough to tell its type without reading it whole.
    fn get_prefix(
        &self,
        obj: &ObjectRef,
        len: u64,
    ) -> impl Future<Output = Result<Vec<u8>, Error>> + Send;
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
    /// A URL that GETs exactly this object (its version, when `obj` names one) for `ttl`, with
    /// no other credential: whoever holds it may read the object until it expires, so it is
    /// never logged. It is only as good as the signer's own right to read the object; it is made
    /// without a request (a missing object answers 404 when the URL is fetched).
    fn presign_get(
        &self,
        obj: &ObjectRef,
        ttl: Duration,
    ) -> impl Future<Output = Result<String, Error>> + Send;
}
