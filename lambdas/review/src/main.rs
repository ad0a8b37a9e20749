//! review: the review-callback function.
//!
//! - Step Functions invokes it from the `waitForTaskToken` Task to open a review task
//!   (`action: open`, with the token), and from the Task's timeout Catch to escalate it
//!   (`action: escalate`).
//! - Reviewers reach it through its function URL (`AuthType: AWS_IAM`): `GET /tasks`,
//!   `GET /tasks/{id}`, `POST /tasks/{id}/decision`. Who they are and which tenant they act for
//!   comes from the authenticated caller (`requestContext.authorizer.iam.userArn`), never from
//!   the request. The token is never returned, logged or put in an error.
//!
//! See `docket_core::steps::review` for what each does.

// The handler's future (runtime → traced span → step → SDK calls) is deep enough that computing
// its layout in a release build exceeds rustc's default query depth of 128.
#![recursion_limit = "256"]

use std::collections::HashMap;

use docket_aws::review::DynamoReviewStore;
use docket_aws::sfn::SfnCallback;
use docket_core::ids::OperationId;
use docket_core::ports::ObjectRef;
use docket_core::review::identity::{reviewer_from_principal, DEFAULT_ROLE_PREFIX};
use docket_core::review::{ReviewStatus, ReviewStore, Reviewer, TaskId, TaskToken};
use docket_core::steps::{review, RunInput};
use docket_core::Error;
use docket_lambda::{answer, init_tracing, parse, span, traced, Deps, Failure};
use lambda_runtime::{service_fn, LambdaEvent};
use serde::Deserialize;
use serde_json::{json, Value};

struct Review {
    deps: Deps,
    reviews: DynamoReviewStore,
    callback: SfnCallback,
    role_prefix: String,
}

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    let table = docket_aws::env("REVIEW_TABLE")?;
    let app = Review {
        reviews: DynamoReviewStore::with_faults(&deps.sdk, table, &deps.faults),
        callback: SfnCallback::with_faults(&deps.sdk, &deps.faults),
        role_prefix: std::env::var("REVIEWER_ROLE_PREFIX")
            .unwrap_or_else(|_| DEFAULT_ROLE_PREFIX.to_string()),
        deps,
    };
    let app = &app;
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<Value>| async move {
        if ev.payload.get("requestContext").is_some() {
            Ok::<Value, Failure>(http(app, ev.payload).await)
        } else {
            workflow(app, ev.payload).await
        }
    }))
    .await
}

/// What the state machine sends.
#[derive(Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
enum Action {
    Open {
        run: RunInput,
        report: ObjectRef,
        ocr: ObjectRef,
        token: TaskToken,
        #[serde(rename = "timeoutSeconds")]
        timeout_seconds: i64,
    },
    Escalate {
        run: RunInput,
    },
}

async fn workflow(app: &Review, payload: Value) -> Result<Value, Failure> {
    let d = &app.deps;
    match parse(payload)? {
        Action::Open {
            run,
            report,
            ocr,
            token,
            timeout_seconds,
        } => {
            let op = OperationId::new(&run.run_id, "review", None);
            let task = traced(span("review.open", Some(&run), Some(op.as_str())), async {
                let task = review::open(
                    &d.blobs,
                    &d.store,
                    &app.reviews,
                    &d.ctx,
                    &run,
                    &report,
                    &ocr,
                    token,
                    timeout_seconds,
                )
                .await?;
                tracing::info!(taskId = %task.task_id, status = task.status.as_str(), "review task open");
                Ok(task)
            })
            .await?;
            answer(&json!({"taskId": task.task_id}))
        }
        Action::Escalate { run } => {
            let op = OperationId::new(&run.run_id, "escalate", None);
            traced(
                span("review.escalate", Some(&run), Some(op.as_str())),
                review::escalate(&d.store, &app.reviews, &d.ctx, &run),
            )
            .await?;
            Ok(json!({"status": "escalated"}))
        }
    }
}

/// A function URL request (payload format 2.0), the parts we read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HttpRequest {
    request_context: RequestContext,
    raw_path: String,
    #[serde(default)]
    query_string_parameters: HashMap<String, String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    is_base64_encoded: bool,
}

#[derive(Deserialize)]
struct RequestContext {
    http: HttpContext,
    #[serde(default)]
    authorizer: Option<Authorizer>,
}

#[derive(Deserialize)]
struct HttpContext {
    method: String,
}

