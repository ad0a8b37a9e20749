//! The review-api function: the API people call, behind its function URL (`AuthType:
//! AWS_IAM`). Reviewers (`tasks.rs`): `GET /me` (who the API takes the caller for), `GET
//! /tasks`, `GET /tasks/{id}`, `GET /tasks/{id}/document` (a presigned URL of the raw document,
//! 5 minutes), `GET /tasks/{id}/evidence` (the pages and each field's box on them), `POST
//! /tasks/{id}/check` (would these corrections be accepted; decides nothing), `POST
//! /tasks/{id}/decision`. Operators: `POST /operations/{id}/resolution` and `POST /reprocesses`
//! (`operations.rs`, `docket ops resolve`).
//!
//! It serves function URL requests only: anything else (the state machine's `open` /
//! `escalate`, a hand-made event) is refused as `Fatal.BadInput` before any port is touched.
//! That the request really came through the URL is the function's resource policy's job (on AWS
//! reviewers may invoke it only with `lambda:InvokedViaFunctionUrl`; locally the function URL
//! emulation refuses a direct Invoke of it): an event's content cannot prove where it came from.
//!
//! Who the caller is and which tenant they act for comes from the authenticated caller
//! (`requestContext.authorizer.iam`: an assumed `<prefix><tenant>` role of the stack's account
//! for a reviewer, a session of the operator role for an operator, see
//! `docket_core::review::identity`), never from the request; a reviewer is not an operator
//! and an operator is not a reviewer. The token is never returned,
//! logged or put in an error. Every answer is an HTTP response, errors included: a client's
//! error is its name and message with a status ([`status_of`]); any other (a dependency failing,
//! an internal error) is its name and a generic message, the detail only in the log.

mod operations;
mod tasks;

use aws_lambda_events::lambda_function_urls::LambdaFunctionUrlRequest;
use docket_core::error::{ErrorKind, Family};
use docket_core::ports::{
    HasBlobs, HasBulk, HasCallback, HasConfigs, HasLedger, HasReviews, HasStore,
};
use docket_core::review::identity::{Operators, Reviewers};
use docket_core::steps::Context;
use docket_core::Error;
use serde_json::{json, Value};

use crate::Failure;

/// The largest request body accepted (after base64 decoding), in bytes: a decision is a few
/// hundred; anything near this is not one. Larger bodies answer 413.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// Who may call: reviewers and operators of this stack.
#[derive(Debug, Clone)]
pub struct Callers {
    /// Reviewers (`REVIEWER_ROLE_PREFIX`, `REVIEWER_ACCOUNT_ID`).
    pub reviewers: Reviewers,
    /// Operators (`OPERATOR_ROLE_NAME`, `REVIEWER_ACCOUNT_ID`).
    pub operators: Operators,
}

impl Callers {
    /// From the environment (all set by the template; no default, so a misconfigured function
    /// refuses everyone).
    pub fn from_env() -> Result<Self, Error> {
        let account = docket_aws::env("REVIEWER_ACCOUNT_ID")?;
        Ok(Callers {
            reviewers: Reviewers {
                role_prefix: docket_aws::env("REVIEWER_ROLE_PREFIX")?,
                account: account.clone(),
            },
            operators: Operators {
                role: docket_aws::env("OPERATOR_ROLE_NAME")?,
                account,
            },
        })
    }
}

/// The ports review-api uses.
pub trait Ports:
    HasStore + HasLedger + HasReviews + HasCallback + HasBlobs + HasConfigs + HasBulk
{
}

impl<P> Ports for P where
    P: HasStore + HasLedger + HasReviews + HasCallback + HasBlobs + HasConfigs + HasBulk
{
}

/// Serves one invocation: a function URL request (payload format 2.0) gets its HTTP answer; any
/// other payload is refused as `Fatal.BadInput`.
pub async fn handle(
    ports: &impl Ports,
    ctx: &Context,
    callers: &Callers,
    payload: Value,
) -> Result<Value, Failure> {
    if !is_function_url_request(&payload) {
        return Err(Failure(Error::BadInput(
            "review-api serves function URL requests only".into(),
        )));
    }
    Ok(serve(ports, ctx, callers, payload).await)
}

/// Whether `payload` has the shape of a function URL event (payload format 2.0): the version,
/// the HTTP method and path, and no `action` (what the state machine sends).
fn is_function_url_request(payload: &Value) -> bool {
    payload["version"] == "2.0"
        && payload["rawPath"].is_string()
        && payload["requestContext"]["http"]["method"].is_string()
        && payload.get("action").is_none()
}

