//! The reviewers' endpoints: the task list, a task, its document (a presigned URL), where its
//! fields were read (evidence), a check of corrections, the decision, and who the caller is.
//! Another tenant's task answers the same not-found as a missing one.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use aws_lambda_events::lambda_function_urls::LambdaFunctionUrlRequest;
use docket_core::error::ErrorKind;
use docket_core::model::step::Step;
use docket_core::ocr::OcrDocument;
use docket_core::ports::{BlobStore, HasBlobs, HasCallback, HasReviews, HasStore, ReviewStore};
use docket_core::review::{self, ReviewStatus, ReviewTask, Reviewer, TaskId};
use docket_core::steps::review as step;
use docket_core::steps::Context;
use docket_core::Error;
use serde_json::{json, Value};

use super::{failed, failure, read_json, respond};
use crate::metrics::{self, Metric};
use crate::{span, traced, Failure};

/// The most tasks one `GET /tasks` answers, and how many without `limit`.
pub const MAX_PAGE: usize = 100;

/// How long a document URL of `GET /tasks/{id}/document` can be fetched: long enough for a
/// page to load a 20 MB document, short enough that a URL copied out of the page soon stops
/// working.
pub const DOCUMENT_URL_TTL: Duration = Duration::from_secs(300);

/// `GET /me`: who the API takes the signed caller for.
pub(super) fn me(reviewer: &Reviewer) -> Value {
    respond(
        200,
        json!({"reviewer": reviewer.id, "tenant": reviewer.tenant}),
    )
}

/// `GET /tasks[?status=…][&limit=n][&nextToken=…]`: the reviewer's tenant's tasks, oldest first,
/// a page at a time. `nextToken` (in the answer when more follow) is the last task id of the
/// page, opaque to callers; the next page starts after it.
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
    let page = match Page::of(query) {
        Ok(p) => p,
        Err(e) => return failed(&e, None),
    };
    match ports
        .reviews()
        .list(Some(&reviewer.tenant), page.status)
        .await
    {
        Ok(tasks) => {
            let (tasks, next) = page.cut(tasks);
            let mut body = json!({"tasks": tasks});
            if let Some(next) = next {
                body["nextToken"] = next.into();
            }
            respond(200, body)
        }
        Err(e) => failed(&e, None),
    }
}

/// A page request of `GET /tasks`.
#[derive(Debug)]
struct Page {
    status: Option<ReviewStatus>,
    limit: usize,
    after: Option<TaskId>,
}

impl Page {
    /// From the query string; a bad value is `Fatal.BadInput` (a 400), never a server error.
    fn of(query: &HashMap<String, String>) -> Result<Page, Error> {
        let status = query
            .get("status")
            .map(|s| {
                ReviewStatus::parse(s).map_err(|_| {
                    let known: Vec<&str> = ReviewStatus::ALL.iter().map(|s| s.as_str()).collect();
                    Error::BadInput(format!("status is one of {}", known.join(", ")))
                })
            })
            .transpose()?;
        let limit = match query.get("limit") {
            None => MAX_PAGE,
            Some(n) => n
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_PAGE).contains(n))
                .ok_or_else(|| Error::BadInput(format!("limit is 1 to {MAX_PAGE}")))?,
        };
        let after = query
            .get("nextToken")
            .map(|t| TaskId::parse(t).map_err(|_| Error::BadInput("nextToken is not valid".into())))
            .transpose()?;
        Ok(Page {
            status,
            limit,
            after,
        })
    }

    /// This page of `tasks` (oldest first) and the token of the next, if more follow.
    fn cut(&self, tasks: Vec<ReviewTask>) -> (Vec<ReviewTask>, Option<String>) {
        let start = match &self.after {
            Some(after) => tasks
                .iter()
                .position(|t| &t.task_id == after)
                .map_or(tasks.len(), |i| i + 1),
            None => 0,
        };
        let rest: Vec<ReviewTask> = tasks.into_iter().skip(start).collect();
        let more = rest.len() > self.limit;
        let page: Vec<ReviewTask> = rest.into_iter().take(self.limit).collect();
        let next = more
            .then(|| page.last().map(|t| t.task_id.to_string()))
            .flatten();
        (page, next)
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
    let asked: step::Request = match read_json(request, "decision") {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    // Log inside the run's span: load the task first (its ids; not found answers the same).
    let task = match ports.reviews().get(&id).await {
        Ok(Some(t)) if t.tenant == reviewer.tenant => t,
        Ok(_) => return failed(&review::not_found(&id), None),
        Err(e) => return failed(&e, None),
    };
    let decided = traced(task_span("review.decide", &task), async {
        let t = step::decide(ports, ctx, reviewer, &id, &asked).await?;
        tracing::info!(taskId = %id, reviewer = %reviewer.id, "review decided");
        Ok(t)
    })
    .await;
    match decided {
        Ok(task) => {
            if let Some(seconds) = latency_seconds(&task) {
                let of = metrics::Of {
                    tenant: &task.tenant,
                    document_id: &task.document_id,
                    run_id: &task.run_id,
                    step: Step::Review,
                };
                metrics::emit(Metric::ReviewLatency, seconds, of, &[]);
            }
            respond(200, json!({"task": task}))
        }
        Err(Failure(e)) => {
            // Already decided or expired: show what is recorded (who decided what, or why not).
            let recorded = match e.kind() {
                ErrorKind::AlreadyDecided | ErrorKind::ReviewExpired => {
                    visible(ports, reviewer, &id).await.ok()
                }
                _ => None,
            };
            let none = BTreeMap::new();
            let set = match &asked {
                step::Request::Approve { set, .. } => set,
                step::Request::Reject { .. } => &none,
            };
            refused(&e, recorded, set, ctx)
        }
    }
}

/// `GET /tasks/{id}/document`: a presigned URL of the task's raw document version, valid
/// [`DOCUMENT_URL_TTL`]; the page fetches the document itself (up to 20 MB, more than a function
/// URL answer may carry). The URL is a bearer credential: it is answered, never logged.
pub(super) async fn document(
    ports: &(impl HasReviews + HasBlobs),
    reviewer: &Reviewer,
    id: &str,
) -> Value {
    on_own_task(
        ports,
        reviewer,
        id,
        "review.document",
        |e| failed(e, None),
        |task| async move {
            let url = ports
                .blobs()
                .presign_get(&task.document, DOCUMENT_URL_TTL)
                .await?;
            tracing::info!(taskId = %task.task_id, reviewer = %reviewer.id, "document URL issued");
            Ok(json!({"url": url, "expiresInSeconds": DOCUMENT_URL_TTL.as_secs()}))
        },
    )
    .await
}

/// `GET /tasks/{id}/evidence`: the document's pages and, for each extracted field, the box on
/// its page it was read from ([`review::outlines`] over the task's normalized OCR).
pub(super) async fn evidence(
    ports: &(impl HasReviews + HasBlobs),
    reviewer: &Reviewer,
    id: &str,
) -> Value {
    on_own_task(
        ports,
        reviewer,
        id,
        "review.evidence",
        |e| failed(e, None),
        |task| async move {
            let bytes = ports.blobs().get(&task.ocr).await?;
            let ocr: OcrDocument = serde_json::from_slice(&bytes)
                .map_err(|e| Error::Internal(format!("the task's OCR is unreadable: {e}")))?;
            Ok(json!(review::outlines(&task.fields, &ocr)))
        },
    )
    .await
}

/// What `POST /tasks/{id}/check` reads: the corrections a decision would `set`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Check {
    #[serde(default)]
    set: BTreeMap<String, String>,
}

