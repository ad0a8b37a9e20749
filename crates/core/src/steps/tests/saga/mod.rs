//! Route's saga over the in-memory ports: here the effects in order with evidence and retried
//! runs; in `compensate` compensation in reverse order after reconciliation, bounded attempts
//! with an owner, retracts. Effects are counted where they happen: bus entries, consumer
//! deliveries and void requests, journal writes, store commits.

use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::ports::{BlobStore, Deliver, SagaJournal};
use crate::saga::{
    CompensationStatus, Delivery, Effect, EventBody, EventId, EventKind, Evidence, Journal, SagaEnd,
};
use crate::steps::saga::{self, Compensation};

const ISSUER: &str = "ACME Supplies Ltd";

impl World {
    /// A run of `key` uploaded at `time` (later is newer), ingested, with the `result.json`
    /// route writes for invoice `number`.
    async fn routed(&self, key: &str, time: &str, number: &str) -> (RunInput, ObjectRef) {
        let input = self.input_of(&self.ingest(&self.upload(key, TIFF, time)).await);
        let result = self
            .ctx
            .layout
            .result(&input.tenant, &input.document_id, &input.run_id);
        let body = json!({"runId": input.run_id, "fields": {
            "issuer": {"value": ISSUER, "confidence": 0.97},
            "invoice_number": {"value": number, "confidence": 0.97}}});
        let bytes = serde_json::to_vec(&body).unwrap();
        self.ports
            .blobs
            .put(&result, bytes, "application/json")
            .await
            .unwrap();
        (input, result)
    }

    /// `routed`, then the saga run to completion.
    async fn completed(&self, key: &str, time: &str, number: &str) -> RunInput {
        let (input, result) = self.routed(key, time, number).await;
        let ran = saga::run(&self.ports, &self.ctx, &input, &result)
            .await
            .unwrap();
        assert_eq!(ran.status, "completed");
        input
    }

    /// A run of an invoice whose saga failed with `expected` once `knob` (a scripted failure
    /// count of a memory port) was set to 1.
    async fn failing(&self, knob: &Mutex<usize>, expected: &str) -> (RunInput, ObjectRef) {
        let (input, result) = self
            .routed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
            .await;
        *knob.lock().unwrap() = 1;
        let failed = saga::run(&self.ports, &self.ctx, &input, &result).await;
        assert_eq!(failed.unwrap_err().name(), expected);
        (input, result)
    }

    /// A run whose saga promoted, then lost PutEvents' answer after the bus accepted the event.
    async fn lost_publish_answer(&self) -> (RunInput, ObjectRef) {
        let lost = self.failing(&self.ports.events.lose_next, "Ambiguous.OutcomeUnknown");
        let (input, result) = lost.await;
        assert_eq!(
            self.published(EventKind::Accepted).len(),
            1,
            "the bus has it"
        );
        (input, result)
    }

    /// The `document.accepted` event the saga publishes for `input`'s invoice `number`.
    async fn event_of(&self, input: &RunInput, result: &ObjectRef, number: &str) -> EventBody {
        let bytes = self.ports.blobs.get(result).await.unwrap();
        let key = crate::saga::outbox::invoice_key(&input.tenant, ISSUER, number);
        EventBody::accepted(input, result, &crate::ids::sha256_hex(&bytes), key)
    }

    async fn journal(&self, input: &RunInput) -> Journal {
        self.ports
            .store
            .journal
            .journal(&input.run_id)
            .await
            .unwrap()
            .expect("a journal")
    }

    async fn compensate(&self, input: &RunInput, reason: &str) -> Result<Compensation, Error> {
        saga::compensate(&self.ports, &self.ctx, &input.run_id, reason).await
    }

    async fn current(&self, input: &RunInput) -> Option<String> {
        let doc = self.ports.store.document(&input.document_id).await.unwrap();
        doc.map(|d| d.current_run_id.to_string())
    }

    /// The audit actions of `input`'s run, in chain order.
    async fn saga_chain(&self, input: &RunInput) -> Vec<String> {
        let entries = self.entries(&input.document_id).await;
        entries
            .iter()
            .filter(|e| e.draft.run_id.as_ref() == Some(&input.run_id))
            .map(|e| e.draft.action.clone())
            .collect()
    }

    fn published(&self, kind: EventKind) -> Vec<(EventId, Option<EventId>)> {
        self.ports.events.published(kind)
    }

    fn wire(&self) -> (usize, usize, usize, usize) {
        (
            self.ports.events.entries.lock().unwrap().len(),
            *self.ports.downstream.deliveries.lock().unwrap(),
            self.ports.downstream.voids.lock().unwrap().len(),
            *self.ports.store.journal.writes.lock().unwrap(),
        )
    }
}

fn accepted_id(input: &RunInput) -> EventId {
    EventId::new(&input.run_id, EventKind::Accepted)
}

