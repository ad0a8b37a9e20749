//! [`ReviewStore`] in memory, for unit tests: the rules of [`crate::review`] applied under one
//! lock, as DynamoDB applies their condition expressions to one item at a time.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::ids::Tenant;
use crate::model::run::TaskToken;
use crate::ports::ReviewStore;
use crate::review::{
    apply_decision, deliver, expire, not_found, reopen, ExpireOutcome, Expiry, OpenTask, Opened,
    Refusal, ReviewDecision, ReviewStatus, ReviewTask, TaskId,
};
use crate::Error;

/// Review tasks and their tokens, kept apart from each other as in the DynamoDB table.
#[derive(Debug, Default)]
pub struct MemoryReviewStore {
    tasks: Mutex<BTreeMap<TaskId, (ReviewTask, TaskToken)>>,
}

impl MemoryReviewStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ReviewStore for MemoryReviewStore {
    async fn open(&self, open: OpenTask) -> Result<Opened, Error> {
        open.check()?;
        let mut tasks = self.tasks.lock().unwrap();
        let id = open.task.task_id.clone();
        let Some((existing, token)) = tasks.get_mut(&id) else {
            let created = open.task.clone();
            tasks.insert(id, (open.task, open.token));
            return Ok(Opened::Created(created));
        };
        let opened = reopen(existing, &open)?;
        if let Opened::Reopened(task) = &opened {
            *existing = task.clone();
            *token = open.token;
        }
        Ok(opened)
    }

    async fn get(&self, task: &TaskId) -> Result<Option<ReviewTask>, Error> {
        Ok(self.tasks.lock().unwrap().get(task).map(|(t, _)| t.clone()))
    }

    async fn token(&self, task: &TaskId) -> Result<Option<TaskToken>, Error> {
        Ok(self
            .tasks
            .lock()
            .unwrap()
            .get(task)
            .map(|(_, token)| token.clone()))
    }

    async fn list(
        &self,
        tenant: Option<&Tenant>,
        status: Option<ReviewStatus>,
    ) -> Result<Vec<ReviewTask>, Error> {
        let mut found: Vec<ReviewTask> = self
            .tasks
            .lock()
            .unwrap()
            .values()
            .map(|(t, _)| t)
            .filter(|t| tenant.is_none_or(|tenant| &t.tenant == tenant))
            .filter(|t| status.is_none_or(|status| t.status == status))
            .cloned()
            .collect();
        found.sort_by(|a, b| (&a.created_at, &a.task_id).cmp(&(&b.created_at, &b.task_id)));
        Ok(found)
    }

    async fn oldest_pending(&self) -> Result<Option<crate::review::OldestPending>, Error> {
        let pending = self.list(None, Some(ReviewStatus::Pending)).await?;
        Ok(pending
            .into_iter()
            .next()
            .map(|t| crate::review::OldestPending {
                task_id: t.task_id,
                tenant: t.tenant,
                run_id: t.run_id,
                created_at: t.created_at,
            }))
    }

    async fn decide(
        &self,
        task: &TaskId,
        decision: &ReviewDecision,
    ) -> Result<Result<ReviewTask, Refusal>, Error> {
        let mut tasks = self.tasks.lock().unwrap();
        let (recorded, _) = tasks.get_mut(task).ok_or_else(|| not_found(task))?;
        let decided = apply_decision(recorded, decision.clone())?;
        if let Ok(decided) = &decided {
            *recorded = decided.clone();
        }
        Ok(decided)
    }

    async fn mark_delivered(&self, task: &TaskId, at: &str) -> Result<ReviewTask, Error> {
        let mut tasks = self.tasks.lock().unwrap();
        let (recorded, _) = tasks.get_mut(task).ok_or_else(|| not_found(task))?;
        let delivered = deliver(recorded, at)?;
        *recorded = delivered.clone();
        Ok(delivered)
    }

