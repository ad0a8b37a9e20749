//! The saga at its edges: the ids each settlement records, an uncertain delivery that did land
//! (voided, or looked up instead of sent again), a relay of an event the bus already accepted, a
//! promotion claimed apart from its commit, a withdrawn middle version under a newer one, a
//! compensation retried after a transient failure,
//! and a retraction whose answer was lost. Cases that `make mutants` found unpinned.

use super::*;
use crate::ports::{Change, DocumentRecord};
use crate::saga::{EffectIds, ReceiptId, Transition};

impl World {
    /// A run whose delivery call failed (its evidence uncertain) while the message still reached
    /// the consumer: the run, its result and the receipt the consumer holds.
    async fn delivery_that_landed_unseen(&self) -> (RunInput, ObjectRef, ReceiptId) {
        let knob = &self.ports.downstream.fail_deliveries;
        let (input, result) = self.failing(knob, "Transient.Dependency").await;
        let body = self.event_of(&input, &result, "INV-1").await;
        let receipt = self.ports.downstream.deliver(&body).await.unwrap();
        (input, result, receipt)
    }
}

#[tokio::test]
async fn a_publication_records_the_bus_entry_id_it_was_given() {
    let w = world();
    let input = w
        .completed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;

    let entries = w.ports.events.entries.lock().unwrap().clone();
    let journal = w.journal(&input).await;

    assert_eq!(entries.len(), 1);
    assert_eq!(
        journal
            .entry(Effect::EventPublished)
            .ids
            .entry_id
            .as_deref(),
        Some(entries[0].1.as_str())
    );
}

#[tokio::test]
async fn an_uncertain_delivery_that_did_land_is_voided_by_the_receipt_the_look_up_found() {
    // given a delivery whose call failed, while the message still reached the consumer later
    let w = world();
    let (input, _, receipt) = w.delivery_that_landed_unseen().await;

    // when the run is compensated
    let ended = w.compensate(&input, "withdrawn").await.unwrap();

    // then the look-up found the receipt, recorded it, and the void named it
    assert_eq!(ended.end, SagaEnd::Compensated);
    let journal = w.journal(&input).await;
    let recorded = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(recorded.ids.receipt_id.as_ref(), Some(&receipt));
    assert_eq!(recorded.compensation, CompensationStatus::Committed);
    assert_eq!(*w.ports.downstream.voids.lock().unwrap(), [receipt]);
}

#[tokio::test]
async fn a_compensation_that_fails_once_reports_the_error_for_a_retry_that_commits_it() {
    // given a completed run, and a consumer that fails the first void request
    let w = world();
    let input = w
        .completed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    *w.ports.downstream.fail_voids.lock().unwrap() = 1;

    // when it is retracted, and the retract retried as the state machine's Retry would
    let first = w.compensate(&input, "withdrawn").await;
    let journal = w.journal(&input).await;
    let second = w.compensate(&input, "withdrawn").await.unwrap();

    // then the first attempt reports the transient error (it is not the end), and the retry
    // commits every compensation
    assert_eq!(first.unwrap_err().name(), "Transient.Dependency");
    let recorded = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(recorded.compensation, CompensationStatus::Attempted);
    assert_eq!(second.end, SagaEnd::Compensated);
    // A failure that is retried is no open obligation: no compensation.failed entry.
    let chain = w.saga_chain(&input).await;
    assert!(chain.contains(&"saga.compensated".to_string()), "{chain:?}");
    assert!(
        !chain.contains(&"compensation.failed".to_string()),
        "{chain:?}"
    );
}

#[tokio::test]
async fn a_retraction_whose_answer_was_lost_is_found_on_the_bus_and_not_published_again() {
    // given a completed run whose retraction is accepted by the bus and its answer lost
    let w = world();
    let input = w
        .completed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    *w.ports.events.lose_next.lock().unwrap() = 1;
    let lost = w.compensate(&input, "withdrawn").await;
    assert_eq!(lost.unwrap_err().name(), "Ambiguous.OutcomeUnknown");

    // when the retract is retried
    let ended = w.compensate(&input, "withdrawn").await.unwrap();

    // then the retraction was published once
    assert_eq!(ended.end, SagaEnd::Compensated);
    assert_eq!(w.published(EventKind::Retracted).len(), 1);
}

#[tokio::test]
async fn a_relay_of_an_event_the_bus_accepted_returns_its_entry_and_publishes_nothing() {
    // given a completed run: its outbox record holds the bus's entry id
    let w = world();
    let (input, result) = w
        .routed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    saga::run(&w.ports, &w.ctx, &input, &result).await.unwrap();
    let body = w.event_of(&input, &result, "INV-1").await;
    let before = w.wire();

    // when the relay is asked again (a sweeper, or a retried step)
    let (entry, moved) = saga::relay(&w.ports, &body, false).await.unwrap();

    // then it answers the recorded entry without a second PutEvents
    let journal = w.journal(&input).await;
    let recorded = journal.entry(Effect::EventPublished).ids.entry_id.clone();
    assert_eq!(Some(entry), recorded);
    assert_eq!(moved, None, "the record already shows it");
    assert_eq!(w.wire(), before);
}

