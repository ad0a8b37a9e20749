//! A decision that read the task while it was pending and reached the store after another one:
//! the store's refusal decides, and the loser sends nothing.

use super::*;
use crate::review::{ExpireOutcome, Expiry, OpenTask, Opened, Refusal, ReviewDecision};

/// The world's review store, except that `get` answers the task as it was before (a read that
/// happened before another reviewer's write landed).
struct ReadBefore<'a> {
    inner: &'a MemoryReviewStore,
    before: ReviewTask,
}

impl ReviewStore for ReadBefore<'_> {
    async fn open(&self, open: OpenTask) -> Result<Opened, Error> {
        self.inner.open(open).await
    }
    async fn get(&self, _: &TaskId) -> Result<Option<ReviewTask>, Error> {
        Ok(Some(self.before.clone()))
    }
    async fn token(&self, task: &TaskId) -> Result<Option<TaskToken>, Error> {
        self.inner.token(task).await
    }
    async fn list(
        &self,
        tenant: Option<&Tenant>,
        status: Option<ReviewStatus>,
    ) -> Result<Vec<ReviewTask>, Error> {
        self.inner.list(tenant, status).await
    }
    async fn oldest_pending(&self) -> Result<Option<crate::review::OldestPending>, Error> {
        self.inner.oldest_pending().await
    }
    async fn decide(
        &self,
        task: &TaskId,
        decision: &ReviewDecision,
    ) -> Result<Result<ReviewTask, Refusal>, Error> {
        self.inner.decide(task, decision).await
    }
    async fn mark_delivered(&self, task: &TaskId, at: &str) -> Result<ReviewTask, Error> {
        self.inner.mark_delivered(task, at).await
    }
    async fn expire(&self, task: &TaskId, expiry: &Expiry) -> Result<ExpireOutcome, Error> {
        self.inner.expire(task, expiry).await
    }
}

/// The world's ports with the review store that read before.
struct Raced<'a> {
    ports: &'a MemoryPorts,
    reviews: ReadBefore<'a>,
}

impl HasStore for Raced<'_> {
    type Store = MemoryStore;
    fn store(&self) -> &MemoryStore {
        &self.ports.store
    }
}

impl<'a> HasReviews for Raced<'a> {
    type Reviews = ReadBefore<'a>;
    fn reviews(&self) -> &ReadBefore<'a> {
        &self.reviews
    }
}

impl HasCallback for Raced<'_> {
    type Callback = MemoryCallback;
    fn callback(&self) -> &MemoryCallback {
        &self.ports.callback
    }
}

#[tokio::test]
async fn a_decision_that_read_the_task_pending_but_lost_the_write_is_refused_and_sends_nothing() {
    // given a pending task that bob reads, and alice's approval, delivered, landing first
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    let raced = Raced {
        ports: &w.ports,
        reviews: ReadBefore {
            inner: &w.ports.reviews,
            before: w.task(&task.task_id).await,
        },
    };
    let request = approve(&[("total_amount", "120.00")]);
    w.decide(&alice(), &task.task_id, &request).await.unwrap();

    // when bob's decision (a rejection, then the same approval) reaches the store
    let rejected = decide(&raced, &w.ctx, &bob(), &task.task_id, &reject("no")).await;
    let approved = decide(&raced, &w.ctx, &bob(), &task.task_id, &request).await;

    // then both are refused with alice's decision, and Step Functions got one callback
    for outcome in [rejected, approved] {
        assert_eq!(outcome.unwrap_err().name(), "Conflict.AlreadyDecided");
    }
    assert_eq!(w.calls().len(), 1);
}
