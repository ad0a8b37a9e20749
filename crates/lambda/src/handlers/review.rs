//! review-callback: the state machine's side of review.
//!
//! Step Functions invokes it from the Validate Task's timeout Catch to escalate a review task
//! whose wait ran out (`action: escalate`; validate opens the task, with the Task's token:
//! `handlers::validate`). Nothing else may: on AWS only the state machine's role may invoke it
//! (it has no resource policy and no other role is granted `lambda:InvokeFunction` on it), and
//! a payload with any field the state machine does not send — a function URL request's
//! `requestContext` for one — is refused as `Fatal.BadInput`. Reviewers have their own function,
//! review-api ([`crate::review_api`]).
//!
//! See `docket_core::steps::review` for what each does.

use docket_core::model::run::RunInput;
use docket_core::model::step::Step;
use docket_core::ports::{HasConfigs, HasReviews, HasStore};
use docket_core::steps::{review, Context};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::deps::Review;
use crate::metrics::{self, Metric};
use crate::{parse, run_context, run_step, Failure};

/// What review runs on.
pub type Deps = crate::Deps<Review>;

/// What the state machine sends (`Escalate`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// The wait timed out: escalate the task.
    Escalate {
        /// The run.
        run: RunInput,
    },
}

/// Escalates a task for the state machine; any other payload is `Fatal.BadInput`.
pub async fn handle(
    ports: &(impl HasStore + HasReviews + HasConfigs),
    ctx: &Context,
    payload: Value,
) -> Result<Value, Failure> {
    workflow(ports, ctx, parse(payload)?).await
}

/// Escalates the run's review task.
pub async fn workflow(
    ports: &(impl HasStore + HasReviews + HasConfigs),
    ctx: &Context,
    request: Request,
) -> Result<Value, Failure> {
    match request {
        Request::Escalate { run } => {
            let ctx = &*run_context(ports, ctx, "review.escalate", &run).await?;
            let work = review::escalate(ports, ctx, &run);
            run_step("review.escalate", Step::Escalate, &run, work).await?;
            let of = metrics::Of::run(&run, Step::Escalate);
            metrics::emit(Metric::ReviewsEscalated, 1.0, of, &[]);
            Ok(json!({"status": "escalated"}))
        }
    }
}
