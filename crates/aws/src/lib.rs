//! AWS adapters for the ports of `docket-core`: one module per service, each translating SDK
//! types and errors into docket's own. Clients come from the default chain and honour
//! `AWS_ENDPOINT_URL`, so the same binary talks to AWS or to LocalStack.

pub mod admission;
#[cfg(test)]
mod capture;
pub mod config;
pub mod digest;
pub mod downstream;
pub mod dynamodb;
pub mod errors;
pub mod events;
// Fault injection exists only with the `fault-injection` feature (tests, local packaging); the
// AWS build gets the stand-in that injects nothing and refuses DOCKET_FAULT_INJECTION=1.
#[cfg(feature = "fault-injection")]
pub mod faults;
#[cfg(not(feature = "fault-injection"))]
#[path = "faults/off.rs"]
pub mod faults;
mod item;
pub mod ledger;
pub mod ocr_waits;
pub mod payable;
pub mod review;
pub mod s3;
pub mod saga;
pub mod sfn;
pub mod sqs;
#[cfg(test)]
mod stand_in;
pub mod textract;

use std::sync::OnceLock;

use aws_config::{BehaviorVersion, SdkConfig};

pub use downstream::LambdaDownstream;
pub use faults::Faults;

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

/// The faults this process injects into its SDK clients: none unless `DOCKET_FAULT_INJECTION=1`,
/// then the rules in `DOCKET_FAULTS` (see [`faults`]); without the `fault-injection` feature,
/// `DOCKET_FAULT_INJECTION=1` is an error. Read once; every caller gets a clone of
/// the same value, so "the n-th call" counts across all clients of the process.
pub fn configured_faults() -> Result<Faults, docket_core::Error> {
    static CONFIGURED: OnceLock<Result<Faults, String>> = OnceLock::new();
    CONFIGURED
        .get_or_init(|| {
            Faults::from_env()
                .map(Option::unwrap_or_default)
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(docket_core::Error::Internal)
}

/// Installs `faults` on an SDK client's config builder (S3, DynamoDB, Textract, Step
/// Functions, EventBridge, Lambda); with [`Faults::none`] the builder is returned unchanged.
pub fn with_faults<B: faults::InstallFaults>(builder: B, faults: &Faults) -> B {
    builder.install_faults(faults)
}

/// A DynamoDB client on `config` with `faults` injected (none outside tests and local runs),
/// as every DynamoDB adapter builds it, with [`dynamodb_retry`]'s retries.
pub(crate) fn dynamodb_client(
    config: &aws_config::SdkConfig,
    faults: &Faults,
) -> aws_sdk_dynamodb::Client {
    let builder = aws_sdk_dynamodb::config::Builder::from(config).retry_config(dynamodb_retry());
    aws_sdk_dynamodb::Client::from_conf(with_faults(builder, faults).build())
}

/// How the SDK retries a DynamoDB request: [`DYNAMODB_MAX_ATTEMPTS`] attempts from a 50 ms first
/// backoff (doubling, full jitter, at most 1 s apart), where the SDK's default is 3 attempts from
/// 1 s. DynamoDB refuses requests over a partition's throughput for a moment
/// (`ProvisionedThroughputExceededException`, `ThrottlingException`) and its guide asks
/// clients to retry such refusals with exponential backoff from tens of milliseconds
/// ("Error retries and exponential backoff", Amazon DynamoDB Developer Guide). A step makes a
/// dozen or more requests an attempt; with 3 attempts a request, a throttle on 30 % of them
/// failed about a third of attempts (2.7 % of requests), which used up the state machine's
/// retries of a run now and then (`tests/soak/throttling.rs`). With 8, 0.007 % of requests
/// fail; the waits add up to at most 3.6 s, well within every function's timeout.
fn dynamodb_retry() -> aws_sdk_dynamodb::config::retry::RetryConfig {
    aws_sdk_dynamodb::config::retry::RetryConfig::standard()
        .with_max_attempts(DYNAMODB_MAX_ATTEMPTS)
        .with_initial_backoff(std::time::Duration::from_millis(50))
        .with_max_backoff(std::time::Duration::from_secs(1))
}

/// How many times the SDK sends a DynamoDB request before it gives up ([`dynamodb_retry`]).
pub(crate) const DYNAMODB_MAX_ATTEMPTS: u32 = 8;