/// `POST /tasks/{id}/check` with `{"set": {...}}`: whether a decision with these corrections
/// would be accepted, by the very check the decision makes ([`review::apply_corrections`] under
/// the deployed config): `{"ok": true}`, or the decision's `Fatal.BadInput` answer. Decides and
/// writes nothing; a decided or expired task is checked too (the page shows its state).
pub(super) async fn check(
    ports: &impl HasReviews,
    ctx: &Context,
    reviewer: &Reviewer,
    id: &str,
    request: &LambdaFunctionUrlRequest,
) -> Value {
    // (A malformed body is answered before the task is looked up, as `decide` does: the
    // answer says nothing about the task.)
    let asked: Check = match read_json(request, "check") {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let set = &asked.set;
    let fail = |e: &Error| refused(e, None, set, ctx);
    on_own_task(
        ports,
        reviewer,
        id,
        "review.check",
        fail,
        |task| async move {
            review::apply_corrections(&task.fields, set, reviewer, &ctx.config)?;
            Ok(json!({"ok": true}))
        },
    )
    .await
}

/// The answer to a request about task `id` (as the path gives it): `work` on the task, in the
/// run's span named `step`, if the task is the reviewer's tenant's ([`owned`]); its value with
/// 200, or its error (not found for another tenant's task) as `fail` answers it.
async fn on_own_task<Work, Fut>(
    ports: &impl HasReviews,
    reviewer: &Reviewer,
    id: &str,
    step: &str,
    fail: impl FnOnce(&Error) -> Value,
    work: Work,
) -> Value
where
    Work: FnOnce(ReviewTask) -> Fut,
    Fut: std::future::Future<Output = Result<Value, Error>>,
{
    let task = match owned(ports, reviewer, id).await {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    let span = task_span(step, &task);
    match traced(span, work(task)).await {
        Ok(body) => respond(200, body),
        Err(Failure(e)) => fail(&e),
    }
}

/// [`failed`]'s answer to a decision or check with corrections `set`; a refused correction's
/// also names its field (`field`, [`review::refused_field`]), which the page marks.
fn refused(e: &Error, task: Option<Value>, set: &BTreeMap<String, String>, ctx: &Context) -> Value {
    let field = match e.kind() {
        ErrorKind::BadInput => review::refused_field(set, &ctx.config, e),
        _ => None,
    };
    failure(e, task, field)
}

/// The span of a request about `task`: the run's ids, as `decide` logs them.
fn task_span(step: &str, task: &ReviewTask) -> tracing::Span {
    let op = Step::Review.operation(&task.run_id);
    span(
        step,
        task.document_id.as_str(),
        task.run_id.as_str(),
        op.as_str(),
    )
}

/// Seconds from `task`'s opening to its decision, when both times read.
fn latency_seconds(task: &ReviewTask) -> Option<f64> {
    use time::format_description::well_known::Rfc3339;
    use time::OffsetDateTime;
    let opened = OffsetDateTime::parse(&task.created_at, &Rfc3339).ok()?;
    let decided = task.decision.as_ref()?.decided_at.as_str();
    let decided = OffsetDateTime::parse(decided, &Rfc3339).ok()?;
    Some((decided - opened).as_seconds_f64().max(0.0))
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

/// The task `id` (as the path gives it) if it is the reviewer's tenant's; a malformed id, a
/// missing task and another tenant's answer as [`visible`] does.
async fn owned(
    ports: &impl HasReviews,
    reviewer: &Reviewer,
    id: &str,
) -> Result<ReviewTask, Error> {
    let id = TaskId::parse(id)?;
    let task = ports
        .reviews()
        .get(&id)
        .await?
        .ok_or_else(|| review::not_found(&id))?;
    review::authorize(reviewer, &task)?;
    Ok(task)
}
