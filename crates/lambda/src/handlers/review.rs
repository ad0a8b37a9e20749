//! review-callback: the state machine's side of review.
//!
//! Step Functions invokes it from the `waitForTaskToken` Task to open a review task
//! (`action: open`, with the token), and from the Task's timeout Catch to escalate it
//! (`action: escalate`). Nothing else may: on AWS only the state machine's role may invoke it
//! (it has no resource policy and no other role is granted `lambda:InvokeFunction` on it), and
//! a payload with any field the state machine does not send — a function URL request's
//! `requestContext` for one — is refused as `Fatal.BadInput`. Reviewers have their own function,
//! review-api ([`crate::review_api`]).
//!
//! See `docket_core::steps::review` for what each does.

use docket_core::model::run::{ObjectRef, RunInput, TaskToken};
use docket_core::model::step::Step;
use docket_core::ports::{HasBlobs, HasConfigs, HasReviews, HasStore};
use docket_core::steps::{review, Context};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::deps::Review;
use crate::metrics::{self, Metric};
use crate::{parse, run_context, run_step, Failure};

/// What review runs on.
pub type Deps = crate::Deps<Review>;

/// What the state machine sends (`OpenReview`, `Escalate`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Open (or find) the run's review task; the execution waits on `token`.
    Open {
        /// The run.
        run: RunInput,
        /// Its validation report.
        report: ObjectRef,
        /// Its normalized OCR.
        ocr: ObjectRef,
        /// The waiting Task's token (serialized by the fixture tests only).
        #[cfg_attr(test, serde(serialize_with = "crate::fixtures::expose_token"))]
        token: TaskToken,
        /// How long the Task waits.
        #[serde(rename = "timeoutSeconds")]
        timeout_seconds: i64,
    },
    /// The wait timed out: escalate the task.
    Escalate {
        /// The run.
        run: RunInput,
    },
}

/// Opens or escalates a task for the state machine; any other payload is `Fatal.BadInput`.
pub async fn handle(
    ports: &(impl HasBlobs + HasStore + HasReviews + HasConfigs),
    ctx: &Context,
    payload: Value,
) -> Result<Value, Failure> {
    workflow(ports, ctx, parse(payload)?).await
}

/// Opens or escalates the run's review task.
pub async fn workflow(
    ports: &(impl HasBlobs + HasStore + HasReviews + HasConfigs),
    ctx: &Context,
    request: Request,
) -> Result<Value, Failure> {
    match request {
        Request::Open {
            run,
            report,
            ocr,
            token,
            timeout_seconds,
        } => {
            let ctx = &*run_context(ports, ctx, "review.open", &run).await?;
            run_step("review.open", Step::Review, &run, async {
                let open = review::OpenRequest {
                    report,
                    ocr,
                    token,
                    timeout_seconds,
                };
                let task = review::open(ports, ctx, &run, open).await?;
                tracing::info!(taskId = %task.task_id, status = task.status.as_str(), "review task open");
                Ok(json!({"taskId": task.task_id}))
            })
            .await
        }
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
