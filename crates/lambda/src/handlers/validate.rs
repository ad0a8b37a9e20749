//! validate: extraction and validation of a run's normalized OCR; the report goes to the derived
//! bucket. See `docket_core::steps::validate`.

use docket_core::model::run::ObjectRef;
use docket_core::model::run::RunInput;
use docket_core::steps::validate;
use serde::Deserialize;
use serde_json::Value;

use crate::{run_step, Failure};

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
pub async fn handle(deps: &Deps, Request { run, normalized }: Request) -> Result<Value, Failure> {
    let work = validate::run(deps, &deps.ctx, &run, &normalized);
    run_step("validate", "validate", &run, work).await
}
