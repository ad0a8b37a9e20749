//! The saga's writes as they go on the wire: the conditions each carries, in the store's one
//! `TransactWriteItems` and in the adapters' own requests.

use docket_core::ids::{RunId, Tenant};
use docket_core::ports::{Change, Outbox, SagaJournal, Store};
use docket_core::saga::{
    Advance, Delivery, Effect, EffectIds, EventBody, EventId, EventKind, Journal, OutboxRecord,
    PreviousResult, Transition,
};
use serde_json::{json, Value};

use super::*;
use crate::capture::{captured_client, Capture};
use crate::dynamodb::{DynamoStore, Tables};

fn run() -> RunId {
    docket_core::memory::test_run(&Tenant::parse("acme").unwrap(), "a.pdf", "v1")
}

fn journal(version: u64) -> Journal {
    let mut journal = Journal::new(&run());
    let claim = Transition::Claim(Effect::ResultPromoted, EffectIds::default());
    journal = journal.next(&claim).unwrap().unwrap();
    journal.version = version;
    journal
}

fn record() -> OutboxRecord {
    let run = run();
    let body = EventBody {
        event_id: EventId::new(&run, EventKind::Accepted),
        kind: EventKind::Accepted,
        tenant: Tenant::parse("acme").unwrap(),
        document_id: run.document_id(),
        run_id: run.clone(),
        source_order: "01".into(),
        result: "s3://derived/r/result.json".into(),
        result_sha256: "cd".repeat(32),
        invoice_key: "ik-1".into(),
        retracts: None,
    };
    let prepared = OutboxRecord::prepare(body);
    prepared.advanced(&Advance::Persist).unwrap().unwrap()
}

fn sent(capture: &Capture) -> Vec<Value> {
    capture.0.lock().unwrap().clone()
}

fn tables() -> Tables {
    Tables {
        runs: "runs".into(),
        documents: "documents".into(),
        audit: "audit".into(),
        checkpoints: "checkpoints".into(),
        ledger: "ledger".into(),
    }
}

fn store() -> (DynamoStore, Capture) {
    let (client, capture) = captured_client();
    let tables = tables();
    let saga = SagaTables {
        journal: "journal".into(),
        outbox: "outbox".into(),
    };
    (
        DynamoStore::from_client(client, tables).with_saga(saga),
        capture,
    )
}

