//! `docket retract`: an operator withdraws a document's accepted result. The consumer's record is
//! voided by its receipt id, `document.retracted` names the original event, the previous
//! version is current again; a second retract does nothing and says why, and concurrent
//! retracts compensate once.

use super::*;
use crate::steps::saga::Retraction;

const KEY: &str = "inbox/acme/inv.png";

impl World {
    /// A version of the invoice uploaded at `time`, routed, and recorded by the consumer.
    async fn accepted(&self, time: &str) -> RunInput {
        let (input, body) = self.published_run_at(KEY, time).await;
        self.answer(&self.consumer_answer(&body)).await;
        input
    }

    async fn retract(&self, input: &RunInput) -> Retraction {
        saga::retract(&self.ports, &self.ctx, &input.document_id, "sent in error")
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn a_retract_voids_the_record_retracts_the_event_and_restores_the_previous_version_once() {
    let w = world();
    let v1 = w.accepted("2026-11-30T10:00:00Z").await;
    let v2 = w.accepted("2026-11-30T11:00:00Z").await;
    let receipt = w
        .journal(&v2)
        .await
        .entry(Effect::DownstreamRecorded)
        .ids
        .receipt_id
        .clone();
    let before = w.wire();

    let first = w.retract(&v2).await;
    let after_first = w.wire();
    let second = w.retract(&v2).await;

    assert_eq!(first.status, "retracted", "{first:?}");
    assert_eq!(first.end, Some(SagaEnd::Compensated));
    assert_eq!(first.current_run_id.as_ref(), Some(&v1.run_id));
    assert_eq!(
        *w.ports.downstream.voids.lock().unwrap(),
        [receipt.expect("v2 was recorded")],
        "voided by the receipt id the journal holds"
    );
    assert_eq!(
        w.published(EventKind::Retracted),
        [(
            EventId::new(&v2.run_id, EventKind::Retracted),
            Some(accepted_id(&v2))
        )]
    );
    assert_eq!(w.current(&v2).await, Some(v1.run_id.to_string()));
    let run = w.ports.store.run(&v2.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Retracted);
    assert_eq!(run.error, None);
    assert_eq!((after_first.0 - before.0, after_first.2 - before.2), (1, 1));

    assert_eq!(second.status, "already-retracted", "{second:?}");
    assert_eq!(second.run_id.as_ref(), Some(&v2.run_id));
    assert!(
        second.message.contains("nothing more to retract"),
        "{}",
        second.message
    );
    assert_eq!(w.wire(), after_first, "the second retract did nothing");
    let v1_run = w.ports.store.run(&v1.run_id).await.unwrap().unwrap();
    assert_eq!(
        v1_run.status,
        RunStatus::Completed,
        "the previous version is untouched"
    );
}

#[tokio::test]
async fn a_retract_of_the_only_version_leaves_nothing_accepted_and_a_second_says_so() {
    let w = world();
    let v1 = w.accepted("2026-11-30T10:00:00Z").await;

    let first = w.retract(&v1).await;
    let second = w.retract(&v1).await;

    assert_eq!(first.status, "retracted");
    assert_eq!(first.current_run_id, None);
    assert_eq!(w.current(&v1).await, None);
    assert_eq!(second.status, "nothing-accepted", "{second:?}");
    assert!(second.message.contains("nothing to retract"));
    assert_eq!(w.published(EventKind::Retracted).len(), 1);
}

#[tokio::test]
async fn concurrent_retracts_compensate_once() {
    let w = world();
    w.accepted("2026-11-30T10:00:00Z").await;
    let v2 = w.accepted("2026-11-30T11:00:00Z").await;

    let (a, b) = tokio::join!(
        saga::retract(&w.ports, &w.ctx, &v2.document_id, "first"),
        saga::retract(&w.ports, &w.ctx, &v2.document_id, "second"),
    );

    let ok: Vec<_> = [a, b].into_iter().filter_map(Result::ok).collect();
    assert!(!ok.is_empty(), "at least one retract answered");
    assert_eq!(w.ports.downstream.voids.lock().unwrap().len(), 1);
    assert_eq!(w.published(EventKind::Retracted).len(), 1);
    let chain = w.saga_chain(&v2).await;
    let restored = chain.iter().filter(|a| *a == "result.restored").count();
    assert_eq!(restored, 1, "{chain:?}");
    let journal = w.journal(&v2).await;
    assert_eq!(
        journal.compensation_reason.as_deref(),
        Some("retracted: first"),
        "the first reason stands"
    );
}
