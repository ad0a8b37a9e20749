//! Human review in the workflow: `open` (validate calls it with the Validate Task's token when
//! a document needs a person: `steps::validate::validate_and_wait`), `decide` (a reviewer, through
//! the API or the CLI), `escalate` (the wait timed out). The rules of tasks and decisions are in
//! [`crate::review`]; this module adds the audit trail, the run's status and the one callback.
//!
//! - `open` is idempotent: a retried open finds the task and only stores the new token.
//! - `decide`: the caller's tenant must be the task's; the first decision wins by conditional
//!   write; only the winner sends the callback, once: `SendTaskSuccess` with the approved fields
//!   ([`Approved`] with a [`Reviewed`], what route continues with) or `SendTaskFailure`
//!   `Business.ReviewRejected`. When Step Functions no longer waits (`TaskTimedOut`,
//!   `InvalidToken`), the task is marked `expired` and the caller is told so
//!   (`Conflict.ReviewExpired`); the decision stays recorded.
//! - `escalate`: the task expires (`States.Timeout`) and the run becomes `escalated`, owned by
//!   the configured owner (`docket ops unresolved` lists it), never silently failed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{record, Context};
use crate::audit::AuditDraft;
use crate::error::ErrorKind;
use crate::model::fields::FieldName;
use crate::model::run::{ObjectRef, RunInput, TaskToken};
use crate::model::step::Step;
use crate::ports::{
    BlobStore, Change, HasBlobs, HasCallback, HasReviews, HasStore, ReviewStore, RunStatus,
    TaskCallback,
};
use crate::review::{
    authorize, not_found, rfc3339, task_id_for, ExpireOutcome, Expiry, OpenTask, Opened, Refusal,
    ReviewDecision, ReviewField, ReviewTask, Reviewer, TaskId,
};
use crate::validate::ValidationReport;
use crate::Error;

/// What the Validate Task's wait ends with for a document to route, and route reads (the
/// Task's `report` and `review`): validate ends it itself for a document it approves
/// (`review: None`, serialized as `null`: the state machine reads the path), a reviewer's
/// approval for one that needed a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approved {
    /// The run's validation report.
    pub report: ObjectRef,
    /// The reviewer's approval, when a person was asked.
    pub review: Option<Reviewed>,
}

/// A reviewer's approval, with the fields to route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reviewed {
    /// The task.
    pub task_id: TaskId,
    /// Who approved.
    pub reviewer: String,
    /// The fields to route: the extracted ones with the reviewer's corrections.
    pub fields: BTreeMap<FieldName, ReviewField>,
}

/// What a reviewer asks for. Unknown fields are refused: a misspelt `set` (say `corrections`)
/// would otherwise approve without the corrections the reviewer meant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Approve, optionally correcting fields (`field name → value`).
    Approve {
        /// Corrections.
        #[serde(default)]
        set: BTreeMap<String, String>,
        /// A note.
        #[serde(default)]
        comment: Option<String>,
    },
    /// Reject, with a reason.
    Reject {
        /// Why.
        reason: String,
    },
}

/// What the state machine's `waitForTaskToken` Task hands [`open`] besides the run. Not
/// `Serialize`: it holds the token.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenRequest {
    /// The run's validation report.
    pub report: ObjectRef,
    /// Its normalized OCR.
    pub ocr: ObjectRef,
    /// The waiting Task attempt's token.
    pub token: TaskToken,
    /// How long the Task waits (its `TimeoutSeconds`): the task's deadline.
    pub timeout_seconds: i64,
}

/// Opens (or finds) the review task of a run whose validation needs a person, storing the
/// waiting Task's token. Returns the task as recorded.
pub async fn open(
    ports: &(impl HasBlobs + HasStore + HasReviews),
    ctx: &Context,
    input: &RunInput,
    request: OpenRequest,
) -> Result<ReviewTask, Error> {
    let OpenRequest {
        report: report_ref,
        ocr,
        token,
        timeout_seconds,
    } = request;
    let bytes = ports.blobs().get(&report_ref).await?;
    let report: ValidationReport = serde_json::from_slice(&bytes)
        .map_err(|e| Error::BadInput(format!("validation report unreadable: {e}")))?;
    let now = ctx.clock.now();
    let deadline = now + time::Duration::seconds(timeout_seconds);
    let task = ReviewTask::new(input, &report, ocr, report_ref, now, deadline)?;
    let opened = ports.reviews().open(OpenTask { task, token }).await?;
    if let Opened::Created(task) = &opened {
        let codes: Vec<&str> = task.reasons.iter().map(|r| r.code.as_str()).collect();
        let draft = AuditDraft::new(&ctx.actor, "review.opened", Some(&input.run_id))
            .operation(&Step::Review.operation(&input.run_id))
            .detail(json!({"taskId": task.task_id, "deadline": task.deadline, "reasons": codes}));
        let _ = record(ports.store(), ctx, &input.document_id, vec![], draft).await?;
    }
    Ok(opened.task().clone())
}

