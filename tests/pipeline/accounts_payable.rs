//! The reference downstream consumer as deployed: events put on the stack's bus (as route's saga
//! will publish them) reach accounts-payable through its queue; its book is read back from its
//! table, and its answers are counted at the wire (LocalStack's wire log names each PutEvents by
//! its detail type and `detail.eventId`). Each event is applied once by `detail.eventId`, though
//! EventBridge gives every PutEvents a new envelope id.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use docket_core::ids::Tenant;
use docket_core::memory::accepted_event;
use docket_core::saga::{EventBody, EventId, ReceiptId, EVENT_SOURCE};
use docket_e2e::stack::{tenant, Stack};
use docket_e2e::util;
use serde_json::json;

/// How long an answer may take: a first delivery (seconds), or a redelivery after the queue's
/// visibility timeout (60 s).
const ANSWER_DEADLINE: Duration = Duration::from_secs(150);

struct Sink {
    stack: Stack,
    events: aws_sdk_eventbridge::Client,
    tenant: Tenant,
}

type Item = HashMap<String, AttributeValue>;

impl Sink {
    async fn new() -> Sink {
        Sink {
            stack: Stack::load().await,
            events: aws_sdk_eventbridge::Client::new(&util::aws().await),
            tenant: Tenant::parse(&tenant()).unwrap(),
        }
    }

    /// The `document.accepted` event of version `order` of `logical_key`, for invoice `number`.
    fn accepted(&self, logical_key: &str, order: &str, number: &str) -> EventBody {
        accepted_event(&self.tenant, logical_key, order, number)
    }

    /// One PutEvents of `body` as route's saga publishes it (a new envelope id each time).
    async fn publish(&self, body: &EventBody) {
        let entry = PutEventsRequestEntry::builder()
            .event_bus_name(self.stack.out("EventBus"))
            .source(EVENT_SOURCE)
            .detail_type(body.kind.name())
            .detail(serde_json::to_string(body).unwrap())
            .build();
        let out = self
            .events
            .put_events()
            .entries(entry)
            .send()
            .await
            .unwrap();
        assert_eq!(out.failed_entry_count(), 0, "{out:?}");
    }

    /// The PutEvents of `detail_type` for `event` that LocalStack accepted.
    async fn sent(&self, detail_type: &str, event: &EventId) -> usize {
        self.stack.event_puts(detail_type, event).await
    }

