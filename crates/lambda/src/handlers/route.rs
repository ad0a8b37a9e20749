//! route: writes an approved run's result and makes it the document's current one (or records
//! it as stale); `action: fail` records a run that ended in a technical failure, `action: reject`
//! one a reviewer rejected. See `docket_core::steps::route`.

use docket_core::model::run::{ObjectRef, RunInput};
use docket_core::model::step::Step;
use docket_core::ports::{HasBlobs, HasEvents, HasJournal, HasOutbox, HasStore};
use docket_core::steps::review::Reviewed;
use docket_core::steps::{route, Context};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{run_step, Failure};

/// What route runs on: the shared adapters and its saga's.
pub type Deps = crate::Deps<crate::deps::Saga>;

/// What the state machine sends (`Route`, `RouteReviewed`, `RecordFailure`, `RecordRejected`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Request {
    /// Route an approved run.
    Route {
        /// The run.
        run: RunInput,
        /// Its validation report.
        report: ObjectRef,
        /// The reviewer's approval (the review Task's output), for a reviewed run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        review: Option<Reviewed>,
    },
    /// Record a technical failure.
    Fail {
        /// The run.
        run: RunInput,
        /// What the Catch caught.
        error: CaughtError,
    },
    /// A reviewer rejected the run.
    Reject {
        /// The run.
        run: RunInput,
    },
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

/// Routes, or records the failure or rejection.
pub async fn handle(
    ports: &(impl HasBlobs + HasStore + HasJournal + HasOutbox + HasEvents),
    ctx: &Context,
    request: Request,
) -> Result<Value, Failure> {
    match request {
        Request::Route {
            run,
            report,
            review,
        } => {
            run_step("route", Step::Route, &run, async {
                let routed = route::run(ports, ctx, &run, &report, review.as_ref()).await?;
                tracing::info!(status = %routed.status, "routed");
                Ok(routed)
            })
            .await
        }
        Request::Fail { run, error } => {
            let work = route::fail(ports, ctx, &run, &error.error);
            run_step("route.fail", Step::Fail, &run, work).await?;
            Ok(json!({"status": "failed", "error": error.error}))
        }
        Request::Reject { run } => {
            let work = route::reject(ports, ctx, &run);
            run_step("route.reject", Step::Reject, &run, work).await?;
            Ok(json!({"status": "rejected"}))
        }
    }
}
