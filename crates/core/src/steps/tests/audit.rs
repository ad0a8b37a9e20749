//! `steps::record`: audit appends under contention and lost answers.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_audit_appends_leave_no_gap_and_no_fork() {
    let store = std::sync::Arc::new(Interleaved::default());
    let w = world();
    let document = DocumentId::for_rejected_key("k");
    // All twenty start together: spawned one by one on a busy machine, each could finish
    // before the next began, and nothing would overlap.
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(20));
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let (store, ctx, document) = (store.clone(), w.ctx.clone(), document.clone());
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                let draft = crate::audit::AuditDraft::new("t", &format!("a{i}"), None);
                crate::steps::record(&*store, &ctx, &document, vec![], draft).await
            })
        })
        .collect();

    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await.unwrap());
    }

    // The appends did overlap: some read a head another had already moved.
    let refused = store.refused.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        refused > 0,
        "no append was refused: they ran one after another"
    );
    // Each append either landed or gave up after contention (a transient error the ASL retries),
    // at least one landed, and whatever landed forms one unbroken chain.
    let landed = outcomes.iter().filter(|r| matches!(r, Ok(Ok(_)))).count();
    assert!(
        outcomes
            .iter()
            .all(|r| matches!(r, Ok(Ok(_)) | Err(Error::InProgress(_)))),
        "{outcomes:?}"
    );
    assert!(landed > 0, "every append gave up");
    let chain = store.audit_entries(&document).await.unwrap();
    assert_eq!(chain.len(), landed);
    assert_eq!(verify(&document, &chain, None), Ok(()));
}

/// A memory store whose every call yields to the runtime before it runs, so that concurrent
/// callers interleave between reading the chain's head and committing after it (a plain
/// [`MemoryStore`] never awaits, so its callers would run one after another). Counts the commits
/// it refused.
#[derive(Default)]
struct Interleaved {
    inner: MemoryStore,
    refused: std::sync::atomic::AtomicUsize,
}

impl Store for Interleaved {
    async fn commit(
        &self,
        changes: Vec<crate::ports::Change>,
    ) -> Result<Result<(), crate::ports::Refused>, Error> {
        tokio::task::yield_now().await;
        let result = self.inner.commit(changes).await;
        if matches!(result, Ok(Err(_))) {
            self.refused
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        result
    }
    async fn run(&self, id: &crate::ids::RunId) -> Result<Option<crate::ports::RunRecord>, Error> {
        tokio::task::yield_now().await;
        self.inner.run(id).await
    }
    async fn document(
        &self,
        id: &DocumentId,
    ) -> Result<Option<crate::ports::DocumentRecord>, Error> {
        tokio::task::yield_now().await;
        self.inner.document(id).await
    }
    async fn audit_head(&self, id: &DocumentId) -> Result<Option<crate::audit::AuditEntry>, Error> {
        tokio::task::yield_now().await;
        self.inner.audit_head(id).await
    }
    async fn audit_checkpoint(
        &self,
        id: &DocumentId,
    ) -> Result<Option<crate::audit::Checkpoint>, Error> {
        tokio::task::yield_now().await;
        self.inner.audit_checkpoint(id).await
    }
    async fn audit_entries(&self, id: &DocumentId) -> Result<Vec<crate::audit::AuditEntry>, Error> {
        tokio::task::yield_now().await;
        self.inner.audit_entries(id).await
    }
}

/// How [`TwistedStore`] bends its first commit.
enum Twist {
    /// Another writer appends to the chain between our read of the head and our commit.
    RaceForSeq,
    /// The commit lands but its answer is lost (the "lost acknowledgement").
    LoseAnswer,
}

/// A memory store whose first commit is bent by a [`Twist`]; later ones pass through.
struct TwistedStore {
    inner: MemoryStore,
    twist: Twist,
    done: std::sync::atomic::AtomicBool,
}

impl TwistedStore {
    fn new(twist: Twist) -> Self {
        TwistedStore {
            inner: MemoryStore::default(),
            twist,
            done: false.into(),
        }
    }
}

impl Store for TwistedStore {
    async fn commit(
        &self,
        changes: Vec<crate::ports::Change>,
    ) -> Result<Result<(), crate::ports::Refused>, Error> {
        if self.done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return self.inner.commit(changes).await;
        }
        match self.twist {
            Twist::RaceForSeq => {
                if let Some(crate::ports::Change::Audit(ours)) = changes.last() {
                    let mut theirs = ours.clone();
                    theirs.draft.action = "someone.else".into();
                    theirs.hash = theirs.compute_hash();
                    self.inner
                        .commit(vec![crate::ports::Change::Audit(theirs)])
                        .await?
                        .unwrap();
                }
                self.inner.commit(changes).await
            }
            Twist::LoseAnswer => {
                self.inner.commit(changes).await?.unwrap();
                Err(Error::OutcomeUnknown("answer lost".into()))
            }
        }
    }
    async fn run(&self, id: &crate::ids::RunId) -> Result<Option<crate::ports::RunRecord>, Error> {
        self.inner.run(id).await
    }
    async fn document(
        &self,
        id: &DocumentId,
    ) -> Result<Option<crate::ports::DocumentRecord>, Error> {
        self.inner.document(id).await
    }
    async fn audit_head(&self, id: &DocumentId) -> Result<Option<crate::audit::AuditEntry>, Error> {
        self.inner.audit_head(id).await
    }
    async fn audit_checkpoint(
        &self,
        id: &DocumentId,
    ) -> Result<Option<crate::audit::Checkpoint>, Error> {
        self.inner.audit_checkpoint(id).await
    }
    async fn audit_entries(&self, id: &DocumentId) -> Result<Vec<crate::audit::AuditEntry>, Error> {
        self.inner.audit_entries(id).await
    }
}

#[tokio::test]
async fn an_append_that_loses_the_race_for_its_seq_rereads_the_head_and_lands_next() {
    let w = world();
    let store = TwistedStore::new(Twist::RaceForSeq);
    let document = DocumentId::for_rejected_key("k");

    let entry = crate::steps::record(
        &store,
        &w.ctx,
        &document,
        vec![],
        crate::audit::AuditDraft::new("t", "ours", None),
    )
    .await
    .unwrap()
    .unwrap();

    let chain = store.audit_entries(&document).await.unwrap();
    assert_eq!(entry.seq, 2);
    assert_eq!(
        chain
            .iter()
            .map(|e| e.draft.action.as_str())
            .collect::<Vec<_>>(),
        ["someone.else", "ours"]
    );
    assert_eq!(verify(&document, &chain, None), Ok(()));
}

#[tokio::test]
async fn a_commit_whose_answer_is_lost_is_reconciled_not_repeated() {
    let w = world();
    let store = TwistedStore::new(Twist::LoseAnswer);
    let document = DocumentId::for_rejected_key("lost");

    let entry = crate::steps::record(
        &store,
        &w.ctx,
        &document,
        vec![],
        crate::audit::AuditDraft::new("t", "once", None),
    )
    .await
    .unwrap()
    .unwrap();

    let chain = store.audit_entries(&document).await.unwrap();
    assert_eq!(
        chain.len(),
        1,
        "the lost commit is found, not written again"
    );
    assert_eq!(chain[0], entry);
    assert_eq!(*store.inner.commits.lock().unwrap(), 1);
}

// The OCR operation in the ledger: lost answers, crashed holders, duplicates, changed parameters.