mod atomic;
mod compensate;
mod edges;
mod receipt;
mod retract;
mod route;

#[tokio::test]
async fn the_saga_makes_its_effects_in_order_with_evidence_and_the_outbox_delivered() {
    let w = world();
    let input = w
        .completed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;

    let journal = w.journal(&input).await;
    for effect in Effect::ALL {
        assert_eq!(
            journal.entry(effect).evidence,
            Evidence::Confirmed,
            "{effect}"
        );
    }
    let event_id = accepted_id(&input);
    let ids = &journal.entry(Effect::DownstreamRecorded).ids;
    assert_eq!(ids.event_id.as_ref(), Some(&event_id));
    assert!(ids.receipt_id.is_some());
    assert_eq!(journal.entry(Effect::ResultPromoted).ids.previous, None);
    assert_eq!(
        w.ports.store.outbox.deliveries()[&event_id],
        Delivery::ConfirmedDelivered
    );
    assert_eq!(w.current(&input).await, Some(input.run_id.to_string()));
    assert_eq!(
        w.saga_chain(&input).await,
        [
            "document.accepted",
            "result.promoted",
            "event.published",
            "downstream.recorded"
        ]
    );
    // One PutEvents entry, one delivery, no void. Journal writes: the promotion is claimed and
    // confirmed in its own transaction (one write), the publication and the delivery are each
    // claimed before they happen and settled with their audit entry (two writes each).
    assert_eq!(w.wire(), (1, 1, 0, 5));

    // A retried call repeats nothing.
    let result = w
        .ctx
        .layout
        .result(&input.tenant, &input.document_id, &input.run_id);
    saga::run(&w.ports, &w.ctx, &input, &result).await.unwrap();
    assert_eq!(w.wire(), (1, 1, 0, 5));
}

#[tokio::test]
async fn a_first_effect_that_did_not_happen_compensates_nothing_and_ends_not_required() {
    let w = world();
    let key = "inbox/acme/inv.png";
    let (older, older_result) = w.routed(key, "2026-11-30T10:00:00Z", "INV-1").await;
    let newer = w.completed(key, "2026-11-30T10:05:00Z", "INV-1").await;
    let before = w.wire();

    // The promotion is refused (a newer version is current): settled not-attempted.
    let ran = saga::run(&w.ports, &w.ctx, &older, &older_result)
        .await
        .unwrap();
    assert_eq!(ran.status, "stale");
    let ended = w.compensate(&older, "route failed").await.unwrap();
    assert_eq!(ended.end, SagaEnd::NotRequired);
    let journal = w.journal(&older).await;
    for e in &journal.entries {
        assert_eq!(e.evidence, Evidence::NotAttempted, "{}", e.effect);
        assert_eq!(
            e.compensation,
            CompensationStatus::NotRequired,
            "{}",
            e.effect
        );
    }
    let (after, wire) = (w.wire(), |t: (usize, usize, usize, usize)| (t.0, t.1, t.2));
    assert_eq!(
        wire(after),
        wire(before),
        "no publication, delivery or void"
    );
    assert_eq!(w.current(&older).await, Some(newer.run_id.to_string()));
    assert_eq!(
        w.saga_chain(&older).await,
        ["document.accepted", "saga.not-required"]
    );

    // Claimed, then the step died before promoting: the look-up proves it did not happen.
    let w = world();
    let (input, _) = w.routed(key, "2026-11-30T10:00:00Z", "INV-1").await;
    let claim = crate::saga::Transition::Claim(Effect::ResultPromoted, Default::default());
    let claimed = Journal::new(&input.run_id).next(&claim).unwrap().unwrap();
    w.ports.store.journal.put(&claimed).await.unwrap().unwrap();
    assert_eq!(
        w.compensate(&input, "timeout").await.unwrap().end,
        SagaEnd::NotRequired
    );
    let promoted = w.journal(&input).await.entries[0].clone();
    assert_eq!(
        (promoted.evidence, promoted.compensation.name()),
        (Evidence::NotAttempted, "not-required")
    );
}

#[tokio::test]
async fn a_retried_run_after_a_lost_publish_answer_publishes_once_and_delivers_once() {
    let w = world();
    let (input, result) = w.lost_publish_answer().await;
    let ran = saga::run(&w.ports, &w.ctx, &input, &result).await.unwrap();
    assert_eq!(ran.status, "completed");
    assert_eq!(w.published(EventKind::Accepted).len(), 1);
    assert_eq!(*w.ports.downstream.deliveries.lock().unwrap(), 1);

    // A relay that delivers the event again: the consumer answers the first receipt.
    let body = w.event_of(&input, &result, "INV-1").await;
    let again = w.ports.downstream.deliver(&body).await.unwrap();
    let journal = w.journal(&input).await;
    assert_eq!(
        Some(&again),
        journal
            .entry(Effect::DownstreamRecorded)
            .ids
            .receipt_id
            .as_ref()
    );
}
