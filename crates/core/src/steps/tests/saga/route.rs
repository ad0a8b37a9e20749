//! Route runs the saga's first two effects: the completion confirms `result.promoted` and
//! persists the event in one commit, then the event is published once, also when the
//! publication failed or its answer was lost and route is retried.

use super::*;
use crate::ports::Outbox;
use crate::steps::route;

impl World {
    /// Route of `input` (auto-approved) again, as the state machine's Retry calls it.
    async fn route_again(&self, input: &RunInput) -> Result<String, Error> {
        let report = self
            .ctx
            .layout
            .validation(&input.tenant, &input.document_id, &input.run_id);
        let routed = route::run(&self.ports, &self.ctx, input, &report, None).await?;
        Ok(routed.status)
    }

    /// How many times `action` is in `input`'s document's chain.
    async fn count(&self, input: &RunInput, action: &str) -> usize {
        let chain = self.chain_of(&input.document_id).await;
        chain.iter().filter(|a| a.as_str() == action).count()
    }
}

#[tokio::test]
async fn a_failed_publication_leaves_the_run_completed_and_the_retry_publishes_once() {
    let w = world();
    let input = w.ocr_ready().await;
    *w.ports.events.fail_next.lock().unwrap() = 1;

    let failed = w.run(&input).await.unwrap_err();
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    let id = EventId::new(&input.run_id, EventKind::Accepted);
    let record = w.ports.store.outbox.record(&id).await.unwrap().unwrap();

    assert_eq!(failed.name(), "Transient.Dependency");
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "committed before publishing"
    );
    assert_eq!(
        record.delivery,
        Delivery::Persisted,
        "persisted with the completion"
    );
    assert!(w.ports.events.published(EventKind::Accepted).is_empty());

    assert_eq!(w.route_again(&input).await.unwrap(), "completed");
    assert_eq!(w.route_again(&input).await.unwrap(), "completed");

    assert_eq!(
        w.ports.events.published(EventKind::Accepted),
        [(id.clone(), None)]
    );
    let record = w.ports.store.outbox.record(&id).await.unwrap().unwrap();
    assert_eq!(record.delivery, Delivery::ProviderAccepted);
    assert_eq!(w.count(&input, "run.completed").await, 1);
    assert_eq!(w.count(&input, "event.published").await, 1);
}

#[tokio::test]
async fn a_lost_publication_answer_is_reconciled_by_event_id_and_published_once() {
    let w = world();
    let input = w.ocr_ready().await;
    *w.ports.events.lose_next.lock().unwrap() = 1;

    let failed = w.run(&input).await.unwrap_err();
    assert_eq!(failed.name(), "Ambiguous.OutcomeUnknown");
    let journal = w.ports.store.journal.journal(&input.run_id).await;
    let journal = journal.unwrap().unwrap();
    assert_eq!(
        journal.entry(Effect::EventPublished).evidence,
        Evidence::Uncertain
    );

    assert_eq!(w.route_again(&input).await.unwrap(), "completed");

    let id = EventId::new(&input.run_id, EventKind::Accepted);
    assert_eq!(w.ports.events.published(EventKind::Accepted), [(id, None)]);
    let journal = w.ports.store.journal.journal(&input.run_id).await;
    let journal = journal.unwrap().unwrap();
    assert_eq!(
        journal.entry(Effect::EventPublished).evidence,
        Evidence::Confirmed
    );
    assert_eq!(w.count(&input, "event.published").await, 1);
}

