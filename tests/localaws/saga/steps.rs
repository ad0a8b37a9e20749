//! Route's saga (`steps::saga::run` and `compensate`) over the DynamoDB store, journal and
//! outbox, with the in-memory bus and consumer: each recorded effect is one TransactWriteItems
//! with its audit entry, a retry repeats nothing, and a lost answer of any of them is reconciled
//! without a second effect. Counted at the wire.

use docket_core::memory::{MemoryBlobs, MemoryBus, MemorySink};
use docket_core::model::run::{ObjectRef, RunInput};
use docket_core::ports::{
    BlobStore, HasBlobs, HasDownstream, HasEvents, HasJournal, HasOutbox, HasStore,
};
use docket_core::saga::{CompensationStatus, Evidence, SagaEnd};
use docket_core::steps::saga;

use super::*;

/// The saga's ports: DynamoDB for what it records, memory for the bus and the consumer.
struct Ports {
    f: Fixture,
    blobs: MemoryBlobs,
    events: MemoryBus,
    downstream: MemorySink,
}

impl HasBlobs for Ports {
    type Blobs = MemoryBlobs;
    fn blobs(&self) -> &MemoryBlobs {
        &self.blobs
    }
}

impl HasStore for Ports {
    type Store = DynamoStore;
    fn store(&self) -> &DynamoStore {
        &self.f.store
    }
}

impl HasJournal for Ports {
    type Journal = DynamoJournal;
    fn journal(&self) -> &DynamoJournal {
        &self.f.journal
    }
}

impl HasOutbox for Ports {
    type Outbox = DynamoOutbox;
    fn outbox(&self) -> &DynamoOutbox {
        &self.f.outbox
    }
}

impl HasEvents for Ports {
    type Events = MemoryBus;
    fn events(&self) -> &MemoryBus {
        &self.events
    }
}

impl HasDownstream for Ports {
    type Downstream = MemorySink;
    fn downstream(&self) -> &MemorySink {
        &self.downstream
    }
}

async fn ports(faults: Faults) -> Ports {
    Ports {
        f: fixture(faults).await,
        blobs: MemoryBlobs::default(),
        events: MemoryBus::default(),
        downstream: MemorySink::default(),
    }
}

impl Ports {
    /// A run of `document` (source order `order`) whose result names invoice `number`.
    async fn routed(
        &self,
        tenant: &Tenant,
        document: &DocumentId,
        order: u32,
    ) -> (RunInput, ObjectRef) {
        let run_id = run(document, order);
        let input = RunInput {
            tenant: tenant.clone(),
            document_id: document.clone(),
            run_id: run_id.clone(),
            raw: ObjectRef::new("raw", format!("inbox/{tenant}/{document}")),
            sha256: "0".repeat(64),
            source_order: format!("{order:020}"),
            config_fingerprint: "fp-saga".into(),
            reuse_ocr: None,
            pages: None,
            read_at_ms: None,
        };
        let result = ObjectRef::new("derived", format!("{run_id}/result.json"));
        let body = serde_json::json!({"fields": {
            "issuer": {"value": "ACME Supplies Ltd"},
            "invoice_number": {"value": util::unique("INV")}}});
        let bytes = serde_json::to_vec(&body).unwrap();
        self.blobs
            .put(&result, bytes, "application/json")
            .await
            .unwrap();
        (input, result)
    }

    /// The audit actions of `input`'s chain.
    async fn chain(&self, input: &RunInput) -> Vec<String> {
        let entries = self
            .f
            .store
            .audit_entries(&input.document_id)
            .await
            .unwrap();
        entries.into_iter().map(|e| e.draft.action).collect()
    }

    /// (TransactWriteItems, PutItem, Scan) sent since the last call.
    fn writes(&self) -> (usize, usize, usize) {
        let sent = self.f.requests.take();
        let n = |op: &str| sent.get(op).copied().unwrap_or(0);
        (n("TransactWriteItems"), n("PutItem"), n("Scan"))
    }
}