#[tokio::test]
async fn the_saga_changes_are_conditional_items_of_one_transaction() {
    let (store, capture) = store();
    let accepted = record()
        .advanced(&Advance::ProviderAccepted("e-1".into()))
        .unwrap()
        .unwrap();
    let previous = PreviousResult {
        run_id: run(),
        source_order: "00".into(),
    };
    let changes = vec![
        Change::Journal(journal(1)),
        Change::Journal(journal(3)),
        Change::Outbox {
            record: record(),
            from: None,
        },
        Change::Outbox {
            record: accepted,
            from: Some(Delivery::Persisted),
        },
        Change::Restore {
            document: run().document_id(),
            run: run(),
            previous: Some(previous),
            retracted: false,
        },
        Change::Restore {
            document: run().document_id(),
            run: run(),
            previous: None,
            retracted: false,
        },
    ];
    let _ = store.commit(changes).await;
    let sent = sent(&capture);
    assert_eq!(sent.len(), 1, "one TransactWriteItems");
    let items = sent[0]["TransactItems"].as_array().unwrap();
    let conditions: Vec<_> = items
        .iter()
        .map(|i| {
            let (kind, op) = i.as_object().unwrap().iter().next().unwrap();
            (
                kind.as_str(),
                op["TableName"].as_str().unwrap(),
                op["ConditionExpression"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        conditions,
        [
            ("Put", "journal", "attribute_not_exists(runId)"),
            ("Put", "journal", "version = :prev"),
            ("Put", "outbox", "attribute_not_exists(eventId)"),
            ("Put", "outbox", "#delivery = :from"),
            ("Update", "documents", "currentRunId = :run"),
            ("Delete", "documents", "currentRunId = :run"),
        ]
    );
    // The version read, the state read, the run that must still be current.
    assert_eq!(
        items[1]["Put"]["ExpressionAttributeValues"][":prev"],
        json!({"N": "2"})
    );
    assert_eq!(items[1]["Put"]["Item"]["version"], json!({"N": "3"}));
    assert_eq!(
        items[3]["Put"]["ExpressionAttributeValues"][":from"],
        json!({"S": "persisted"})
    );
    assert_eq!(
        items[3]["Put"]["Item"]["delivery"],
        json!({"S": "provider-accepted"})
    );
    assert_eq!(
        items[4]["Update"]["ExpressionAttributeValues"][":run"],
        json!({"S": run().as_str()})
    );
}

#[tokio::test]
async fn a_store_without_the_saga_tables_refuses_a_saga_change_before_sending() {
    let (client, capture) = captured_client();
    let store = DynamoStore::from_client(client, tables());
    let err = store
        .commit(vec![Change::Journal(journal(1))])
        .await
        .unwrap_err();
    assert_eq!(err.name(), "Fatal.Internal");
    assert!(sent(&capture).is_empty());
}

#[tokio::test]
async fn the_adapters_read_strongly_and_find_obligations_and_stale_records_by_query() {
    let (client, capture) = captured_client();
    let journals = DynamoJournal::new(client.clone(), "journal");
    let outbox = DynamoOutbox::new(client, "outbox");
    let _ = journals.journal(&run()).await;
    let _ = journals.put(&journal(2)).await;
    let _ = journals.failed().await;
    let _ = outbox.record(&record().body.event_id).await;
    let _ = outbox.persist(OutboxRecord::prepare(record().body)).await;
    let _ = outbox
        .entered_between(
            Delivery::ProviderAccepted,
            time::macros::datetime!(2026-11-30 00:00 UTC),
            time::macros::datetime!(2026-12-01 00:00 UTC),
        )
        .await;
    let sent = sent(&capture);
    assert_eq!(sent.len(), 6);
    assert_eq!(sent[0]["ConsistentRead"], json!(true));
    assert_eq!(sent[1]["ConditionExpression"], json!("version = :prev"));
    assert_eq!(
        sent[1]["ReturnValuesOnConditionCheckFailure"],
        json!("ALL_OLD")
    );
    assert_eq!(sent[2]["IndexName"], json!("by-obligation"));
    assert_eq!(
        sent[2]["ExpressionAttributeValues"][":failed"],
        json!({"S": "failed-manual-review"})
    );
    assert_eq!(sent[3]["ConsistentRead"], json!(true));
    assert_eq!(
        sent[4]["ConditionExpression"],
        json!("attribute_not_exists(eventId)")
    );
    assert_eq!(sent[4]["Item"]["delivery"], json!({"S": "persisted"}));
    assert_eq!(sent[5]["IndexName"], json!("by-delivery"));
    assert_eq!(
        sent[5]["KeyConditionExpression"],
        json!("#delivery = :delivery AND #since BETWEEN :after AND :before")
    );
    let values = &sent[5]["ExpressionAttributeValues"];
    assert_eq!(values[":delivery"], json!({"S": "provider-accepted"}));
    assert_eq!(values[":after"], json!({"S": "2026-11-30T00:00:00Z"}));
    assert_eq!(values[":before"], json!({"S": "2026-12-01T00:00:00Z"}));
}

#[test]
fn only_a_journal_with_a_failed_compensation_is_in_the_obligation_index() {
    let mut j = journal(1);
    assert!(!journal::item(&j).contains_key(journal::OBLIGATION));
    j.entries[0].compensation = docket_core::saga::CompensationStatus::FailedManualReview;
    let item = journal::item(&j);
    let obligation = item.get(journal::OBLIGATION).and_then(|v| v.as_s().ok());
    assert_eq!(obligation.map(String::as_str), Some("failed-manual-review"));
    assert_eq!(journal::from_item(&item).unwrap(), j, "read back whole");
}
