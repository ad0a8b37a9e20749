//! The rules of a task's life, which the in-memory store applies under a lock and the DynamoDB
//! store as condition expressions: who may act, the first decision wins, an open is idempotent,
//! expiry and delivery.

use time::OffsetDateTime;

use super::task::parse_time;
use super::{
    ExpireOutcome, Expiry, OpenTask, Opened, Refusal, ReviewDecision, ReviewStatus, ReviewTask,
    Reviewer, TaskId,
};
use crate::Error;

/// The answer for a task that does not exist or belongs to another tenant (the same answer,
/// so that it reveals nothing).
pub fn not_found(task: &TaskId) -> Error {
    Error::ReviewNotFound(format!("review task {task} not found"))
}

/// Checks that `reviewer` may see and decide `task`: same tenant. Otherwise
/// `Business.ReviewNotFound`, exactly as for a task that does not exist.
pub fn authorize(reviewer: &Reviewer, task: &ReviewTask) -> Result<(), Error> {
    if reviewer.tenant == task.tenant {
        Ok(())
    } else {
        Err(not_found(&task.task_id))
    }
}

/// What a reviewer's `decision` on `task` leads to at `now`, before anything is written:
/// another tenant's reviewer gets `Business.ReviewNotFound` (the error); a decided or expired
/// task, or a pending one past its deadline, is a [`Refusal`]; otherwise the decided task,
/// which the store then records with [`ReviewStore::decide`](crate::ports::ReviewStore::decide)
/// (where a concurrent decision can
/// still win).
pub fn decide(
    task: &ReviewTask,
    decision: ReviewDecision,
    now: OffsetDateTime,
) -> Result<Result<ReviewTask, Refusal>, Error> {
    authorize(&decision.reviewer, task)?;
    if task.status == ReviewStatus::Pending && now > parse_time("deadline", &task.deadline)? {
        return Ok(Err(Refusal::Expired(task.clone())));
    }
    apply_decision(task, decision)
}

/// The store's rule for recording `decision` on `task` as recorded (the DynamoDB condition is
/// `#status = :pending AND #tenant = :tenant`): a pending task of the reviewer's tenant becomes
/// decided; a decided one is [`Refusal::AlreadyDecided`], an expired one [`Refusal::Expired`];
/// another tenant's is `Business.ReviewNotFound`. The very same decision repeated (its
/// acknowledgement was lost and the write is retried; `decidedAt` makes a decision unique to
/// one request) is acknowledged with the task as recorded, so that the retrying winner still
/// sends its callback. No clock: the deadline is [`decide`]'s.
pub fn apply_decision(
    task: &ReviewTask,
    decision: ReviewDecision,
) -> Result<Result<ReviewTask, Refusal>, Error> {
    authorize(&decision.reviewer, task)?;
    Ok(match task.status {
        ReviewStatus::Pending => {
            let mut decided = task.clone();
            decided.status = ReviewStatus::Decided;
            decided.decision = Some(decision);
            Ok(decided)
        }
        ReviewStatus::Decided if task.decision.as_ref() == Some(&decision) => Ok(task.clone()),
        ReviewStatus::Decided => Err(Refusal::AlreadyDecided(task.clone())),
        ReviewStatus::Expired => Err(Refusal::Expired(task.clone())),
    })
}

/// What an open of `new` finds when `existing` is recorded under the same task id: a pending
/// task is [`Opened::Reopened`] with the new deadline (the store also replaces the token); a
/// decided or expired one is [`Opened::Closed`]. A task of another run or tenant under the same
/// id is a corrupt record: `Fatal.Internal`, nothing written.
pub fn reopen(existing: &ReviewTask, new: &OpenTask) -> Result<Opened, Error> {
    if existing.run_id != new.task.run_id || existing.tenant != new.task.tenant {
        return Err(Error::Internal(format!(
            "review task {} is recorded for another run or tenant",
            existing.task_id
        )));
    }
    Ok(match existing.status {
        ReviewStatus::Pending => {
            let mut task = existing.clone();
            task.deadline = new.task.deadline.clone();
            Opened::Reopened(task)
        }
        ReviewStatus::Decided | ReviewStatus::Expired => Opened::Closed(existing.clone()),
    })
}

/// The rule for expiring `task` (the DynamoDB condition is `#status = :pending OR (#status =
/// :decided AND attribute_not_exists(#deliveredAt))`): pending, or decided without delivery →
/// expired with `expiry` (a decision is kept); decided and delivered →
/// [`ExpireOutcome::Delivered`]; expired → [`ExpireOutcome::AlreadyExpired`], except that the
/// very same expiry repeated (a lost acknowledgement) is acknowledged as
/// [`ExpireOutcome::Expired`].
pub fn expire(task: &ReviewTask, expiry: &Expiry) -> ExpireOutcome {
    match (task.status, &task.delivered_at) {
        (ReviewStatus::Expired, _) if task.expiry.as_ref() == Some(expiry) => {
            ExpireOutcome::Expired(task.clone())
        }
        (ReviewStatus::Expired, _) => ExpireOutcome::AlreadyExpired(task.clone()),
        (ReviewStatus::Decided, Some(_)) => ExpireOutcome::Delivered(task.clone()),
        (ReviewStatus::Pending, _) | (ReviewStatus::Decided, None) => {
            let mut expired = task.clone();
            expired.status = ReviewStatus::Expired;
            expired.expiry = Some(expiry.clone());
            ExpireOutcome::Expired(expired)
        }
    }
}

/// The rule for recording delivery at `at` (the DynamoDB condition is `#status = :decided`): a
/// decided task gets `deliveredAt` (a repeat keeps the first time); a pending one is a bug
/// (`Fatal.Internal`: nothing was decided to deliver); an expired one means Step Functions
/// acknowledged a decision the record gave up on: `Conflict.ReviewExpired`, for an operator.
pub fn deliver(task: &ReviewTask, at: &str) -> Result<ReviewTask, Error> {
    match task.status {
        ReviewStatus::Decided => {
            let mut delivered = task.clone();
            delivered.delivered_at.get_or_insert_with(|| at.to_string());
            Ok(delivered)
        }
        ReviewStatus::Pending => Err(Error::Internal(format!(
            "review task {} has no decision to deliver",
            task.task_id
        ))),
        ReviewStatus::Expired => Err(Error::ReviewExpired(format!(
            "review task {} is expired, but Step Functions acknowledged its decision",
            task.task_id
        ))),
    }
}
