//! One invocation, the same way for every function: the payload parsed into the function's
//! request type, each step run inside the span of its ids, a taxonomy error reported under its
//! stable name (the `errorType` the state machine's Retry/Catch match), the answer serialized.

use std::borrow::Cow;
use std::future::Future;

use docket_core::model::run::RunInput;
use docket_core::model::step::Step;
use docket_core::ports::HasConfigs;
use docket_core::steps::config::configured;
use docket_core::steps::Context;
use docket_core::Error;
use lambda_runtime::{service_fn, Diagnostic, LambdaEvent};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use tracing::Span;

use crate::span;

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

/// Serves the function's invocations until the runtime stops: each payload parsed as `R` (one
/// that does not parse is `Fatal.BadInput`), then answered by `handler`.
pub async fn serve<R, F, Fut>(handler: F) -> Result<(), lambda_runtime::Error>
where
    R: DeserializeOwned,
    F: Fn(R) -> Fut,
    Fut: Future<Output = Result<Value, Failure>>,
{
    let handler = &handler;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
        handler(parse(event.payload)?).await
    }))
    .await
}

/// As [`serve`], with each invocation's deadline for a handler that must stop in time (one that
/// works through a list, as reprocess does through a batch).
pub async fn serve_with_deadline<R, F, Fut>(handler: F) -> Result<(), lambda_runtime::Error>
where
    R: DeserializeOwned,
    F: Fn(R, OffsetDateTime) -> Fut,
    Fut: Future<Output = Result<Value, Failure>>,
{
    let handler = &handler;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
        let deadline = OffsetDateTime::from(event.context.deadline());
        handler(parse(event.payload)?, deadline).await
    }))
    .await
}

/// Runs `work` for `run` inside the span `name` (a function's action, e.g. `ocr.poll`) with the
/// run's ids and the operation id of `step`, and serializes its answer.
pub async fn run_step<T: Serialize>(
    name: &str,
    step: Step,
    run: &RunInput,
    work: impl Future<Output = Result<T, Error>>,
) -> Result<Value, Failure> {
    let op = step.operation(&run.run_id);
    let span = span(
        name,
        run.document_id.as_str(),
        run.run_id.as_str(),
        op.as_str(),
    );
    answer(&traced(span, work).await?)
}

/// `ctx` under the config `run` started under (`docket_core::steps::config`), so that every
/// step of a run runs under its run's config whatever is deployed now; a failure to find it is
/// logged in the span `name` with the run's ids.
pub async fn run_context<'c>(
    ports: &impl HasConfigs,
    ctx: &'c Context,
    name: &str,
    run: &RunInput,
) -> Result<Cow<'c, Context>, Failure> {
    let span = span(name, run.document_id.as_str(), run.run_id.as_str(), "-");
    traced(span, configured(ports, ctx, &run.config_fingerprint)).await
}

/// Runs a handler's work inside `span`, so that every line it logs (its error too) carries the
/// span's ids, and maps the taxonomy error to what the runtime reports.
pub async fn traced<T>(
    span: Span,
    work: impl Future<Output = Result<T, Error>>,
) -> Result<T, Failure> {
    let work = async move {
        work.await.map_err(|e| {
            tracing::error!(error = e.name(), family = ?e.family(), "step failed: {e}");
            Failure(e)
        })
    };
    tracing::Instrument::instrument(work, span).await
}

/// Parses a step's payload, naming what is wrong (never echoing the payload itself).
pub fn parse<T: DeserializeOwned>(payload: Value) -> Result<T, Error> {
    serde_json::from_value(payload).map_err(|e| Error::BadInput(format!("payload: {e}")))
}

/// Serializes a step's answer.
pub fn answer<T: Serialize>(value: &T) -> Result<Value, Failure> {
    serde_json::to_value(value).map_err(|e| Failure(Error::Internal(e.to_string())))
}
