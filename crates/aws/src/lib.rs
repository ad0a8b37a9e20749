//! AWS adapters for the ports of `docket-core`: one module per service, each translating SDK
//! types and errors into docket's own. Clients come from the default chain and honour
//! `AWS_ENDPOINT_URL`, so the same binary talks to AWS or to LocalStack.

pub mod dynamodb;
pub mod errors;
pub mod s3;
pub mod sfn;
pub mod textract;

use aws_config::{BehaviorVersion, SdkConfig};

/// Loads the SDK config from the environment (credentials chain, region, `AWS_ENDPOINT_URL`).
pub async fn load_config() -> SdkConfig {
    aws_config::defaults(BehaviorVersion::latest()).load().await
}

/// Whether a custom endpoint (LocalStack) is configured: S3 then uses path-style addressing,
/// since `<bucket>.localhost` names need DNS that an offline machine does not have.
pub fn custom_endpoint() -> bool {
    std::env::var_os("AWS_ENDPOINT_URL").is_some()
}

/// Reads a required environment variable, naming it when it is missing.
pub fn env(name: &str) -> Result<String, docket_core::Error> {
    std::env::var(name).map_err(|_| {
        docket_core::Error::Internal(format!("environment variable {name} is not set"))
    })
}