#[tokio::test]
async fn an_uncertain_delivery_is_looked_up_by_event_id_before_it_is_sent_again() {
    // given a delivery whose call failed, while the message still reached the consumer
    let w = world();
    let (input, result, receipt) = w.delivery_that_landed_unseen().await;
    let (_, delivered, _, _) = w.wire();

    // when the saga is retried
    let ran = saga::run(&w.ports, &w.ctx, &input, &result).await.unwrap();

    // then the receipt the look-up found is recorded, and nothing was delivered again
    assert_eq!(ran.status, "completed");
    assert_eq!(w.wire().1, delivered, "a second delivery was sent");
    let journal = w.journal(&input).await;
    let recorded = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(recorded.ids.receipt_id.as_ref(), Some(&receipt));
}

/// A journal that claimed `result.promoted` apart from the promotion (as journals did before
/// promotions were committed with their entry), for `input`.
async fn claimed_apart(w: &World, input: &RunInput) {
    let claim = Transition::Claim(Effect::ResultPromoted, EffectIds::default());
    saga::update(&w.ports.store.journal, &input.run_id, &claim)
        .await
        .unwrap();
}

/// The promotion of `input` committed on its own, as it was before promotions were journaled.
async fn promote_apart(w: &World, input: &RunInput) {
    let promoted = Change::Promote(DocumentRecord {
        document_id: input.document_id.clone(),
        tenant: input.tenant.clone(),
        current_run_id: input.run_id.clone(),
        source_order: input.source_order.clone(),
        retracted_run_id: None,
    });
    w.ports.store.commit(vec![promoted]).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_promotion_claimed_apart_that_did_not_land_is_made_on_the_retry() {
    let w = world();
    let (input, result) = w
        .routed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    claimed_apart(&w, &input).await;

    let ran = saga::run(&w.ports, &w.ctx, &input, &result).await.unwrap();

    assert_eq!(ran.status, "completed");
    assert_eq!(w.current(&input).await, Some(input.run_id.to_string()));
}

#[tokio::test]
async fn a_promotion_claimed_apart_that_did_land_is_settled_without_a_second_entry() {
    let w = world();
    let (input, result) = w
        .routed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    claimed_apart(&w, &input).await;
    promote_apart(&w, &input).await;

    let ran = saga::run(&w.ports, &w.ctx, &input, &result).await.unwrap();

    assert_eq!(ran.status, "completed");
    let journal = w.journal(&input).await;
    assert_eq!(
        journal.entry(Effect::ResultPromoted).evidence,
        Evidence::Confirmed
    );
    let chain = w.saga_chain(&input).await;
    let promotions = chain.iter().filter(|a| *a == "result.promoted").count();
    assert_eq!(
        promotions, 0,
        "settled by the look-up, not promoted again: {chain:?}"
    );
}

#[tokio::test]
async fn a_withdrawn_promotion_whose_claim_is_uncertain_is_looked_up_and_undone_if_it_landed() {
    // given two runs whose promotions were claimed apart; only the first one's landed
    let w = world();
    let key = "inbox/acme/inv.png";
    let (landed, _) = w.routed(key, "2026-11-30T10:00:00Z", "INV-1").await;
    let (missing, _) = w
        .routed("inbox/acme/other.png", "2026-11-30T10:00:00Z", "INV-2")
        .await;
    claimed_apart(&w, &landed).await;
    claimed_apart(&w, &missing).await;
    promote_apart(&w, &landed).await;

    // when both are withdrawn
    w.compensate(&landed, "withdrawn").await.unwrap();
    w.compensate(&missing, "withdrawn").await.unwrap();

    // then the look-up found the first promotion and undid it, and not the second
    let entry = |j: &Journal| j.entry(Effect::ResultPromoted).compensation;
    assert_eq!(
        entry(&w.journal(&landed).await),
        CompensationStatus::Committed
    );
    assert_eq!(
        w.current(&landed).await,
        None,
        "the withdrawn result is not current"
    );
    assert_eq!(
        entry(&w.journal(&missing).await),
        CompensationStatus::NotRequired
    );
}

#[tokio::test]
async fn a_withdrawn_middle_version_restores_nothing_while_a_newer_one_is_current() {
    // given three versions of one document, each completed: the third is current
    let w = world();
    let key = "inbox/acme/inv.png";
    let first = w.completed(key, "2026-11-30T10:00:00Z", "INV-1").await;
    let middle = w.completed(key, "2026-11-30T10:01:00Z", "INV-1").await;
    let newest = w.completed(key, "2026-11-30T10:02:00Z", "INV-1").await;
    let recorded = w.journal(&middle).await;
    let previous = recorded.entry(Effect::ResultPromoted).ids.previous.clone();
    assert_eq!(previous.map(|p| p.run_id), Some(first.run_id.clone()));

    // when the middle one is withdrawn
    let ended = w.compensate(&middle, "withdrawn").await.unwrap();

    // then its restore of the first is refused by the store, read back as not required: the
    // newest result stays current
    assert_eq!(ended.end, SagaEnd::Compensated);
    let journal = w.journal(&middle).await;
    assert_eq!(
        journal.entry(Effect::ResultPromoted).compensation,
        CompensationStatus::NotRequired
    );
    assert_eq!(w.current(&middle).await, Some(newest.run_id.to_string()));
}