#[derive(Deserialize)]
struct Authorizer {
    iam: Option<IamCaller>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct IamCaller {
    user_arn: String,
}

fn respond(status: u16, body: Value) -> Value {
    json!({
        "statusCode": status,
        "headers": {"content-type": "application/json"},
        "body": body.to_string(),
    })
}

fn status_of(e: &Error) -> u16 {
    match e.name() {
        "Fatal.BadInput" => 400,
        "Business.ReviewNotFound" => 404,
        "Conflict.AlreadyDecided" => 409,
        "Conflict.ReviewExpired" => 410,
        name if name.starts_with("Transient.") || name.starts_with("Ambiguous.") => 503,
        _ => 500,
    }
}

fn failed(e: &Error, task: Option<Value>) -> Value {
    let mut body = json!({"error": e.name(), "message": e.to_string()});
    if let Some(task) = task {
        body["task"] = task;
    }
    respond(status_of(e), body)
}

/// Serves one API request; every answer is an HTTP response (errors included).
async fn http(app: &Review, payload: Value) -> Value {
    let request: HttpRequest = match serde_json::from_value(payload) {
        Ok(r) => r,
        Err(_) => return failed(&Error::BadInput("not a function URL request".into()), None),
    };
    let caller = request
        .request_context
        .authorizer
        .as_ref()
        .and_then(|a| a.iam.as_ref())
        .map(|iam| iam.user_arn.as_str());
    let Some(caller) = caller else {
        return respond(
            403,
            json!({"error": "Forbidden", "message": "unauthenticated caller"}),
        );
    };
    let reviewer = match reviewer_from_principal(caller, &app.role_prefix) {
        Ok(r) => r,
        Err(e) => return respond(403, json!({"error": "Forbidden", "message": e.to_string()})),
    };
    let method = request.request_context.http.method.to_ascii_uppercase();
    let segments: Vec<&str> = request
        .raw_path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["tasks"]) => list(app, &reviewer, &request.query_string_parameters).await,
        ("GET", ["tasks", id]) => show(app, &reviewer, id).await,
        ("POST", ["tasks", id, "decision"]) => decide(app, &reviewer, id, &request).await,
        _ => respond(
            404,
            json!({"error": "NotFound", "message": "no such route"}),
        ),
    }
}

async fn list(app: &Review, reviewer: &Reviewer, query: &HashMap<String, String>) -> Value {
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
    match app.reviews.list(Some(&reviewer.tenant), status).await {
        Ok(tasks) => respond(200, json!({"tasks": tasks})),
        Err(e) => failed(&e, None),
    }
}

/// The task as its tenant's reviewer may see it (not found otherwise), as JSON.
async fn visible(app: &Review, reviewer: &Reviewer, id: &TaskId) -> Result<Value, Error> {
    let task = app
        .reviews
        .get(id)
        .await?
        .ok_or_else(|| docket_core::review::not_found(id))?;
    docket_core::review::authorize(reviewer, &task)?;
    Ok(serde_json::to_value(&task).expect("tasks serialize"))
}

async fn show(app: &Review, reviewer: &Reviewer, id: &str) -> Value {
    let id = match TaskId::parse(id) {
        Ok(id) => id,
        Err(e) => return failed(&e, None),
    };
    match visible(app, reviewer, &id).await {
        Ok(task) => respond(200, json!({"task": task})),
        Err(e) => failed(&e, None),
    }
}

async fn decide(app: &Review, reviewer: &Reviewer, id: &str, request: &HttpRequest) -> Value {
    let id = match TaskId::parse(id) {
        Ok(id) => id,
        Err(e) => return failed(&e, None),
    };
    let body = match body_of(request) {
        Ok(b) => b,
        Err(e) => return failed(&e, None),
    };
    let asked: review::Request = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return failed(&Error::BadInput(format!("decision body: {e}")), None),
    };
    // Log inside the run's span: load the task first (its ids; not found answers the same).
    let task = match app.reviews.get(&id).await {
        Ok(Some(t)) if t.tenant == reviewer.tenant => t,
        Ok(_) => return failed(&docket_core::review::not_found(&id), None),
        Err(e) => return failed(&e, None),
    };
    let op = OperationId::new(&task.run_id, "review", None);
    let span = tracing::info_span!(
        "step",
        step = "review.decide",
        documentId = task.document_id.as_str(),
        runId = task.run_id.as_str(),
        operationId = op.as_str(),
    );
    let d = &app.deps;
    let decided = traced(span, async {
        let t = review::decide(
            &d.store,
            &app.reviews,
            &app.callback,
            &d.ctx,
            reviewer,
            &id,
            &asked,
        )
        .await?;
        tracing::info!(taskId = %id, reviewer = %reviewer.id, "review decided");
        Ok(t)
    })
    .await;
    match decided {
        Ok(task) => respond(200, json!({"task": task})),
        Err(Failure(e)) => {
            // Already decided or expired: show what is recorded (who decided what, or why not).
            let recorded = match e.name() {
                "Conflict.AlreadyDecided" | "Conflict.ReviewExpired" => {
                    visible(app, reviewer, &id).await.ok()
                }
                _ => None,
            };
            failed(&e, recorded)
        }
    }
}

fn body_of(request: &HttpRequest) -> Result<Vec<u8>, Error> {
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
