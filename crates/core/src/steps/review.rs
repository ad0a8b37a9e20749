//! Human review in the workflow: `open` (the state machine's `waitForTaskToken` Task calls it
//! with the token), `decide` (a reviewer, through the API or the CLI), `escalate` (the wait
//! timed out). The rules of tasks and decisions are in [`crate::review`]; this module adds the
//! audit trail, the run's status and the one callback.
//!
//! - `open` is idempotent: a retried open finds the task and only stores the new token.
//! - `decide`: the caller's tenant must be the task's; the first decision wins by conditional
//!   write; only the winner sends the callback, once: `SendTaskSuccess` with the approved fields
//!   ([`Reviewed`], what route continues with) or `SendTaskFailure` `Business.ReviewRejected`.
//!   When Step Functions no longer waits (`TaskTimedOut`, `InvalidToken`), the task is marked
//!   `expired` and the caller is told so (`Conflict.ReviewExpired`); the decision stays recorded.
//! - `escalate`: the task expires (`States.Timeout`) and the run becomes `escalated`, owned by
//!   the configured owner (`docket ops unresolved` lists it), never silently failed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;
use time::OffsetDateTime;

use super::{record, Context, RunInput};
use crate::audit::AuditDraft;
use crate::extract::FieldName;
use crate::ids::OperationId;
use crate::ports::{BlobStore, Change, ObjectRef, RunStatus, Store, TaskCallback};
use crate::review::{
    authorize, not_found, task_id_for, Expiry, OpenTask, Opened, ReviewDecision, ReviewField,
    ReviewStore, ReviewTask, Reviewer, TaskId, TaskToken,
};
use crate::validate::ValidationReport;
use crate::Error;

/// What the workflow gets back from an approval (the `SendTaskSuccess` output) and route uses.
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

/// What a reviewer asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
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

/// Opens (or finds) the review task of a run whose validation needs a person, storing the
/// waiting Task's token. Returns the task as recorded.
#[allow(clippy::too_many_arguments)]
pub async fn open<B: BlobStore, S: Store, R: ReviewStore>(
    blobs: &B,
    store: &S,
    reviews: &R,
    ctx: &Context,
    input: &RunInput,
    report_ref: &ObjectRef,
    ocr: &ObjectRef,
    token: TaskToken,
    timeout_seconds: i64,
) -> Result<ReviewTask, Error> {
    let bytes = blobs.get(report_ref).await?;
    let report: ValidationReport = serde_json::from_slice(&bytes)
        .map_err(|e| Error::BadInput(format!("validation report unreadable: {e}")))?;
    let now = ctx.clock.now();
    let deadline = now + time::Duration::seconds(timeout_seconds);
    let task = ReviewTask::new(
        input,
        &report,
        ocr.clone(),
        report_ref.clone(),
        now,
        deadline,
    )?;
    let opened = reviews.open(OpenTask { task, token }).await?;
    if let Opened::Created(task) = &opened {
        let codes: Vec<&str> = task.reasons.iter().map(|r| r.code.as_str()).collect();
        let draft = AuditDraft::new(&ctx.actor, "review.opened", Some(&input.run_id))
            .operation(&OperationId::new(&input.run_id, "review", None))
            .detail(json!({"taskId": task.task_id, "deadline": task.deadline, "reasons": codes}));
        let _ = record(store, ctx, &input.document_id, vec![], draft).await?;
    }
    Ok(opened.task().clone())
}

/// A reviewer's decision on `task_id`; see the module docs. Returns the task as decided.
pub async fn decide<S: Store, R: ReviewStore, C: TaskCallback>(
    store: &S,
    reviews: &R,
    callback: &C,
    ctx: &Context,
    reviewer: &Reviewer,
    task_id: &TaskId,
    request: &Request,
) -> Result<ReviewTask, Error> {
    let task = reviews
        .get(task_id)
        .await?
        .ok_or_else(|| not_found(task_id))?;
    authorize(reviewer, &task)?;
    let now = ctx.clock.now();
    let (decision, approved) = match request {
        Request::Approve { set, comment } => {
            let (decision, fields) = ReviewDecision::approve(
                &task,
                reviewer,
                set,
                comment.as_deref(),
                &ctx.config,
                now,
            )?;
            (decision, Some(fields))
        }
        Request::Reject { reason } => (ReviewDecision::reject(reviewer, reason, now)?, None),
    };
    // A concurrent or repeated decision is refused with the recorded one (first one wins).
    if let Err(refusal) = reviews.decide(task_id, &decision).await? {
        return Err(refusal.error());
    }
    // Ours is the decision: record it, then send the one callback.
    let op = OperationId::new(&task.run_id, "review", None);
    let action = if decision.is_approval() {
        "review.approved"
    } else {
        "review.rejected"
    };
    let draft = AuditDraft::new(&ctx.actor, action, Some(&task.run_id))
        .operation(&op)
        .detail(decision.audit_detail(task_id));
    let _ = record(store, ctx, &task.document_id, vec![], draft).await?;
    let token = reviews
        .token(task_id)
        .await?
        .ok_or_else(|| Error::Internal(format!("review task {task_id} has no token")))?;
    let sent = match approved {
        Some(fields) => {
            let output = Reviewed {
                task_id: task_id.clone(),
                reviewer: reviewer.id.clone(),
                fields,
            };
            let output = serde_json::to_value(&output).expect("review outputs serialize");
            callback.succeed(&token, &output).await
        }
        None => {
            let cause = format!("rejected by reviewer {}", reviewer.id);
            callback
                .fail(&token, "Business.ReviewRejected", &cause)
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
            reviews.expire(task_id, &expiry).await?;
            let draft = AuditDraft::new(&ctx.actor, "review.expired", Some(&task.run_id))
                .operation(&op)
                .detail(json!({"taskId": task_id, "reason": reason, "decidedBy": reviewer.id}));
            let _ = record(store, ctx, &task.document_id, vec![], draft).await?;
            Err(Error::ReviewExpired(format!(
                "review task {task_id}: decided by {} but the workflow no longer waits ({reason})",
                reviewer.id
            )))
        }
        // The task stays decided and undelivered; the caller gets the error and may repeat the
        // same decision, which the store acknowledges, and the callback is sent again.
        Err(other) => Err(other),
    }
}

/// The wait for a decision timed out: the task expires and the run is escalated to its owner.
pub async fn escalate<S: Store, R: ReviewStore>(
    store: &S,
    reviews: &R,
    ctx: &Context,
    input: &RunInput,
) -> Result<(), Error> {
    let task_id = task_id_for(&input.run_id);
    let now = ctx.clock.now();
    let expiry = Expiry {
        reason: "States.Timeout".into(),
        at: rfc3339(now),
    };
    if reviews.get(&task_id).await?.is_some() {
        reviews.expire(&task_id, &expiry).await?;
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
        .operation(&OperationId::new(&input.run_id, "escalate", None))
        .detail(json!({"taskId": task_id, "owner": owner, "reason": "review not decided in time"}));
    // Refused: already escalated by an earlier attempt.
    let _ = record(store, ctx, &input.document_id, vec![change], draft).await?;
    Ok(())
}

fn rfc3339(t: OffsetDateTime) -> String {
    crate::review::rfc3339(t)
}
