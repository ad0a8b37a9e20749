//! The review API behind the review function's URL (`AuthType: AWS_IAM`): `GET /tasks`,
//! `GET /tasks/{id}`, `POST /tasks/{id}/decision`.
//!
//! Who the caller is and which tenant they act for comes from the authenticated caller
//! (`requestContext.authorizer.iam.userArn`, the assumed `docket-reviewer-<tenant>` role), never
//! from the request. The token is never returned, logged or put in an error. Every answer is an
//! HTTP response, errors included: a taxonomy error is its name and message with a status
//! ([`status_of`]).

mod tasks;

use aws_lambda_events::lambda_function_urls::LambdaFunctionUrlRequest;
use docket_core::error::{ErrorKind, Family};
use docket_core::ports::{HasCallback, HasReviews, HasStore};
use docket_core::review::identity::reviewer_from_principal;
use docket_core::steps::Context;
use docket_core::Error;
use serde_json::{json, Value};

/// Serves one function URL request (payload format 2.0).
pub async fn serve(
    ports: &(impl HasStore + HasReviews + HasCallback),
    ctx: &Context,
    role_prefix: &str,
    payload: Value,
) -> Value {
    let request: LambdaFunctionUrlRequest = match serde_json::from_value(payload) {
        Ok(r) => r,
        Err(_) => return failed(&Error::BadInput("not a function URL request".into()), None),
    };
    let caller = request
        .request_context
        .authorizer
        .as_ref()
        .and_then(|a| a.iam.as_ref())
        .and_then(|iam| iam.user_arn.as_deref());
    let Some(caller) = caller else {
        return forbidden("unauthenticated caller");
    };
    let reviewer = match reviewer_from_principal(caller, role_prefix) {
        Ok(r) => r,
        Err(e) => return forbidden(&e.to_string()),
    };
    let method = request
        .request_context
        .http
        .method
        .as_deref()
        .unwrap_or_default()
        .to_ascii_uppercase();
    let path = request.raw_path.as_deref().unwrap_or_default();
    let segments: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["tasks"]) => tasks::list(ports, &reviewer, &request.query_string_parameters).await,
        ("GET", ["tasks", id]) => tasks::show(ports, &reviewer, id).await,
        ("POST", ["tasks", id, "decision"]) => {
            tasks::decide(ports, ctx, &reviewer, id, &request).await
        }
        _ => respond(
            404,
            json!({"error": "NotFound", "message": "no such route"}),
        ),
    }
}

fn respond(status: u16, body: Value) -> Value {
    json!({
        "statusCode": status,
        "headers": {"content-type": "application/json"},
        "body": body.to_string(),
    })
}

fn forbidden(message: &str) -> Value {
    respond(403, json!({"error": "Forbidden", "message": message}))
}

/// The HTTP status of a taxonomy error.
fn status_of(e: &Error) -> u16 {
    match (e.kind(), e.family()) {
        (ErrorKind::BadInput, _) => 400,
        (ErrorKind::ReviewNotFound, _) => 404,
        (ErrorKind::AlreadyDecided, _) => 409,
        (ErrorKind::ReviewExpired, _) => 410,
        (_, Family::Transient | Family::Ambiguous) => 503,
        _ => 500,
    }
}

/// The error's answer, with the task as recorded when there is one to show.
fn failed(e: &Error, task: Option<Value>) -> Value {
    let mut body = json!({"error": e.name(), "message": e.to_string()});
    if let Some(task) = task {
        body["task"] = task;
    }
    respond(status_of(e), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_http_statuses() {
        assert_eq!(status_of(&Error::ReviewNotFound("x".into())), 404);
        assert_eq!(status_of(&Error::AlreadyDecided("x".into())), 409);
        assert_eq!(status_of(&Error::ReviewExpired("x".into())), 410);
        assert_eq!(status_of(&Error::BadInput("x".into())), 400);
        assert_eq!(status_of(&Error::Dependency("x".into())), 503);
        assert_eq!(status_of(&Error::Internal("x".into())), 500);
    }
}
