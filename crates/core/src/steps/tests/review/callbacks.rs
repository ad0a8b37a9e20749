//! Callbacks to Step Functions that fail, and repeats of a decision.

use super::*;

/// A callback whose next `fail_next` calls fail as an unavailable Step Functions would.
#[derive(Default)]
struct FlakyCallback {
    inner: MemoryCallback,
    fail_next: Mutex<usize>,
}

impl FlakyCallback {
    fn unavailable(&self) -> Result<(), Error> {
        let mut fail = self.fail_next.lock().unwrap();
        if *fail > 0 {
            *fail -= 1;
            return Err(Error::Dependency("SendTask*: service unavailable".into()));
        }
        Ok(())
    }
}

/// The world's ports with another callback.
struct WithCallback<'a, C> {
    ports: &'a MemoryPorts,
    callback: &'a C,
}

impl<C: Sync> HasStore for WithCallback<'_, C> {
    type Store = MemoryStore;
    fn store(&self) -> &MemoryStore {
        &self.ports.store
    }
}

impl<C: Sync> HasReviews for WithCallback<'_, C> {
    type Reviews = MemoryReviewStore;
    fn reviews(&self) -> &MemoryReviewStore {
        &self.ports.reviews
    }
}

impl<C: TaskCallback> HasCallback for WithCallback<'_, C> {
    type Callback = C;
    fn callback(&self) -> &C {
        self.callback
    }
}

impl World {
    /// A decision whose callback goes through `callback` instead of the world's.
    async fn decide_via<C: TaskCallback>(
        &self,
        callback: &C,
        ctx: &Context,
        who: &Reviewer,
        task: &TaskId,
        request: &Request,
    ) -> Result<ReviewTask, Error> {
        let ports = WithCallback {
            ports: &self.ports,
            callback,
        };
        decide(&ports, ctx, who, task, request).await
    }
}

/// A world where alice approved a task (total 120.00) and the callback failed (Step Functions
/// unavailable once): the decision is recorded and undelivered.
async fn approval_whose_callback_failed() -> (World, Validated, ReviewTask, FlakyCallback, Request)
{
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    let callback = FlakyCallback::default();
    *callback.fail_next.lock().unwrap() = 1;
    let request = approve(&[("total_amount", "120.00")]);
    let first = w
        .decide_via(&callback, &w.ctx, &alice(), &task.task_id, &request)
        .await;
    assert_eq!(first.unwrap_err().name(), "Transient.Dependency");
    (w, v, task, callback, request)
}

impl TaskCallback for FlakyCallback {
    async fn succeed(&self, token: &TaskToken, output: &Value) -> Result<(), Error> {
        self.unavailable()?;
        self.inner.succeed(token, output).await
    }

    async fn fail(&self, token: &TaskToken, error: ErrorKind, cause: &str) -> Result<(), Error> {
        self.unavailable()?;
        self.inner.fail(token, error, cause).await
    }
}

#[tokio::test]
async fn a_callback_that_fails_leaves_the_decision_recorded_and_undelivered() {
    // given a pending task and Step Functions unavailable for one call
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    let callback = FlakyCallback::default();
    *callback.fail_next.lock().unwrap() = 1;

    // when alice approves
    let err = w
        .decide_via(
            &callback,
            &w.ctx,
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", "120.00")]),
        )
        .await
        .unwrap_err();

    // then she gets the transient error; her decision is recorded and audited, not
    // delivered, and the task is not expired
    assert_eq!(err.name(), "Transient.Dependency");
    let recorded = w.task(&task.task_id).await;
    assert_eq!(recorded.status, ReviewStatus::Decided);
    assert!(recorded.delivered_at.is_none());
    assert_eq!(recorded.decision.as_ref().unwrap().reviewer, alice());
    assert!(callback.inner.calls.lock().unwrap().is_empty());
    assert_eq!(w.entries_of(&v.input, "review.approved").await.len(), 1);
}

#[tokio::test]
async fn a_decision_retried_after_a_failed_callback_is_sent_again() {
    // given alice's approval whose callback failed (Step Functions unavailable)
    let (w, v, task, callback, request) = approval_whose_callback_failed().await;

    // when she repeats the same request a second later, as the step's comment tells her to
    let retried = w
        .decide_via(&callback, &w.later(1), &alice(), &task.task_id, &request)
        .await;

    // then the recorded decision is sent and delivered, once, with one approval entry
    let delivered = retried.expect("the retry delivers the recorded decision");
    assert!(delivered.delivered_at.is_some());
    assert_eq!(callback.inner.calls.lock().unwrap().len(), 1);
    assert_eq!(w.entries_of(&v.input, "review.approved").await.len(), 1);
}

#[tokio::test]
async fn a_repeat_of_a_delivered_decision_is_neither_sent_again_nor_audited_as_expired() {
    // given alice's approval, delivered; Step Functions has closed the token since
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    let request = approve(&[("total_amount", "120.00")]);
    let delivered = w.decide(&alice(), &task.task_id, &request).await.unwrap();
    w.ports.callback.closed.lock().unwrap().push("tok-1".into());

    // when the very same decision comes again (same instant: the store acknowledges it)
    let again = w.decide(&alice(), &task.task_id, &request).await;

    // then it is acknowledged as delivered: the task stands, and no review.expired entry
    // contradicts it
    assert_eq!(again.expect("acknowledged"), delivered);
    assert_eq!(w.task(&task.task_id).await.status, ReviewStatus::Decided);
    assert!(w.entries_of(&v.input, "review.expired").await.is_empty());
    assert_eq!(w.calls().len(), 1);
}

#[tokio::test]
async fn after_a_failed_callback_only_the_same_reviewer_with_the_same_verdict_resends_it() {
    // given alice's approval whose callback failed (Step Functions unavailable)
    let (w, _, task, callback, request) = approval_whose_callback_failed().await;

    // when bob approves too, and alice changes her mind and rejects
    let by_bob = w
        .decide_via(&callback, &w.later(1), &bob(), &task.task_id, &request)
        .await;
    let rejected = w
        .decide_via(
            &callback,
            &w.later(2),
            &alice(),
            &task.task_id,
            &reject("wrong"),
        )
        .await;

    // then neither is a repeat of alice's approval: both are refused and nothing is sent
    assert_eq!(by_bob.unwrap_err().name(), "Conflict.AlreadyDecided");
    assert_eq!(rejected.unwrap_err().name(), "Conflict.AlreadyDecided");
    assert!(callback.inner.calls.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_delivered_decision_repeated_later_is_refused_and_not_sent_again() {
    // given alice's approval, delivered
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    let request = approve(&[("total_amount", "120.00")]);
    w.decide(&alice(), &task.task_id, &request).await.unwrap();

    // when she sends it again a second later (the store no longer takes it for the same write)
    let again = w
        .decide_with(&w.later(1), &alice(), &task.task_id, &request)
        .await;

    // then it is refused as decided, and Step Functions got one callback
    assert_eq!(again.unwrap_err().name(), "Conflict.AlreadyDecided");
    assert_eq!(w.calls().len(), 1);
}