/// A reviewer's decision on `task_id`; see the module docs. Returns the task as decided.
pub async fn decide(
    ports: &(impl HasStore + HasReviews + HasCallback),
    ctx: &Context,
    reviewer: &Reviewer,
    task_id: &TaskId,
    request: &Request,
) -> Result<ReviewTask, Error> {
    let (store, reviews, callback) = (ports.store(), ports.reviews(), ports.callback());
    let task = reviews
        .get(task_id)
        .await?
        .ok_or_else(|| not_found(task_id))?;
    authorize(reviewer, &task)?;
    let now = ctx.clock.now();
    let decision = match request {
        Request::Approve { set, comment } => {
            ReviewDecision::approve(&task, reviewer, set, comment.as_deref(), &ctx.config, now)?.0
        }
        Request::Reject { reason } => ReviewDecision::reject(reviewer, reason, now)?,
    };
    // Past the deadline a pending task is not decided any more (the workflow stops waiting).
    if let Err(refusal) = crate::review::decide(&task, decision.clone(), now)? {
        if !is_retry_of(&refusal, &decision) {
            return Err(refusal.error());
        }
    }
    let op = Step::Review.operation(&task.run_id);
    let recorded = match reviews.decide(task_id, &decision).await? {
        // Ours is the decision: record it, then send the one callback.
        Ok(recorded) => {
            if recorded.delivered_at.is_some() {
                return Ok(recorded);
            }
            let action = if decision.is_approval() {
                "review.approved"
            } else {
                "review.rejected"
            };
            let draft = AuditDraft::new(&ctx.actor, action, Some(&task.run_id))
                .operation(&op)
                .detail(decision.audit_detail(task_id));
            let _ = record(store, ctx, &task.document_id, vec![], draft).await?;
            recorded
        }
        // The same reviewer repeats the same verdict after its callback failed: send the
        // recorded decision again (it is already in the audit log).
        Err(refusal) if is_retry_of(&refusal, &decision) => refusal.task().clone(),
        // A concurrent or earlier decision stands (first one wins), or the task expired.
        Err(refusal) => return Err(refusal.error()),
    };
    let recorded_decision = recorded.decision.clone().ok_or_else(|| {
        Error::Internal(format!("review task {task_id} decided without a decision"))
    })?;
    let token = reviews
        .token(task_id)
        .await?
        .ok_or_else(|| Error::Internal(format!("review task {task_id} has no token")))?;
    let sent = match recorded.approved_fields() {
        Some(fields) => {
            let output = Approved {
                report: task.report.clone(),
                review: Some(Reviewed {
                    task_id: task_id.clone(),
                    reviewer: recorded_decision.reviewer.id.clone(),
                    fields,
                }),
            };
            let output = serde_json::to_value(&output).expect("review outputs serialize");
            callback.succeed(&token, &output).await
        }
        None => {
            let cause = format!("rejected by reviewer {}", recorded_decision.reviewer.id);
            callback
                .fail(&token, ErrorKind::ReviewRejected, &cause)
                .await
        }
    };
    match sent {
        Ok(()) => reviews.mark_delivered(task_id, &rfc3339(now)).await,
        Err(Error::ReviewExpired(reason)) => {
            let expiry = Expiry {
                reason: reason.clone(),
                at: rfc3339(now),
            };
            match reviews.expire(task_id, &expiry).await? {
                // Delivered meanwhile (another attempt's callback went through): it stands.
                ExpireOutcome::Delivered(task) => return Ok(task),
                ExpireOutcome::Expired(_) => {
                    let draft = AuditDraft::new(&ctx.actor, "review.expired", Some(&task.run_id))
                        .operation(&op)
                        .detail(
                            json!({"taskId": task_id, "reason": reason, "decidedBy": reviewer.id}),
                        );
                    let _ = record(store, ctx, &task.document_id, vec![], draft).await?;
                }
                ExpireOutcome::AlreadyExpired(_) => {}
            }
            Err(Error::ReviewExpired(format!(
                "review task {task_id}: decided by {} but the workflow no longer waits ({reason})",
                reviewer.id
            )))
        }
        // The task stays decided and undelivered; the caller gets the error and may repeat the
        // same decision, which is then sent again.
        Err(other) => Err(other),
    }
}

/// Whether `refusal` is the store answering a repeat of `decision` by the same reviewer, with
/// the same verdict, whose callback was not delivered (so it must be sent again).
fn is_retry_of(refusal: &Refusal, decision: &ReviewDecision) -> bool {
    match refusal {
        Refusal::AlreadyDecided(t) => {
            t.delivered_at.is_none()
                && t.decision.as_ref().is_some_and(|d| {
                    d.reviewer == decision.reviewer && d.verdict == decision.verdict
                })
        }
        Refusal::Expired(_) => false,
    }
}

/// The wait for a decision timed out: the task expires and the run is escalated to its owner.
pub async fn escalate(
    ports: &(impl HasStore + HasReviews),
    ctx: &Context,
    input: &RunInput,
) -> Result<(), Error> {
    let reviews = ports.reviews();
    let task_id = task_id_for(&input.run_id);
    let now = ctx.clock.now();
    let expiry = Expiry {
        reason: "States.Timeout".into(),
        at: rfc3339(now),
    };
    if reviews.get(&task_id).await?.is_some() {
        if let ExpireOutcome::Delivered(_) = reviews.expire(&task_id, &expiry).await? {
            // A decision reached the workflow after all: nothing to escalate.
            return Ok(());
        }
    }
    let owner = &ctx.config.ledger.unresolved_owner;
    let change = Change::SetRunStatus {
        run_id: input.run_id.clone(),
        from: RunStatus::AwaitingReview,
        to: RunStatus::Escalated,
        outputs: BTreeMap::new(),
        error: Some("States.Timeout".into()),
    };
    let draft = AuditDraft::new(&ctx.actor, "review.escalated", Some(&input.run_id))
        .operation(&Step::Escalate.operation(&input.run_id))
        .detail(json!({"taskId": task_id, "owner": owner, "reason": "review not decided in time"}));
    // Refused: already escalated by an earlier attempt.
    let _ = record(ports.store(), ctx, &input.document_id, vec![change], draft).await?;
    Ok(())
}
