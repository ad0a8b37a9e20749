//! What the saga records is one transaction: the journal's write, the outbox's and the audit
//! entry land together or not at all (the memory store applies `Change::Journal`,
//! `Change::Outbox` and `Change::Restore` under the conditions of the DynamoDB adapter).

use super::*;
use crate::audit::{seal, AuditDraft};
use crate::ports::{Change, Outbox, Refused};
use crate::saga::{Advance, EffectIds, OutboxRecord, Transition};

/// The journal of `input`'s run after its promotion was claimed (version 1).
fn claimed(input: &RunInput) -> Journal {
    let claim = Transition::Claim(Effect::ResultPromoted, EffectIds::default());
    Journal::new(&input.run_id).next(&claim).unwrap().unwrap()
}

fn persisted(body: &EventBody) -> OutboxRecord {
    let prepared = OutboxRecord::prepare(body.clone());
    prepared.advanced(&Advance::Persist).unwrap().unwrap()
}

impl World {
    /// The next audit entry of `input`'s chain (`taken`: one whose seq is already used).
    async fn next_entry(&self, input: &RunInput, taken: bool) -> Change {
        let chain = self.entries(&input.document_id).await;
        let prev = match taken {
            true => chain.iter().rev().nth(1).map(|e| e.checkpoint()),
            false => chain.last().map(|e| e.checkpoint()),
        };
        let draft = AuditDraft::new("docket/test", "result.promoted", Some(&input.run_id));
        let time = "2026-11-30T12:00:00Z".to_string();
        Change::Audit(seal(&input.document_id, prev.as_ref(), time, draft))
    }

    async fn stored(&self, input: &RunInput, body: &EventBody) -> (Option<Journal>, bool, usize) {
        let journal = self.ports.store.journal.journal(&input.run_id).await;
        let record = self.ports.store.outbox.record(&body.event_id).await;
        let chain = self.entries(&input.document_id).await.len();
        (journal.unwrap(), record.unwrap().is_some(), chain)
    }
}

#[tokio::test]
async fn a_refused_condition_writes_neither_the_journal_nor_the_outbox_nor_the_audit_entry() {
    let w = world();
    let (input, result) = w
        .routed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    let body = w.event_of(&input, &result, "INV-1").await;
    let before = w.stored(&input, &body).await;
    assert_eq!((&before.0, before.1), (&None, false));
    let saga = |journal: Journal, from| {
        vec![
            Change::Journal(journal),
            Change::Outbox {
                record: persisted(&body),
                from,
            },
        ]
    };

    // The audit append is refused (its seq is taken): nothing else lands either.
    let mut changes = saga(claimed(&input), None);
    changes.push(w.next_entry(&input, true).await);
    let refused = w.ports.store.commit(changes).await.unwrap();
    assert_eq!(refused, Err(Refused { index: 2 }));
    assert_eq!(w.stored(&input, &body).await, before);

    // The journal's version condition is refused (version 2 over no journal): nor the rest.
    let mut skipped = claimed(&input);
    skipped.version = 2;
    let mut changes = saga(skipped, None);
    changes.push(w.next_entry(&input, false).await);
    let refused = w.ports.store.commit(changes).await.unwrap();
    assert_eq!(refused, Err(Refused { index: 0 }));
    assert_eq!(w.stored(&input, &body).await, before);

    // The outbox's condition is refused (it was read `persisted`; it has no record): nor the rest.
    let mut changes = saga(claimed(&input), Some(Delivery::Persisted));
    changes.push(w.next_entry(&input, false).await);
    let refused = w.ports.store.commit(changes).await.unwrap();
    assert_eq!(refused, Err(Refused { index: 1 }));
    assert_eq!(w.stored(&input, &body).await, before);

    // With every condition holding, all three land together (what the reads above look for).
    let mut changes = saga(claimed(&input), None);
    changes.push(w.next_entry(&input, false).await);
    w.ports.store.commit(changes).await.unwrap().unwrap();
    let after = w.stored(&input, &body).await;
    assert_eq!(
        (after.0, after.1, after.2),
        (Some(claimed(&input)), true, before.2 + 1)
    );
}