#[tokio::test]
async fn a_stale_run_promotes_nothing_and_publishes_nothing() {
    let w = world();
    let old = w.ocr_ready().await;
    let new = w.newer_version().await;

    assert_eq!(w.run(&new).await.unwrap().0, "completed");
    assert_eq!(w.run(&old).await.unwrap().0, "stale");

    let newer = EventId::new(&new.run_id, EventKind::Accepted);
    assert_eq!(
        w.ports.events.published(EventKind::Accepted),
        [(newer, None)]
    );
    let older = EventId::new(&old.run_id, EventKind::Accepted);
    assert_eq!(w.ports.store.outbox.record(&older).await.unwrap(), None);
    assert_eq!(
        w.ports.store.journal.journal(&old.run_id).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn a_newer_versions_promotion_records_the_run_it_replaced() {
    let w = world();
    let old = w.ocr_ready().await;
    assert_eq!(w.run(&old).await.unwrap().0, "completed");
    let new = w.newer_version().await;

    assert_eq!(w.run(&new).await.unwrap().0, "completed");

    // The journal keeps what a compensation restores: the run that was current before.
    let journal = w.ports.store.journal.journal(&new.run_id).await;
    let journal = journal.unwrap().unwrap();
    let promoted = journal.entry(Effect::ResultPromoted);
    let previous = promoted.ids.previous.as_ref();
    let previous = previous.expect("the replaced run is recorded");
    assert_eq!(previous.run_id, old.run_id);
    let first = w.ports.store.journal.journal(&old.run_id).await;
    let first = first.unwrap().unwrap();
    let first = first.entry(Effect::ResultPromoted);
    assert_eq!(first.ids.previous, None, "the first version replaced none");
    let entries = w.entries(&new.document_id).await;
    let completed = entries
        .iter()
        .rfind(|e| e.draft.action == "run.completed")
        .unwrap();
    assert_eq!(
        completed.draft.detail["promoted"]["previousRunId"],
        old.run_id.as_str()
    );
}

#[tokio::test]
async fn a_completion_left_unpublished_is_found_by_the_sweeper_and_published_once() {
    // given a route that committed the completion and then failed to publish, for good
    let w = world();
    let input = w.ocr_ready().await;
    *w.ports.events.fail_next.lock().unwrap() = 1;
    let _ = w.run(&input).await.unwrap_err();
    let id = EventId::new(&input.run_id, EventKind::Accepted);
    let now = time::OffsetDateTime::now_utc();
    let a_minute_ago = now - time::Duration::minutes(1);
    let soon = now + time::Duration::seconds(1);

    // when the sweeper looks: a record younger than its cutoff is left to route
    assert!(saga::stuck(&w.ports, a_minute_ago)
        .await
        .unwrap()
        .is_empty());
    let stuck = saga::stuck(&w.ports, soon).await.unwrap();
    assert_eq!(stuck.iter().map(|b| &b.event_id).collect::<Vec<_>>(), [&id]);
    for body in &stuck {
        saga::announce(&w.ports, &w.ctx, &body.run_id)
            .await
            .unwrap();
    }

    // then the event is published once, settled, and no longer stuck; a late route retry
    // publishes nothing more
    assert!(saga::stuck(&w.ports, soon).await.unwrap().is_empty());
    assert_eq!(w.route_again(&input).await.unwrap(), "completed");
    assert_eq!(
        w.ports.events.published(EventKind::Accepted),
        [(id.clone(), None)]
    );
    let journal = w.journal(&input).await;
    assert_eq!(
        journal.entry(Effect::EventPublished).evidence,
        Evidence::Confirmed
    );
    assert_eq!(w.count(&input, "event.published").await, 1);
}

#[tokio::test]
async fn the_sweeper_leaves_a_published_event_and_a_retraction_alone() {
    // given a completed run whose event was published, then retracted
    let w = world();
    let input = w
        .completed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    let soon = time::OffsetDateTime::now_utc() + time::Duration::seconds(1);
    assert!(saga::stuck(&w.ports, soon).await.unwrap().is_empty());
    *w.ports.events.fail_next.lock().unwrap() = 1;
    let _ = w.compensate(&input, "withdrawn").await.unwrap_err();
    let retraction = EventId::new(&input.run_id, EventKind::Retracted);
    let record = w.ports.store.outbox.record(&retraction).await.unwrap();
    assert_eq!(record.map(|r| r.delivery), Some(Delivery::Persisted));

    // then the persisted retraction is not the sweeper's
    assert!(saga::stuck(&w.ports, soon).await.unwrap().is_empty());
}
