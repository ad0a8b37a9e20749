//! The saga at its edges: the ids each settlement records, an uncertain delivery that did land,
//! a compensation retried after a transient failure, and a retraction whose answer was lost.
//! Cases that `make mutants` found unpinned.

use super::*;

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
    let (input, result) = w
        .failing(&w.ports.downstream.fail_deliveries, "Transient.Dependency")
        .await;
    let body = w.event_of(&input, &result, "INV-1").await;
    let receipt = w.ports.downstream.deliver(&body).await.unwrap();

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