#[tokio::test]
async fn a_refused_promotion_persists_no_event_and_journals_nothing() {
    let w = world();
    let key = "inbox/acme/inv.png";
    let (older, older_result) = w.routed(key, "2026-11-30T10:00:00Z", "INV-1").await;
    let newer = w.completed(key, "2026-11-30T10:05:00Z", "INV-1").await;
    let commits = *w.ports.store.commits.lock().unwrap();

    let ran = saga::run(&w.ports, &w.ctx, &older, &older_result)
        .await
        .unwrap();
    assert_eq!(ran.status, "stale");
    // The newer run's promotion, journal and event are there; the older's are not.
    let newer_event = w.ports.store.outbox.record(&accepted_id(&newer)).await;
    assert!(newer_event.unwrap().is_some());
    assert!(w
        .ports
        .store
        .journal
        .journal(&newer.run_id)
        .await
        .unwrap()
        .is_some());
    let body = w.event_of(&older, &older_result, "INV-1").await;
    assert_eq!(w.stored(&older, &body).await.0, None);
    assert!(!w.stored(&older, &body).await.1);
    assert_eq!(w.saga_chain(&older).await, ["document.accepted"]);
    assert_eq!(
        *w.ports.store.commits.lock().unwrap(),
        commits,
        "no commit landed"
    );
}

#[tokio::test]
async fn the_promotion_its_journal_entry_the_event_and_the_entry_are_one_commit() {
    let w = world();
    let (input, result) = w
        .routed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    let commits = *w.ports.store.commits.lock().unwrap();
    // The bus is down: the saga stops after the promotion.
    *w.ports.events.fail_next.lock().unwrap() = 1;
    let failed = saga::run(&w.ports, &w.ctx, &input, &result).await;
    assert_eq!(failed.unwrap_err().name(), "Transient.Dependency");

    assert_eq!(*w.ports.store.commits.lock().unwrap(), commits + 1);
    let journal = w.journal(&input).await;
    let promoted = journal.entry(Effect::ResultPromoted);
    assert_eq!(promoted.evidence, Evidence::Confirmed);
    assert_eq!(w.current(&input).await, Some(input.run_id.to_string()));
    let deliveries = w.ports.store.outbox.deliveries();
    assert_eq!(deliveries[&accepted_id(&input)], Delivery::Persisted);
    assert_eq!(
        w.saga_chain(&input).await,
        ["document.accepted", "result.promoted"]
    );
    // The publication was claimed (its own write, before PutEvents) and is still uncertain.
    let published = journal.entry(Effect::EventPublished);
    assert_eq!(published.evidence, Evidence::Uncertain);
    assert_eq!(journal.version, 2);
}

#[tokio::test]
async fn two_concurrent_invocations_of_one_saga_promote_and_record_once() {
    let w = world();
    let (input, result) = w
        .routed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    // The memory journal yields on every read, so the two interleave at each journal access.
    let (a, b) = tokio::join!(
        saga::run(&w.ports, &w.ctx, &input, &result),
        saga::run(&w.ports, &w.ctx, &input, &result)
    );
    // Neither fails: what one finds confirmed by the other happened, once.
    assert_eq!(a.unwrap().status, "completed");
    assert_eq!(b.unwrap().status, "completed");
    let chain = w.saga_chain(&input).await;
    let once = |action: &str| chain.iter().filter(|a| *a == action).count();
    assert_eq!(
        (
            once("result.promoted"),
            once("event.published"),
            once("downstream.recorded")
        ),
        (1, 1, 1),
        "{chain:?}"
    );
    let journal = w.journal(&input).await;
    assert!(journal
        .entries
        .iter()
        .all(|e| e.evidence == Evidence::Confirmed));
    let book = w.ports.downstream.book.lock().unwrap();
    assert!(book.receipt_for(&accepted_id(&input)).is_some());
}