#[tokio::test]
async fn each_recorded_effect_is_one_transaction_with_its_audit_entry_and_a_retry_repeats_none() {
    let p = ports(Faults::none()).await;
    let (tenant, document) = document();
    let (input, result) = p.routed(&tenant, &document, 1).await;
    let ctx = ctx();

    let ran = saga::run(&p, &ctx, &input, &result).await.unwrap();
    assert_eq!(ran.status, "completed");
    // Promotion + its journal entry + the event's record; publication settled with the
    // outbox's provider-accepted; delivery settled with confirmed-delivered: three
    // transactions. The publication and the delivery were claimed before (a PutItem each).
    assert_eq!(p.writes(), (3, 2, 0));
    assert_eq!(
        p.chain(&input).await,
        ["result.promoted", "event.published", "downstream.recorded"]
    );
    let journal = p.f.journal.journal(&input.run_id).await.unwrap().unwrap();
    assert!(journal
        .entries
        .iter()
        .all(|e| e.evidence == Evidence::Confirmed));
    assert_eq!(journal.version, 5);
    let event = EventId::new(&input.run_id, EventKind::Accepted);
    let record = p.f.outbox.record(&event).await.unwrap().unwrap();
    assert_eq!(record.delivery, Delivery::ConfirmedDelivered);
    let current = p.f.store.document(&document).await.unwrap().unwrap();
    assert_eq!(current.current_run_id, input.run_id);

    // A retried call writes nothing and publishes nothing again.
    saga::run(&p, &ctx, &input, &result).await.unwrap();
    assert_eq!(p.writes(), (0, 0, 0));
    assert_eq!(p.events.entries.lock().unwrap().len(), 1);
    assert_eq!(*p.downstream.deliveries.lock().unwrap(), 1);

    // A retract undoes the three in reverse order, each one transaction with its entry.
    let ended = saga::compensate(&p, &ctx, &input.run_id, "withdrawn")
        .await
        .unwrap();
    assert_eq!(ended.end, SagaEnd::Compensated);
    // Void, retraction (with its provider-accepted), restore, and the end: four transactions;
    // the start, three attempts and the retraction's record: five PutItems.
    assert_eq!(p.writes(), (4, 5, 0));
    assert_eq!(p.f.store.document(&document).await.unwrap(), None);
    let journal = p.f.journal.journal(&input.run_id).await.unwrap().unwrap();
    assert!(journal
        .entries
        .iter()
        .all(|e| e.compensation == CompensationStatus::Committed));
    assert_eq!(
        p.chain(&input).await[3..],
        [
            "downstream.voided",
            "event.retracted",
            "result.restored",
            "saga.compensated"
        ]
    );
}

#[tokio::test]
async fn a_stale_promotion_writes_no_journal_no_event_and_no_entry() {
    let p = ports(Faults::none()).await;
    let (tenant, document) = document();
    let (older, older_result) = p.routed(&tenant, &document, 1).await;
    let (newer, newer_result) = p.routed(&tenant, &document, 2).await;
    saga::run(&p, &ctx(), &newer, &newer_result).await.unwrap();
    let chain = p.chain(&newer).await;
    p.writes();

    let ran = saga::run(&p, &ctx(), &older, &older_result).await.unwrap();
    assert_eq!(ran.status, "stale");
    assert_eq!(p.writes(), (1, 0, 0), "one transaction, refused");
    // The newer run's records are there; the older's are not.
    assert!(p.f.journal.journal(&newer.run_id).await.unwrap().is_some());
    assert_eq!(p.f.journal.journal(&older.run_id).await.unwrap(), None);
    let event = |run: &RunId| EventId::new(run, EventKind::Accepted);
    assert!(p
        .f
        .outbox
        .record(&event(&newer.run_id))
        .await
        .unwrap()
        .is_some());
    assert_eq!(
        p.f.outbox.record(&event(&older.run_id)).await.unwrap(),
        None
    );
    assert_eq!(p.chain(&newer).await, chain);
}

#[tokio::test]
async fn a_lost_answer_of_any_saga_transaction_is_reconciled_and_no_effect_happens_twice() {
    for nth in 1..=3 {
        let faults = Faults::builder()
            .rule(Rule::lose_response("dynamodb", "TransactWriteItems").nth(nth))
            .build();
        let p = ports(faults).await;
        let (tenant, document) = document();
        let (input, result) = p.routed(&tenant, &document, 1).await;

        let ran = saga::run(&p, &ctx(), &input, &result).await;
        assert_eq!(ran.unwrap().status, "completed", "answer {nth} lost");
        assert_eq!(p.f.faults.injected(), 1, "answer {nth} lost");
        assert_eq!(
            p.writes(),
            (3, 2, 0),
            "answer {nth} lost: nothing sent twice"
        );
        assert_eq!(
            p.chain(&input).await,
            ["result.promoted", "event.published", "downstream.recorded"],
            "answer {nth} lost"
        );
        assert_eq!(p.events.entries.lock().unwrap().len(), 1);
        assert_eq!(*p.downstream.deliveries.lock().unwrap(), 1);
    }
}
