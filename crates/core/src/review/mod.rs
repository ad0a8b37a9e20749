//! Human review (issue 5): a `needs_review` validation decision opens a review task, and the
//! workflow waits on a Step Functions task token (`lambda:invoke.waitForTaskToken`) until a
//! reviewer decides or the deadline passes.
//!
//! ```text
//!   open ──► pending ──decide (first wins)──► decided ──mark_delivered──► decided + deliveredAt
//!               │                                │
//!               └──expire──► expired ◄──expire───┘  (only while the decision is not delivered)
//! ```
//!
//! The rules, which [`crate::memory::MemoryReviewStore`] applies under a lock and
//! `docket_aws::review::DynamoReviewStore` expresses as condition expressions:
//!
//! - **The task id is a function of the run** ([`task_id_for`]): a retried open finds the task.
//! - **Opening is idempotent** ([`reopen`]): a first open creates a `pending` task. A retried open
//!   of a still-pending task keeps the task (its content and creation time) but stores the new
//!   token and deadline: Step Functions issues a new token for every attempt of the Task, the old
//!   attempt's token is dead, and the new attempt's timeout is the one that counts. A retried open
//!   of a decided or expired task writes nothing (the new token is not stored) and returns the
//!   task as recorded; never a second task.
//! - **The token is server-side only**: [`TaskToken`] is not `Serialize`, its `Debug`/`Display`
//!   print `TaskToken(<redacted>)`, it is not a field of [`ReviewTask`], and only
//!   [`ReviewStore::token`] reads it back (for the adapter that calls Step Functions).
//! - **Who may act**: the reviewer's tenant (from the authenticated caller) must be the task's;
//!   otherwise the answer is the same `Business.ReviewNotFound` as for a missing task, so another
//!   tenant cannot even learn that a task exists ([`authorize`]).
//! - **The first decision wins** ([`apply_decision`]): `pending` → `decided` by one conditional
//!   write; a concurrent or repeated decision is refused with the task as recorded
//!   ([`Refusal::AlreadyDecided`] carries the winner's decision). Only the winner sends the one
//!   `SendTaskSuccess` / `SendTaskFailure` (`Business.ReviewRejected`); a loser never does. The
//!   very same decision written again (a retry after a lost acknowledgement) is acknowledged, not
//!   refused, so that the winner still sends.
//! - **Delivery is recorded** ([`ReviewStore::mark_delivered`]): once Step Functions acknowledged
//!   the callback, `deliveredAt` is set, and the decision can no longer be expired.
//! - **Expiring** ([`expire`]) moves `pending` (the deadline passed, the workflow stopped waiting)
//!   or `decided` whose decision was *not delivered* (Step Functions answered the callback with
//!   `TaskTimedOut` / `InvalidToken`, or it was never sent) to `expired`; the decision stays in
//!   the record for audit ("decided too late"). A delivered decision is never expired: the
//!   workflow has acted on it. Caveat for the caller: `TaskTimedOut` also means "already
//!   closed", so after a callback whose answer was lost (`Ambiguous.OutcomeUnknown`, or an SDK
//!   retry after a timeout), a `TaskTimedOut` before the deadline may be the first attempt's
//!   success: reconcile with the execution's history before expiring.
//!
//! [`TaskToken`]: crate::model::run::TaskToken
//! [`ReviewStore::token`]: crate::ports::ReviewStore::token
//! [`ReviewStore::mark_delivered`]: crate::ports::ReviewStore::mark_delivered

pub mod evidence;
pub mod identity;

mod corrections;
mod decision;
mod ids;
mod rules;
mod task;

pub use corrections::{apply_corrections, diff, refused_field};
pub use decision::{FieldChange, FieldValue, ReviewDecision, Reviewer, Verdict, MAX_TEXT_CHARS};
pub use evidence::{outlines, Evidence};
pub use ids::{task_id_for, TaskId};
pub use rules::{apply_decision, authorize, decide, deliver, expire, not_found, reopen};
pub use task::{
    review_fields, rfc3339, ExpireOutcome, Expiry, FieldSource, OldestPending, OpenTask, Opened,
    Refusal, ReviewField, ReviewStatus, ReviewTask,
};

#[cfg(test)]
pub(crate) mod tests;
