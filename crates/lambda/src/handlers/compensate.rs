//! compensate: undoes a run's saga in reverse order with the ids of what committed (uncertain
//! effects looked up first), from the state machine's Catch after the run's event was published
//! (the consumer refused it, its receipt did not come in time, or the wait failed), and records
//! how the run ended. See `docket_core::steps::saga::compensate_run`.

use docket_core::model::run::RunInput;
use docket_core::model::step::Step;
use docket_core::ports::{HasDownstream, HasEvents, HasJournal, HasOutbox, HasStore};
use docket_core::steps::{saga, Context};
use serde::Deserialize;
use serde_json::Value;

use super::route::CaughtError;
use crate::{run_step, Failure};

/// What compensate runs on: the shared adapters, the saga's and the consumer's function.
pub type Deps = crate::Deps<crate::deps::Compensation>;

/// What the state machine sends (`Compensate`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Request {
    /// Compensate the run after the caught error.
    Compensate {
        /// The run.
        run: RunInput,
        /// What the Catch caught; its name is the compensation's reason.
        error: CaughtError,
    },
}

/// Compensates, and answers `{"end": "compensated" | "compensation_failed" | "not-required",
/// "alreadyEnded": bool}`.
pub async fn handle(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents + HasDownstream),
    ctx: &Context,
    request: Request,
) -> Result<Value, Failure> {
    match request {
        Request::Compensate { run, error } => {
            run_step("compensate", Step::Compensate, &run, async {
                let done = saga::compensate_run(ports, ctx, &run, &error.error).await?;
                let end = done.end.name();
                let already_ended = done.already_ended;
                tracing::info!(end, already_ended, reason = %error.error, "compensated");
                Ok(done)
            })
            .await
        }
    }
}
