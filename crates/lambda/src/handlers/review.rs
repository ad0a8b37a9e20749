//! review: the review-callback function.
//!
//! - Step Functions invokes it from the `waitForTaskToken` Task to open a review task
//!   (`action: open`, with the token), and from the Task's timeout Catch to escalate it
//!   (`action: escalate`).
//! - Reviewers reach it through its function URL: [`crate::review_api`].
//!
//! See `docket_core::steps::review` for what each does.

use docket_core::model::run::{ObjectRef, RunInput, TaskToken};
use docket_core::model::step::Step;
use docket_core::ports::{HasBlobs, HasCallback, HasReviews, HasStore};
use docket_core::steps::{review, Context};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::deps::Review;
use crate::{parse, review_api, run_step, Failure};

/// What review runs on.
pub type Deps = crate::Deps<Review>;

/// What the state machine sends (`OpenReview`, `Escalate`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case")]
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

/// A function URL request goes to the review API (which answers every request, errors included,
/// with an HTTP response); anything else is the state machine's. `role_prefix` names the
/// reviewers' roles (see `docket_core::review::identity`).
pub async fn handle(
    ports: &(impl HasBlobs + HasStore + HasReviews + HasCallback),
    ctx: &Context,
    role_prefix: &str,
    payload: Value,
) -> Result<Value, Failure> {
    if payload.get("requestContext").is_some() {
        Ok(review_api::serve(ports, ctx, role_prefix, payload).await)
    } else {
        workflow(ports, ctx, parse(payload)?).await
    }
}

/// Opens or escalates the run's review task.
pub async fn workflow(
    ports: &(impl HasBlobs + HasStore + HasReviews),
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
            let work = review::escalate(ports, ctx, &run);
            run_step("review.escalate", Step::Escalate, &run, work).await?;
            Ok(json!({"status": "escalated"}))
        }
    }
}
