//! The three endpoints. Another tenant's task answers the same not-found as a missing one.

use std::collections::HashMap;

use aws_lambda_events::lambda_function_urls::LambdaFunctionUrlRequest;
use docket_core::error::ErrorKind;
use docket_core::model::step::Step;
use docket_core::ports::{HasCallback, HasReviews, HasStore, ReviewStore};
use docket_core::review::{self, ReviewStatus, Reviewer, TaskId};
use docket_core::steps::review as step;
use docket_core::steps::Context;
use docket_core::Error;
use serde_json::{json, Value};

use super::{failed, respond};
use crate::{span, traced, Failure};

/// `GET /tasks[?status=…]`: the reviewer's tenant's tasks.
pub(super) async fn list(
    ports: &impl HasReviews,
    reviewer: &Reviewer,
    query: &HashMap<String, String>,
) -> Value {
    if query
        .get("tenant")
        .is_some_and(|t| t != reviewer.tenant.as_str())
    {
        let e = Error::ReviewNotFound(format!("no tasks visible for tenant {}", query["tenant"]));
        return failed(&e, None);
    }
    let status = match query
        .get("status")
        .map(|s| ReviewStatus::parse(s))
        .transpose()
    {
        Ok(s) => s,
        Err(e) => return failed(&e, None),
    };
    match ports.reviews().list(Some(&reviewer.tenant), status).await {
        Ok(tasks) => respond(200, json!({"tasks": tasks})),
        Err(e) => failed(&e, None),
    }
}

/// `GET /tasks/{id}`.
pub(super) async fn show(ports: &impl HasReviews, reviewer: &Reviewer, id: &str) -> Value {
    let id = match TaskId::parse(id) {
        Ok(id) => id,
        Err(e) => return failed(&e, None),
    };
    match visible(ports, reviewer, &id).await {
        Ok(task) => respond(200, json!({"task": task})),
        Err(e) => failed(&e, None),
    }
}

/// `POST /tasks/{id}/decision` with a [`step::Request`]: the first decision wins.
pub(super) async fn decide(
    ports: &(impl HasStore + HasReviews + HasCallback),
    ctx: &Context,
    reviewer: &Reviewer,
    id: &str,
    request: &LambdaFunctionUrlRequest,
) -> Value {
    let id = match TaskId::parse(id) {
        Ok(id) => id,
        Err(e) => return failed(&e, None),
    };
    let body = match body_of(request) {
        Ok(b) => b,
        Err(e) => return failed(&e, None),
    };
    let asked: step::Request = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return failed(&Error::BadInput(format!("decision body: {e}")), None),
    };
    // Log inside the run's span: load the task first (its ids; not found answers the same).
    let task = match ports.reviews().get(&id).await {
        Ok(Some(t)) if t.tenant == reviewer.tenant => t,
        Ok(_) => return failed(&review::not_found(&id), None),
        Err(e) => return failed(&e, None),
    };
    let op = Step::Review.operation(&task.run_id);
    let span = span(
        "review.decide",
        task.document_id.as_str(),
        task.run_id.as_str(),
        op.as_str(),
    );
    let decided = traced(span, async {
        let t = step::decide(ports, ctx, reviewer, &id, &asked).await?;
        tracing::info!(taskId = %id, reviewer = %reviewer.id, "review decided");
        Ok(t)
    })
    .await;
    match decided {
        Ok(task) => respond(200, json!({"task": task})),
        Err(Failure(e)) => {
            // Already decided or expired: show what is recorded (who decided what, or why not).
            let recorded = match e.kind() {
                ErrorKind::AlreadyDecided | ErrorKind::ReviewExpired => {
                    visible(ports, reviewer, &id).await.ok()
                }
                _ => None,
            };
            failed(&e, recorded)
        }
    }
}

/// The task as its tenant's reviewer may see it (not found otherwise), as JSON.
async fn visible(
    ports: &impl HasReviews,
    reviewer: &Reviewer,
    id: &TaskId,
) -> Result<Value, Error> {
    let task = ports
        .reviews()
        .get(id)
        .await?
        .ok_or_else(|| review::not_found(id))?;
    review::authorize(reviewer, &task)?;
    Ok(serde_json::to_value(&task).expect("tasks serialize"))
}

fn body_of(request: &LambdaFunctionUrlRequest) -> Result<Vec<u8>, Error> {
    let body = request.body.clone().unwrap_or_default();
    if request.is_base64_encoded {
        decode_base64(&body).ok_or_else(|| Error::BadInput("body is not valid base64".into()))
    } else {
        Ok(body.into_bytes())
    }
}

/// Standard base64 (function URLs encode non-text bodies).
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    aws_smithy_types::base64::decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_bodies_decode() {
        assert_eq!(decode_base64("eyJhIjoxfQ==").unwrap(), br#"{"a":1}"#);
        assert_eq!(decode_base64("YWI=").unwrap(), b"ab");
        assert_eq!(decode_base64("YWJj").unwrap(), b"abc");
        assert!(decode_base64("!!!!").is_none());
    }
}
