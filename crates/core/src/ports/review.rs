//! Review tasks (DynamoDB): one per run, with the waiting Task's token kept apart.

use std::future::Future;

use crate::ids::Tenant;
use crate::model::run::TaskToken;
use crate::review::{
    ExpireOutcome, Expiry, OldestPending, OpenTask, Opened, Refusal, ReviewDecision, ReviewStatus,
    ReviewTask, TaskId,
};
use crate::Error;

/// Review tasks: one per run, opened idempotently, decided once, the token kept apart.
pub trait ReviewStore: Send + Sync {
    /// Opens `open.task` with its token (one conditional write): see [`Opened`] and
    /// [`reopen`](crate::review::reopen). A task that is not pending and undecided is refused
    /// first ([`OpenTask::check`]).
    fn open(&self, open: OpenTask) -> impl Future<Output = Result<Opened, Error>> + Send;
    /// A task, without its token (strongly consistent).
    fn get(&self, task: &TaskId) -> impl Future<Output = Result<Option<ReviewTask>, Error>> + Send;
    /// The token of the task's waiting attempt: for the adapter that calls Step Functions only.
    fn token(&self, task: &TaskId)
        -> impl Future<Output = Result<Option<TaskToken>, Error>> + Send;
    /// Tasks of one tenant (or all, for operators), optionally of one status, oldest first,
    /// without tokens. By tenant this reads an index, which may lag a write by a moment.
    fn list(
        &self,
        tenant: Option<&Tenant>,
        status: Option<ReviewStatus>,
    ) -> impl Future<Output = Result<Vec<ReviewTask>, Error>> + Send;
    /// The pending task opened first, of any tenant (an index read: it may lag a write by a
    /// moment), for the oldest-open-review metric.
    fn oldest_pending(&self) -> impl Future<Output = Result<Option<OldestPending>, Error>> + Send;
    /// Records `decision` if the task is still pending and of the reviewer's tenant (one
    /// conditional write): the decided task, or the [`Refusal`] with the task as recorded (from
    /// the refused write itself, no second read). A missing task or another tenant's is
    /// `Business.ReviewNotFound`. See [`apply_decision`](crate::review::apply_decision).
    fn decide(
        &self,
        task: &TaskId,
        decision: &ReviewDecision,
    ) -> impl Future<Output = Result<Result<ReviewTask, Refusal>, Error>> + Send;
    /// Records that Step Functions acknowledged the decision's callback at `at` (RFC 3339);
    /// see [`deliver`](crate::review::deliver).
    fn mark_delivered(
        &self,
        task: &TaskId,
        at: &str,
    ) -> impl Future<Output = Result<ReviewTask, Error>> + Send;
    /// Expires the task unless its decision was delivered; see
    /// [`expire`](crate::review::expire). A missing task is `Business.ReviewNotFound`.
    fn expire(
        &self,
        task: &TaskId,
        expiry: &Expiry,
    ) -> impl Future<Output = Result<ExpireOutcome, Error>> + Send;
}