    /// Waits until as many answers to `event` were sent as `expected` counts, then asserts
    /// them: `[recorded, refused, voided]`. Panics after the deadline.
    async fn expect(&self, event: &EventId, expected: [usize; 3]) {
        let start = Instant::now();
        loop {
            let sent = self.answers(event).await;
            if sent.iter().sum::<usize>() >= expected.iter().sum() {
                assert_eq!(
                    sent, expected,
                    "answers [recorded, refused, voided] to {event}"
                );
                return;
            }
            assert!(
                start.elapsed() < ANSWER_DEADLINE,
                "answers {sent:?} to {event} after {ANSWER_DEADLINE:?}, expected {expected:?}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Every answer to `event`, by detail type.
    async fn answers(&self, event: &EventId) -> [usize; 3] {
        [
            self.sent("document.recorded", event).await,
            self.sent("document.refused", event).await,
            self.sent("document.voided", event).await,
        ]
    }

    async fn item(&self, pk: String) -> Option<Item> {
        let table = self.stack.out("AccountsPayableTable");
        util::get_item(&self.stack.dynamodb, table, "pk", &pk).await
    }

    async fn receipt(&self, event: &EventBody) -> Option<Item> {
        self.item(format!("receipt#{}", ReceiptId::for_event(&event.event_id)))
            .await
    }

    /// The receipt holding `event`'s invoice, if any.
    async fn holder(&self, event: &EventBody) -> Option<String> {
        let entry = self.item(format!("invoice#{}", event.invoice_key)).await?;
        Some(entry["receiptId"].as_s().unwrap().clone())
    }

    /// The consumer's log lines that name `event` (its span's operationId is the event id).
    async fn lines(&self, event: &EventId) -> Vec<String> {
        let group = format!(
            "/aws/lambda/{}",
            self.stack.out("AccountsPayableFunctionName")
        );
        let lines = self.stack.log_messages(&group, None).await;
        lines
            .into_iter()
            .filter(|m| m.contains(event.as_str()))
            .collect()
    }
}

fn voided(item: &Item) -> Option<&str> {
    item.get("voided").map(|v| v.as_s().unwrap().as_str())
}

/// Settles: a redelivery or a stray answer would show by now.
async fn settle() {
    tokio::time::sleep(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn an_event_published_twice_is_applied_once_and_answered_the_same_twice() {
    let sink = Sink::new().await;
    let event = sink.accepted("inv.pdf", "1", "INV-1");
    sink.publish(&event).await;
    sink.publish(&event).await;
    sink.expect(&event.event_id, [2, 0, 0]).await;
    settle().await;
    assert_eq!(
        sink.sent("document.accepted", &event.event_id).await,
        2,
        "the two publications are at the wire"
    );
    assert_eq!(
        sink.answers(&event.event_id).await,
        [2, 0, 0],
        "one answer per delivery, both `recorded`, no refusal"
    );
    let receipt = sink.receipt(&event).await.expect("the receipt is recorded");
    assert_eq!(voided(&receipt), None);
    assert_eq!(
        receipt["eventId"].as_s().unwrap(),
        event.event_id.as_str(),
        "the receipt answers this event"
    );
    let dedup = sink
        .item(format!("event#{}", event.event_id))
        .await
        .expect("the dedup record");
    let record: serde_json::Value = serde_json::from_str(dedup["record"].as_s().unwrap()).unwrap();
    assert_eq!(
        record["answer"]["receiptId"],
        json!(ReceiptId::for_event(&event.event_id).to_string())
    );
    assert_eq!(
        sink.holder(&event).await.as_deref(),
        Some(receipt["receiptId"].as_s().unwrap().as_str())
    );
}

#[tokio::test]
async fn another_document_with_the_same_invoice_is_refused_and_nothing_written() {
    let sink = Sink::new().await;
    let first = sink.accepted("inv.pdf", "1", "INV-7");
    sink.publish(&first).await;
    sink.expect(&first.event_id, [1, 0, 0]).await;
    let holder = sink.holder(&first).await.expect("the invoice is held");

    let copy = sink.accepted("copy-of-inv.pdf", "2", "INV-7");
    assert_eq!(copy.invoice_key, first.invoice_key, "the same invoice");
    sink.publish(&copy).await;
    sink.expect(&copy.event_id, [0, 1, 0]).await;
    settle().await;
    assert_eq!(sink.answers(&copy.event_id).await, [0, 1, 0]);
    assert!(sink
        .item(format!("event#{}", copy.event_id))
        .await
        .is_none());
    assert!(sink.receipt(&copy).await.is_none(), "no receipt written");
    assert_eq!(sink.holder(&first).await, Some(holder), "the entry kept");
    let lines = sink.lines(&copy.event_id).await;
    assert!(
        lines
            .iter()
            .any(|l| l.contains("\"error\":\"Business.DuplicateInvoice\"")),
        "the refusal names Business.DuplicateInvoice: {lines:#?}"
    );
}

#[tokio::test]
async fn a_newer_version_amends_an_older_is_stale_and_a_retraction_voids_once() {
    let sink = Sink::new().await;
    let v1 = sink.accepted("inv.pdf", "1", "INV-3");
    let v2 = sink.accepted("inv.pdf", "2", "INV-3");
    sink.publish(&v1).await;
    sink.expect(&v1.event_id, [1, 0, 0]).await;
    sink.publish(&v2).await;
    sink.expect(&v2.event_id, [1, 0, 0]).await;
    let r2 = ReceiptId::for_event(&v2.event_id).to_string();
    let old = sink.receipt(&v1).await.unwrap();
    assert_eq!(voided(&old), Some(format!("amended by {r2}").as_str()));
    assert_eq!(sink.holder(&v2).await.as_deref(), Some(r2.as_str()));

    let v0 = sink.accepted("inv.pdf", "0", "INV-3");
    sink.publish(&v0).await;
    sink.expect(&v0.event_id, [0, 1, 0]).await;

    // The retraction of v2, published twice: voided once, answered the same twice.
    let retraction = v2.retraction();
    sink.publish(&retraction).await;
    sink.expect(&retraction.event_id, [0, 0, 1]).await;
    let reason = format!("retracted by {}", retraction.event_id);
    assert_eq!(
        voided(&sink.receipt(&v2).await.unwrap()),
        Some(reason.as_str())
    );
    assert_eq!(sink.holder(&v2).await, None, "the invoice is free");
    sink.publish(&retraction).await;
    sink.expect(&retraction.event_id, [0, 0, 2]).await;

    // A retraction of v1, already voided by the amendment: a no-op that says so.
    let late = v1.retraction();
    sink.publish(&late).await;
    sink.expect(&late.event_id, [0, 0, 1]).await;
    let dedup = sink.item(format!("event#{}", late.event_id)).await.unwrap();
    let record: serde_json::Value = serde_json::from_str(dedup["record"].as_s().unwrap()).unwrap();
    assert_eq!(record["answer"]["alreadyVoided"], json!(true));

    // A retraction of an event never applied names an unknown receipt.
    let never = sink.accepted("never.pdf", "1", "INV-4").retraction();
    sink.publish(&never).await;
    sink.expect(&never.event_id, [0, 1, 0]).await;
    settle().await;
    assert_eq!(sink.answers(&retraction.event_id).await, [0, 0, 2]);
    assert_eq!(sink.answers(&late.event_id).await, [0, 0, 1]);
    assert_eq!(sink.answers(&v0.event_id).await, [0, 1, 0]);
    assert_eq!(
        voided(&sink.receipt(&v2).await.unwrap()),
        Some(reason.as_str()),
        "the second delivery changed nothing"
    );
    assert_eq!(
        voided(&sink.receipt(&v1).await.unwrap()),
        Some(format!("amended by {r2}").as_str())
    );
    let stale = sink.lines(&v0.event_id).await;
    assert!(
        stale.iter().any(|l| l.contains("Conflict.StaleVersion")),
        "{stale:#?}"
    );
    let unknown = sink.lines(&never.event_id).await;
    assert!(
        unknown
            .iter()
            .any(|l| l.contains("Conflict.UnknownReceipt")),
        "{unknown:#?}"
    );
}

/// A Chaos-API rule that fails every DynamoDB TransactWriteItems, removed when dropped. The
/// error is a cancellation the SDK does not retry (a throttling error may be absorbed by the
/// client's own attempts), so each delivery sees it.
struct FailTransactions;

fn fail_transactions_rule() -> serde_json::Value {
    json!([{
        "service": "dynamodb",
        "operation": "TransactWriteItems",
        "error": {"statusCode": 400, "code": "TransactionCanceledException"},
        "description": "accounts-payable: a failed commit is redelivered"
    }])
}

impl FailTransactions {
    async fn on() -> FailTransactions {
        util::chaos(reqwest::Method::PATCH, "faults", &fail_transactions_rule()).await;
        FailTransactions
    }
}

impl Drop for FailTransactions {
    fn drop(&mut self) {
        let off = util::block_on_aside(util::chaos(
            reqwest::Method::DELETE,
            "faults",
            &fail_transactions_rule(),
        ));
        if off.is_err() {
            eprintln!("cleanup: removing the chaos rule failed; check /_localstack/chaos/faults");
        }
    }
}

async fn failed_transactions() -> usize {
    util::wire_requests("dynamodb", "TransactWriteItems", "")
        .await
        .iter()
        .filter(|r| r["status"] == 400)
        .count()
}

#[tokio::test]
async fn a_commit_that_failed_is_redelivered_and_applied_once() {
    let sink = Sink::new().await;
    let event = sink.accepted("inv.pdf", "1", "INV-5");
    let before = failed_transactions().await;
    let fault = FailTransactions::on().await;
    sink.publish(&event).await;
    // The delivery failed: the fault fired, and the handler gave the message up (its error line).
    let start = Instant::now();
    while !sink
        .lines(&event.event_id)
        .await
        .iter()
        .any(|l| l.contains("step failed"))
    {
        assert!(
            start.elapsed() < ANSWER_DEADLINE,
            "the delivery never failed"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    drop(fault);
    assert!(
        failed_transactions().await > before,
        "the fault did not fire"
    );
    assert_eq!(
        sink.answers(&event.event_id).await,
        [0, 0, 0],
        "no answer yet"
    );
    assert!(sink.receipt(&event).await.is_none(), "nothing written");

    sink.expect(&event.event_id, [1, 0, 0]).await;
    settle().await;
    assert_eq!(
        sink.answers(&event.event_id).await,
        [1, 0, 0],
        "applied once"
    );
    assert!(sink.receipt(&event).await.is_some());
}
