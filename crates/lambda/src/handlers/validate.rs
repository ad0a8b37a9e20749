//! validate: extraction and validation of a run's normalized OCR; the report goes to the derived
//! bucket. See `docket_core::steps::validate`.

use docket_core::error::ErrorKind;
use docket_core::model::run::{ObjectRef, RunInput};
use docket_core::model::step::Step;
use docket_core::ports::{HasBlobs, HasConfigs, HasStore};
use docket_core::steps::validate::NEEDS_REVIEW;
use docket_core::steps::{validate, Context};
use serde::Deserialize;
use serde_json::Value;

use crate::metrics::{self, Metric};
use crate::{run_context, run_step, Failure};

/// What validate runs on.
pub type Deps = crate::Deps;

/// What the state machine sends (`Validate`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct Request {
    /// The run.
    pub run: RunInput,
    /// Its normalized OCR.
    pub normalized: ObjectRef,
}

/// Validates the run's OCR.
pub async fn handle(
    ports: &(impl HasBlobs + HasStore + HasConfigs),
    ctx: &Context,
    Request { run, normalized }: Request,
) -> Result<Value, Failure> {
    let ctx = &*run_context(ports, ctx, "validate", &run).await?;
    run_step("validate", Step::Validate, &run, async {
        let validated = validate::run(ports, ctx, &run, &normalized).await;
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
