//! The consumer's handler over the in-memory book: a batch answers per message, a republished
//! event (a new envelope id, the same `detail.eventId`) is applied once and answered the same,
//! a failed message is reported by its id only.

use docket_core::ids::Tenant;
use docket_core::memory::{accepted_event, MemoryPayable};
use docket_core::saga::sink::Answer;
use docket_core::saga::EventBody;
use serde_json::{json, Value};

use super::handle;

fn accepted(logical_key: &str, number: &str) -> EventBody {
    accepted_event(&Tenant::parse("acme").unwrap(), logical_key, "1", number)
}

/// An SQS message carrying `body` as EventBridge delivers it, under envelope id `envelope`.
fn message(id: &str, envelope: &str, body: &EventBody) -> Value {
    let event = json!({
        "version": "0", "id": envelope, "source": "docket.route",
        "detail-type": body.kind.name(), "account": "000000000000",
        "time": "2026-12-01T00:00:00Z", "region": "us-east-1", "resources": [],
        "detail": body,
    });
    json!({"messageId": id, "body": event.to_string(), "eventSource": "aws:sqs"})
}

async fn run(ports: &MemoryPayable, messages: Vec<Value>) -> Value {
    let event = serde_json::from_value(json!({ "Records": messages })).unwrap();
    handle(ports, event).await.unwrap()
}

#[tokio::test]
async fn a_republished_event_is_applied_once_and_answered_the_same() {
    let ports = MemoryPayable::default();
    let event = accepted("inv.png", "INV-1");
    let copy = accepted("copy.png", "INV-1");
    let out = run(
        &ports,
        vec![
            message("m1", "env-1", &event),
            message("m2", "env-2", &event),
            message("m3", "env-3", &copy),
        ],
    )
    .await;
    assert_eq!(out, json!({"batchItemFailures": []}));
    let answers = ports.answers.lock().unwrap().clone();
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0], answers[1], "the same answer twice");
    assert_eq!(answers[0].detail_type(), "document.recorded");
    assert_eq!(
        answers[2],
        Answer::Refused {
            event_id: copy.event_id.clone(),
            error: "Business.DuplicateInvoice".into()
        }
    );
    let book = ports.book.lock().unwrap();
    assert!(
        book.receipt_for(&copy.event_id).is_none(),
        "nothing written"
    );
}

#[tokio::test]
async fn a_failed_answer_or_a_bad_message_is_reported_by_id_and_the_rest_applied() {
    let ports = MemoryPayable::default();
    let event = accepted("inv.png", "INV-1");
    let other = accepted("other.png", "INV-2");
    *ports.fail_answers.lock().unwrap() = 1;
    let mut wrong_kind = message("m3", "env-3", &other);
    wrong_kind["body"] = json!(wrong_kind["body"].as_str().unwrap().replace(
        "\"detail-type\":\"document.accepted\"",
        "\"detail-type\":\"document.retracted\""
    ));
    let out = run(
        &ports,
        vec![
            message("m1", "env-1", &event),
            json!({"messageId": "m2", "body": "not json"}),
            wrong_kind,
            message("m4", "env-4", &other),
        ],
    )
    .await;
    assert_eq!(
        out,
        json!({"batchItemFailures": [
            {"itemIdentifier": "m1"}, {"itemIdentifier": "m2"}, {"itemIdentifier": "m3"}
        ]})
    );
    assert_eq!(ports.answers.lock().unwrap().len(), 1, "only m4 answered");
    // The redelivery of m1 finds its dedup record and answers what was committed.
    let out = run(&ports, vec![message("m1", "env-1", &event)]).await;
    assert_eq!(out, json!({"batchItemFailures": []}));
    let receipt = ports
        .book
        .lock()
        .unwrap()
        .receipt_for(&event.event_id)
        .unwrap()
        .receipt_id
        .clone();
    assert_eq!(
        ports.answers.lock().unwrap()[1].detail()["receiptId"],
        json!(receipt.to_string())
    );
}