/// Serves one function URL request.
async fn serve(ports: &impl Ports, ctx: &Context, callers: &Callers, payload: Value) -> Value {
    let request: LambdaFunctionUrlRequest = match serde_json::from_value(payload) {
        Ok(r) => r,
        Err(_) => return failed(&Error::BadInput("not a function URL request".into()), None),
    };
    let iam = request
        .request_context
        .authorizer
        .as_ref()
        .and_then(|a| a.iam.as_ref());
    let caller = iam.and_then(|iam| Some((iam.user_arn.as_deref()?, iam.account_id.as_deref()?)));
    let Some((caller, account)) = caller else {
        return forbidden("unauthenticated caller");
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
    if let ["operations" | "reprocesses", ..] = segments.as_slice() {
        let operator = match callers.operators.operator(caller, account) {
            Ok(o) => o,
            Err(e) => return forbidden(&e.to_string()),
        };
        return match (method.as_str(), segments.as_slice()) {
            ("POST", ["operations", id, "resolution"]) => {
                operations::resolve(ports, ctx, &operator, id, &request).await
            }
            ("POST", ["reprocesses"]) => {
                operations::reprocess(ports, ctx, &operator, &request).await
            }
            _ => not_found(),
        };
    }
    let reviewer = match callers.reviewers.reviewer(caller, account) {
        Ok(r) => r,
        Err(e) => return forbidden(&e.to_string()),
    };
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["me"]) => tasks::me(&reviewer),
        ("GET", ["tasks"]) => tasks::list(ports, &reviewer, &request.query_string_parameters).await,
        ("GET", ["tasks", id]) => tasks::show(ports, &reviewer, id).await,
        ("GET", ["tasks", id, "document"]) => tasks::document(ports, &reviewer, id).await,
        ("GET", ["tasks", id, "evidence"]) => tasks::evidence(ports, &reviewer, id).await,
        ("POST", ["tasks", id, "check"]) => tasks::check(ports, ctx, &reviewer, id, &request).await,
        ("POST", ["tasks", id, "decision"]) => {
            tasks::decide(ports, ctx, &reviewer, id, &request).await
        }
        _ => not_found(),
    }
}

fn not_found() -> Value {
    respond(
        404,
        json!({"error": "NotFound", "message": "no such route"}),
    )
}

/// The request's body parsed as `T` (`what` names it in the refusal), or the answer refusing
/// it: too large 413; bad base64, or not a `T`, 400.
fn read_json<T: serde::de::DeserializeOwned>(
    request: &LambdaFunctionUrlRequest,
    what: &str,
) -> Result<T, Value> {
    let body = read_body(request)?;
    serde_json::from_slice(&body)
        .map_err(|e| failed(&Error::BadInput(format!("{what} body: {e}")), None))
}

/// The request's body, decoded, or the answer refusing it (too large: 413; bad base64: 400).
fn read_body(request: &LambdaFunctionUrlRequest) -> Result<Vec<u8>, Value> {
    let body = request.body.clone().unwrap_or_default();
    let bytes = if request.is_base64_encoded {
        decode_base64(&body)
            .ok_or_else(|| failed(&Error::BadInput("body is not valid base64".into()), None))?
    } else {
        body.into_bytes()
    };
    if bytes.len() > MAX_BODY_BYTES {
        let message = format!("the body is larger than {MAX_BODY_BYTES} bytes");
        return Err(respond(
            413,
            json!({"error": "Fatal.BadInput", "message": message}),
        ));
    }
    Ok(bytes)
}

/// Standard base64 (function URLs encode non-text bodies).
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    aws_smithy_types::base64::decode(s).ok()
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

/// The error's answer, with the task as recorded when there is one to show. A client error (4xx)
/// carries its message (ours, naming what to fix); a server error only its name and a generic
/// message, since its message may quote a dependency (an SDK error, a table name).
fn failed(e: &Error, task: Option<Value>) -> Value {
    failure(e, task, None)
}

/// [`failed`]'s answer, naming the refused correction's `field` when there is one.
fn failure(e: &Error, task: Option<Value>, field: Option<String>) -> Value {
    let status = status_of(e);
    let message = if status < 500 {
        e.to_string()
    } else {
        tracing::error!(error = e.name(), detail = %e, "review API request failed");
        "the review service could not answer; try again later".to_string()
    };
    let mut body = json!({"error": e.name(), "message": message});
    if let Some(task) = task {
        body["task"] = task;
    }
    if let Some(field) = field {
        body["field"] = json!(field);
    }
    respond(status, body)
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

    #[test]
    fn errors_map_to_http_statuses() {
        assert_eq!(status_of(&Error::ReviewNotFound("x".into())), 404);
        assert_eq!(status_of(&Error::AlreadyDecided("x".into())), 409);
        assert_eq!(status_of(&Error::ReviewExpired("x".into())), 410);
        assert_eq!(status_of(&Error::BadInput("x".into())), 400);
        assert_eq!(status_of(&Error::Dependency("x".into())), 503);
        assert_eq!(status_of(&Error::Internal("x".into())), 500);
    }

    #[test]
    fn a_server_error_answers_its_name_but_not_its_detail() {
        let sdk = Error::Dependency("ResourceNotFoundException: table docket-dev-reviews".into());

        let answer = failed(&sdk, None);

        let body: Value = serde_json::from_str(answer["body"].as_str().unwrap()).unwrap();
        assert_eq!(answer["statusCode"], 503);
        assert_eq!(body["error"], sdk.name());
        assert!(!body.to_string().contains("ResourceNotFound"), "{body}");
        assert!(!body.to_string().contains("docket-dev-reviews"), "{body}");
    }

    #[test]
    fn only_function_url_events_are_requests() {
        let url: Value = serde_json::from_str(include_str!(
            "../../../../tests/fixtures/function-url-review-decision.json"
        ))
        .unwrap();
        let escalate = serde_json::from_str(include_str!(
            "../../../../tests/fixtures/sfn-review-escalate.json"
        ))
        .unwrap();
        let mut smuggled = url.clone();
        smuggled["action"] = "escalate".into();

        assert!(is_function_url_request(&url));
        assert!(!is_function_url_request(&escalate));
        assert!(!is_function_url_request(&smuggled));
        assert!(!is_function_url_request(&json!({"requestContext": {}})));
    }
}
