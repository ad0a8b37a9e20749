//! The plumbing every docket Lambda shares, so each `main.rs` stays a few lines: JSON logs, the
//! step context and adapters built once from the environment, and the error mapping that makes a
//! taxonomy name the Lambda `errorType` (what the state machine's Retry/Catch match).

use docket_aws::dynamodb::DynamoStore;
use docket_aws::ledger::DynamoLedger;
use docket_aws::s3::S3Blobs;
use docket_core::config::PipelineConfig;
use docket_core::steps::{Clock, Context, Layout, RunInput};
use docket_core::Error;
use lambda_runtime::Diagnostic;
use tracing::Span;

/// A step error as the Lambda runtime reports it: `errorType` is the stable name.
#[derive(Debug)]
pub struct Failure(pub Error);

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure(e)
    }
}

impl From<Failure> for Diagnostic {
    fn from(Failure(e): Failure) -> Diagnostic {
        Diagnostic {
            error_type: e.name().to_string(),
            error_message: e.to_string(),
        }
    }
}

/// JSON logs on stdout (CloudWatch Logs); level from `RUST_LOG` (default info). Every line
/// carries the fields of the current span: documentId, runId and operationId (see [`span`]).
///
/// The runtime's own line for a handler error (`lambda_runtime::layers::panic`, logged outside
/// the handler's span, so without the ids) is switched off: [`traced`] logs every error inside
/// the span, and a panic is logged by the hook installed here, on the panicking thread, inside
/// the span of the step that panicked.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
        .add_directive(
            "lambda_runtime::layers::panic=off"
                .parse()
                .expect("a valid directive"),
        );
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()));
        tracing::error!(location, "handler panicked: {info}");
    }));
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(true)
        .with_span_list(false)
        .with_target(false)
        .without_time()
        .init();
}

/// The span a step runs in, carrying the ids every log line must have.
pub fn span(step: &str, run: Option<&RunInput>, operation: Option<&str>) -> Span {
    tracing::info_span!(
        "step",
        step,
        documentId = run.map(|r| r.document_id.as_str()).unwrap_or(""),
        runId = run.map(|r| r.run_id.as_str()).unwrap_or(""),
        operationId = operation.unwrap_or(""),
    )
}

/// Runs a handler's work inside `span`, so that every line it logs (its error too) carries the
/// span's ids, and maps the taxonomy error to what the runtime reports.
pub async fn traced<T>(
    span: Span,
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Failure> {
    let work = async move {
        work.await.map_err(|e| {
            tracing::error!(error = e.name(), family = ?e.family(), "step failed: {e}");
            Failure(e)
        })
    };
    tracing::Instrument::instrument(work, span).await
}

/// What every step needs, built once per execution environment.
pub struct Deps {
    /// The SDK config (for adapters a step adds).
    pub sdk: aws_config::SdkConfig,
    /// S3.
    pub blobs: S3Blobs,
    /// DynamoDB.
    pub store: DynamoStore,
    /// The operation ledger (its table is also the store's, for `Change::Ledger` writes).
    pub ledger: DynamoLedger,
    /// Layout, pipeline config, actor, clock.
    pub ctx: Context,
    /// Injected faults (none unless explicitly configured), for the adapters a step adds.
    pub faults: docket_aws::Faults,
}

impl Deps {
    /// From the environment: `RAW_BUCKET`, `NORMALIZED_BUCKET`, `DERIVED_BUCKET`, the table
    /// names, `DOCKET_ACTOR` (default `docket/<function name>`), and the SDK fault injection of
    /// `docket_aws::faults` when (and only when) `DOCKET_FAULT_INJECTION=1`.
    pub async fn from_env() -> Result<Deps, Error> {
        let sdk = docket_aws::load_config().await;
        let actor = std::env::var("DOCKET_ACTOR").unwrap_or_else(|_| {
            format!(
                "docket/{}",
                std::env::var("AWS_LAMBDA_FUNCTION_NAME").unwrap_or_else(|_| "unknown".into())
            )
        });
        let ctx = Context {
            layout: Layout {
                raw_bucket: docket_aws::env("RAW_BUCKET")?,
                normalized_bucket: docket_aws::env("NORMALIZED_BUCKET")?,
                derived_bucket: docket_aws::env("DERIVED_BUCKET")?,
            },
            config: PipelineConfig::builtin(),
            actor,
            clock: Clock::System,
        };
        let faults = docket_aws::configured_faults()?;
        let store = DynamoStore::from_env(&sdk)?;
        let store = DynamoStore::with_faults(&sdk, store.tables().clone(), &faults);
        Ok(Deps {
            blobs: S3Blobs::with_faults(&sdk, &faults),
            ledger: DynamoLedger::new(store.client().clone(), &store.tables().ledger),
            store,
            faults,
            sdk,
            ctx,
        })
    }
}

/// Parses a step's payload, naming what is wrong (never echoing the payload itself).
pub fn parse<T: serde::de::DeserializeOwned>(payload: serde_json::Value) -> Result<T, Error> {
    serde_json::from_value(payload).map_err(|e| Error::BadInput(format!("payload: {e}")))
}

/// Serializes a step's answer.
pub fn answer<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(value).map_err(|e| Failure(Error::Internal(e.to_string())))
}
