//! Shared helpers: SDK configuration for LocalStack, unique names, the Chaos API.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_config::{BehaviorVersion, Region, SdkConfig};

/// The LocalStack endpoint the tests talk to (`AWS_ENDPOINT_URL`, default 127.0.0.1:4566).
pub fn endpoint() -> String {
    std::env::var("AWS_ENDPOINT_URL").unwrap_or_else(|_| "http://127.0.0.1:4566".to_string())
}

/// SDK config for LocalStack in the default test region (us-east-1).
pub async fn aws() -> SdkConfig {
    aws_in("us-east-1").await
}

/// SDK config for LocalStack in `region`. Tests that inject faults use their own region so that
/// region-scoped chaos rules cannot disturb tests running at the same time.
pub async fn aws_in(region: &str) -> SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(endpoint())
        .region(Region::new(region.to_string()))
        .credentials_provider(aws_sdk_s3::config::Credentials::new(
            "test",
            "test",
            None,
            None,
            "localstack",
        ))
        .load()
        .await
}

/// S3 client with path-style addressing (LocalStack serves buckets on the path).
pub fn s3(config: &SdkConfig) -> aws_sdk_s3::Client {
    let conf = aws_sdk_s3::config::Builder::from(config)
        .force_path_style(true)
        .build();
    aws_sdk_s3::Client::from_conf(conf)
}

/// A name no other test (or earlier run against the same LocalStack) uses.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{prefix}-{:x}-{}",
        nanos % 0xffff_ffff,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The workspace root (tests run with the package dir `tests/` as cwd).
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}