    async fn expire(&self, task: &TaskId, expiry: &Expiry) -> Result<ExpireOutcome, Error> {
        let mut tasks = self.tasks.lock().unwrap();
        let (recorded, _) = tasks.get_mut(task).ok_or_else(|| not_found(task))?;
        let outcome = expire(recorded, expiry);
        if let ExpireOutcome::Expired(expired) = &outcome {
            *recorded = expired.clone();
        }
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::review::tests::{at, decision_by, pending_task, T0};
    use crate::review::Verdict;

    fn open(task: &ReviewTask, token: &str) -> OpenTask {
        OpenTask {
            task: task.clone(),
            token: TaskToken::new(token).unwrap(),
        }
    }

    #[tokio::test]
    async fn a_repeated_open_keeps_one_task_and_stores_the_newest_token() {
        // given a task opened once with the first attempt's token
        let store = MemoryReviewStore::new();
        let first = pending_task("acme", "a.pdf");
        let created = store.open(open(&first, "token-1")).await.unwrap();
        // when the Task is retried: the same task, a later deadline, a new token
        let mut retried = first.clone();
        retried.deadline = "2026-03-21T10:00:00.000Z".into();
        retried.created_at = "2026-03-20T10:05:00.000Z".into();
        let reopened = store.open(open(&retried, "token-2")).await.unwrap();
        // then there is one task, created at the first open, waiting until the new deadline,
        // and the store holds the new token
        assert_eq!(created, Opened::Created(first.clone()));
        let Opened::Reopened(task) = reopened else {
            panic!("expected Reopened, got {reopened:?}")
        };
        assert_eq!(task.created_at, first.created_at);
        assert_eq!(task.deadline, "2026-03-21T10:00:00.000Z");
        assert_eq!(store.list(None, None).await.unwrap(), vec![task]);
        let token = store.token(&first.task_id).await.unwrap().unwrap();
        assert_eq!(token.expose(), "token-2");
    }

    #[tokio::test]
    async fn an_open_after_the_decision_writes_nothing_and_keeps_the_old_token() {
        let store = MemoryReviewStore::new();
        let task = pending_task("acme", "a.pdf");
        store.open(open(&task, "token-1")).await.unwrap();
        store
            .decide(&task.task_id, &decision_by("alice", "acme"))
            .await
            .unwrap()
            .unwrap();

        let again = store.open(open(&task, "token-2")).await.unwrap();

        let Opened::Closed(closed) = again else {
            panic!("expected Closed, got {again:?}")
        };
        assert_eq!(closed.status, ReviewStatus::Decided);
        let token = store.token(&task.task_id).await.unwrap().unwrap();
        assert_eq!(token.expose(), "token-1");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_concurrent_decisions_one_wins_and_the_other_sees_the_winners_decision() {
        // given a pending task and two reviewers of its tenant
        let store = Arc::new(MemoryReviewStore::new());
        let task = pending_task("acme", "a.pdf");
        store.open(open(&task, "token-1")).await.unwrap();
        let (alice, bob) = (decision_by("alice", "acme"), decision_by("bob", "acme"));
        // when both decide at the same time (on two threads, released together)
        let start = Arc::new(tokio::sync::Barrier::new(2));
        let calls: Vec<_> = [alice, bob]
            .into_iter()
            .map(|d| {
                let (store, id, start) = (store.clone(), task.task_id.clone(), start.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    store.decide(&id, &d).await.unwrap()
                })
            })
            .collect();
        let mut results = Vec::new();
        for call in calls {
            results.push(call.await.unwrap());
        }
        // then exactly one decision is recorded and the other is told whose it is
        let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        let losers: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!((winners.len(), losers.len()), (1, 1), "{results:?}");
        let recorded = store.get(&task.task_id).await.unwrap().unwrap();
        assert_eq!(&recorded, winners[0]);
        let Refusal::AlreadyDecided(seen) = losers[0] else {
            panic!("expected AlreadyDecided, got {:?}", losers[0])
        };
        assert_eq!(seen.decision, recorded.decision);
        assert_eq!(losers[0].error().name(), "Conflict.AlreadyDecided");
    }

    #[tokio::test]
    async fn a_decision_by_another_tenant_is_not_found_and_records_nothing() {
        let store = MemoryReviewStore::new();
        let task = pending_task("acme", "a.pdf");
        store.open(open(&task, "token-1")).await.unwrap();

        let err = store
            .decide(&task.task_id, &decision_by("mallory", "globex"))
            .await
            .unwrap_err();
        let missing = store
            .decide(
                &crate::review::task_id_for(&pending_task("acme", "b.pdf").run_id),
                &decision_by("alice", "acme"),
            )
            .await
            .unwrap_err();

        assert_eq!(err.name(), "Business.ReviewNotFound");
        assert_eq!(missing.name(), "Business.ReviewNotFound");
        let recorded = store.get(&task.task_id).await.unwrap().unwrap();
        assert_eq!(recorded.status, ReviewStatus::Pending);
    }

    #[tokio::test]
    async fn a_decided_task_expires_until_its_decision_is_delivered() {
        let store = MemoryReviewStore::new();
        let (late, delivered) = (
            pending_task("acme", "late.pdf"),
            pending_task("acme", "ok.pdf"),
        );
        for t in [&late, &delivered] {
            store.open(open(t, "token")).await.unwrap();
            store
                .decide(&t.task_id, &decision_by("alice", "acme"))
                .await
                .unwrap()
                .unwrap();
        }
        store
            .mark_delivered(&delivered.task_id, &at(T0 + 60))
            .await
            .unwrap();
        let expiry = Expiry {
            reason: "TaskTimedOut".into(),
            at: at(T0 + 61),
        };

        let expired = store.expire(&late.task_id, &expiry).await.unwrap();
        let repeated = store.expire(&late.task_id, &expiry).await.unwrap();
        let other = Expiry {
            reason: "States.Timeout".into(),
            at: at(T0 + 62),
        };
        let again = store.expire(&late.task_id, &other).await.unwrap();
        let kept = store.expire(&delivered.task_id, &expiry).await.unwrap();

        let ExpireOutcome::Expired(task) = &expired else {
            panic!("expected Expired, got {expired:?}")
        };
        assert_eq!(task.status, ReviewStatus::Expired);
        assert!(matches!(
            task.decision.as_ref().map(|d| &d.verdict),
            Some(Verdict::Approve { .. })
        ));
        assert_eq!(repeated, expired);
        assert!(matches!(again, ExpireOutcome::AlreadyExpired(_)));
        assert!(matches!(kept, ExpireOutcome::Delivered(_)));
        let listed = store
            .list(Some(&late.tenant), Some(ReviewStatus::Expired))
            .await
            .unwrap();
        assert_eq!(listed, vec![task.clone()]);
    }

    #[tokio::test]
    async fn list_is_scoped_to_a_tenant_and_a_status_oldest_first() {
        let store = MemoryReviewStore::new();
        let mut a = pending_task("acme", "a.pdf");
        let mut b = pending_task("acme", "b.pdf");
        let other = pending_task("globex", "a.pdf");
        a.created_at = at(T0 + 10);
        b.created_at = at(T0);
        for t in [&a, &b, &other] {
            store.open(open(t, "token")).await.unwrap();
        }
        store
            .decide(&a.task_id, &decision_by("alice", "acme"))
            .await
            .unwrap()
            .unwrap();

        let acme = store.list(Some(&a.tenant), None).await.unwrap();
        let pending = store
            .list(Some(&a.tenant), Some(ReviewStatus::Pending))
            .await
            .unwrap();

        let ids = |ts: &[ReviewTask]| ts.iter().map(|t| t.task_id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&acme), vec![b.task_id.clone(), a.task_id.clone()]);
        assert_eq!(ids(&pending), vec![b.task_id.clone()]);
    }

    #[tokio::test]
    async fn the_oldest_pending_task_is_of_any_tenant_and_never_a_decided_one() {
        let store = MemoryReviewStore::new();
        assert_eq!(store.oldest_pending().await.unwrap(), None);
        let mut decided = pending_task("acme", "a.pdf");
        let mut globex = pending_task("globex", "b.pdf");
        let acme = pending_task("acme", "c.pdf");
        decided.created_at = at(T0 - 100);
        globex.created_at = at(T0 - 10);
        for t in [&decided, &globex, &acme] {
            store.open(open(t, "token")).await.unwrap();
        }
        store
            .decide(&decided.task_id, &decision_by("alice", "acme"))
            .await
            .unwrap()
            .unwrap();

        let oldest = store.oldest_pending().await.unwrap().unwrap();

        assert_eq!(oldest.task_id, globex.task_id);
        assert_eq!(oldest.tenant.as_str(), "globex");
        assert_eq!(oldest.created_at, globex.created_at);
    }
}
