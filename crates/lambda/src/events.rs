//! The detail of S3's EventBridge "Object Created" event, which `aws_lambda_events` does not
//! define (it has S3's own notification format only). Field names as S3 sends them:
//! <https://docs.aws.amazon.com/AmazonS3/latest/userguide/ev-events.html>.

use aws_lambda_events::eventbridge::EventBridgeEvent;
use serde::{Deserialize, Serialize};

/// An inbox upload as EventBridge delivers it.
pub type ObjectCreatedEvent = EventBridgeEvent<ObjectCreatedDetail>;

/// `detail` of an "Object Created" event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ObjectCreatedDetail {
    /// The detail's schema version (`"0"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The bucket.
    pub bucket: Bucket,
    /// The object.
    pub object: Object,
    /// S3's request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The account that made the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requester: Option<String>,
    /// Where the request came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ip_address: Option<String>,
    /// The API that created the object (`PutObject`, `CopyObject`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The event's bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Its name.
    pub name: String,
}

/// The created object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Object {
    /// The key, URL-encoded as S3 sends it.
    pub key: String,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The ETag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The version (absent in an unversioned bucket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    /// Orders events of one key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequencer: Option<String>,
}
