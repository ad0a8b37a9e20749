//! compensate: undoes a run's saga in reverse order with the ids of what committed (uncertain
//! effects looked up first), from the state machine's Catch after the run's event was published
//! (the consumer refused it, its receipt did not come in time, or the wait failed), and records
//! how the run ended. See `docket_core::steps::saga::compensate_run`. `action: retract` is an
//! operator's withdrawal of a document's accepted result (`docket retract`; only principals
//! allowed `lambda:InvokeFunction` on this function can ask: IAM is the check, and the audit
//! log names this function as the actor, never a caller-supplied name).

use docket_core::error::ErrorKind;
use docket_core::ids::DocumentId;
use docket_core::model::run::RunInput;
use docket_core::model::step::Step;
use docket_core::ports::{HasConfigs, HasDownstream, HasEvents, HasJournal, HasOutbox, HasStore};
use docket_core::saga::SagaEnd;
use docket_core::steps::{saga, Context};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::run_step;
use crate::{answer, run_context, span, traced, Failure};

/// What compensate runs on: the shared adapters, the saga's and the consumer's function.
pub type Deps = crate::Deps<crate::deps::Compensation>;

/// What the state machine sends (`Compensate`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Request {
    /// Compensate the run after the caught error.
    Compensate {
        /// The run (boxed: a request is parsed once, and the other variant is small).
        run: Box<RunInput>,
        /// What the Catch caught; its name is the compensation's reason.
        error: CaughtError,
    },
    /// Withdraw the document's accepted result (`docket retract`).
    Retract {
        /// The document.
        #[serde(rename = "documentId")]
        document_id: DocumentId,
        /// Why (the operator's words; recorded in the journal and the audit chain, not logged).
        reason: String,
    },
}

/// Compensates, and answers [`Ended`]: `{"end": "compensated" | "compensation_failed" |
/// "not-required", "alreadyEnded": bool, "error": name}`.
pub async fn handle(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents + HasDownstream + HasConfigs),
    ctx: &Context,
    request: Request,
) -> Result<Value, Failure> {
    match request {
        Request::Compensate { run, error } => {
            let ctx = &*run_context(ports, ctx, "compensate", &run).await?;
            run_step("compensate", Step::Compensate, &run, async {
                let done = saga::compensate_run(ports, ctx, &run.run_id, &error.error).await?;
                let end = done.end.name();
                let already_ended = done.already_ended;
                tracing::info!(end, already_ended, reason = %error.error, "compensated");
                obligation(done.end, already_ended);
                let error = ErrorKind::of_caught(&error.error).name();
                Ok(Ended { done, error })
            })
            .await
        }
        Request::Retract {
            document_id,
            reason,
        } => {
            let span = span("compensate.retract", document_id.as_str(), "-", "-");
            let work = saga::retract(ports, ctx, &document_id, &reason);
            let retraction = traced(span.clone(), work).await?;
            span.in_scope(|| {
                let (status, run) = (&retraction.status, retraction.run_id.as_ref());
                tracing::info!(status, run = run.map(|r| r.as_str()), "retract");
                if let Some(end) = retraction.end {
                    obligation(end, retraction.already_ended);
                }
            });
            answer(&retraction)
        }
    }
}

/// What the `Compensate` Task answers: how the saga ended, and the name the run's execution
/// fails with (its Fail states read `error`): the caught error's, in the taxonomy
/// (`ErrorKind::of_caught`), since a Fail state may not end with a caught `States.Timeout`.
#[derive(Debug, Serialize)]
pub struct Ended {
    /// How the saga ended.
    #[serde(flatten)]
    pub done: saga::Compensation,
    /// The execution's error name.
    pub error: &'static str,
}

/// The one line the stack's `CompensationFailedMetric` counts (its filter matches the field
/// `obligation`): logged once, when a compensation has just failed for good.
fn obligation(end: SagaEnd, already_ended: bool) {
    if end == SagaEnd::CompensationFailed && !already_ended {
        tracing::error!(
            obligation = end.name(),
            "a compensation failed for good: an open obligation (docket ops unresolved)"
        );
    }
}

/// What a Catch puts at `ResultPath` (`Error`, `Cause`); only the name is recorded.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct CaughtError {
    /// The error name.
    #[serde(rename = "Error")]
    pub error: String,
    /// Its details; not recorded (only ids and names go into the audit log).
    #[serde(rename = "Cause", default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Value>,
}
