//! validate: extraction and validation of a run's normalized OCR; the report goes to the derived
//! bucket. It runs in a Task with a token: it ends the wait itself for a document it approves,
//! and opens the review task of one that needs a person, whose decision ends it. See
//! `docket_core::steps::validate`.

use docket_core::error::ErrorKind;
use docket_core::model::run::{ObjectRef, RunInput, TaskToken};
use docket_core::model::step::Step;
use docket_core::ports::{HasBlobs, HasCallback, HasConfigs, HasReviews, HasStore};
use docket_core::steps::validate::{Wait, NEEDS_REVIEW};
use docket_core::steps::{validate, Context};
use serde::Deserialize;
use serde_json::Value;

use crate::metrics::{self, Metric};
use crate::{run_context, run_step, Failure};

/// What validate runs on: the shared adapters, the review tasks and the callback.
pub type Deps = crate::Deps<crate::deps::Review>;

/// What the state machine sends (`Validate`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The run.
    pub run: RunInput,
    /// Its normalized OCR.
    pub normalized: ObjectRef,
    /// The waiting Task's token (`$$.Task.Token`; serialized by the fixture tests only).
    #[cfg_attr(test, serde(serialize_with = "crate::fixtures::expose_token"))]
    pub token: TaskToken,
    /// How long the Task waits (the execution input's `reviewWaitSeconds`).
    #[serde(rename = "timeoutSeconds")]
    pub timeout_seconds: i64,
}

/// Validates the run's OCR, then ends the Task's wait or opens the run's review task.
pub async fn handle(
    ports: &(impl HasBlobs + HasStore + HasConfigs + HasReviews + HasCallback),
    ctx: &Context,
    request: Request,
) -> Result<Value, Failure> {
    let Request {
        run,
        normalized,
        token,
        timeout_seconds,
    } = request;
    let wait = Wait {
        token,
        timeout_seconds,
    };
    let ctx = &*run_context(ports, ctx, "validate", &run).await?;
    run_step("validate", Step::Validate, &run, async {
        let validated = validate::validate_and_wait(ports, ctx, &run, &normalized, wait).await;
        let of = metrics::Of::run(&run, Step::Validate);
        match &validated {
            Ok(v) if v.decision == NEEDS_REVIEW => {
                metrics::emit(Metric::DocumentsToReview, 1.0, of, &[])
            }
            Err(e) if e.kind() == ErrorKind::DocumentInvalid => {
                metrics::emit(Metric::DocumentsInvalid, 1.0, of, &[])
            }
            _ => {}
        }
        let validated = validated?;
        // Reason codes only (`low_confidence`, ...): never a field's value.
        tracing::info!(decision = %validated.decision, reasons = ?validated.reasons, "validated");
        Ok(validated)
    })
    .await
}
