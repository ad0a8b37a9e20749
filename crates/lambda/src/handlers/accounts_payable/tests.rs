//! The consumer's handler over the in-memory book: a batch answers per message, a republished
//! event (a new envelope id, the same `detail.eventId`) is applied once and answered the same,
//! a failed message is reported by its id only; a compensation's direct requests are answered
//! from the same book, and a payload that is neither is `Fatal.BadInput`.

use docket_core::ids::Tenant;
use docket_core::memory::{accepted_event, MemoryPayable};
use docket_core::ports::{AnswerBus, Downstream, PayableBook};
use docket_core::saga::sink::{Answer, Raced, Reads, Seen, Writes};
use docket_core::saga::{EventBody, EventId, ReceiptId, Voided};
use docket_core::Error;
use lambda_runtime::Diagnostic;
use serde_json::{json, Value};

use super::handle;
use crate::Failure;

/// The in-memory consumer, also asked directly: [`MemoryPayable`]'s book answers the
/// compensation's requests as `MemorySink` does.
#[derive(Default)]
struct Consumer(MemoryPayable);

impl std::ops::Deref for Consumer {
    type Target = MemoryPayable;
    fn deref(&self) -> &MemoryPayable {
        &self.0
    }
}

impl PayableBook for Consumer {
    async fn seen(&self, reads: &Reads) -> Result<Seen, Error> {
        self.0.seen(reads).await
    }
    async fn commit(&self, writes: &Writes) -> Result<Result<(), Raced>, Error> {
        self.0.commit(writes).await
    }
}

impl AnswerBus for Consumer {
    async fn answer(&self, answer: &Answer) -> Result<(), Error> {
        self.0.answer(answer).await
    }
}

impl Downstream for Consumer {
    async fn receipt_for(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        let book = self.book.lock().unwrap();
        Ok(book.receipt_for(event).map(|r| r.receipt_id.clone()))
    }
    async fn fence(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        let mut book = self.book.lock().unwrap();
        Ok(book.fence(event).map(|r| r.receipt_id.clone()))
    }
    async fn void(&self, receipt: &ReceiptId, reason: &str) -> Result<Voided, Error> {
        self.book.lock().unwrap().void(receipt, reason)
    }
}

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

async fn run(ports: &Consumer, messages: Vec<Value>) -> Value {
    handle(ports, json!({ "Records": messages })).await.unwrap()
}

#[tokio::test]
async fn a_republished_event_is_applied_once_and_answered_the_same() {
    let ports = Consumer::default();
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
    let ports = Consumer::default();
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

/// The `errorType` a failed invocation reports.
fn error_type(result: Result<Value, Failure>) -> String {
    Diagnostic::from(result.expect_err("a failure")).error_type
}

#[tokio::test]
async fn a_direct_request_asks_the_book_and_a_fenced_event_is_refused_when_it_comes() {
    let ports = Consumer::default();
    let event = accepted("inv.png", "INV-1");
    let late = accepted("late.png", "INV-2");
    run(&ports, vec![message("m1", "env-1", &event)]).await;
    let receipt = ReceiptId::for_event(&event.event_id).to_string();

    let ask = |request: Value| handle(&ports, request);
    let receipt_for = |e: &EventBody| json!({"action": "receiptFor", "eventId": e.event_id});
    let fence = |e: &EventBody| json!({"action": "fence", "eventId": e.event_id});
    assert_eq!(
        ask(receipt_for(&event)).await.unwrap(),
        json!({"receiptId": receipt})
    );
    assert_eq!(
        ask(receipt_for(&late)).await.unwrap(),
        json!({"receiptId": null})
    );
    assert_eq!(
        ask(fence(&event)).await.unwrap(),
        json!({"receiptId": receipt})
    );
    assert_eq!(ask(fence(&late)).await.unwrap(), json!({"receiptId": null}));
    assert_eq!(ask(fence(&late)).await.unwrap(), json!({"receiptId": null}));

    // The fenced event arrives after all: refused, and nothing is recorded for it.
    let out = run(&ports, vec![message("m2", "env-2", &late)]).await;
    assert_eq!(out, json!({"batchItemFailures": []}));
    assert_eq!(
        ports.answers.lock().unwrap().last().unwrap(),
        &Answer::Refused {
            event_id: late.event_id.clone(),
            error: "Conflict.FencedOut".into()
        }
    );
    assert_eq!(
        ask(receipt_for(&late)).await.unwrap(),
        json!({"receiptId": null})
    );
}

#[tokio::test]
async fn a_void_says_whether_it_voided_and_an_unknown_receipt_is_a_conflict() {
    let ports = Consumer::default();
    let event = accepted("inv.png", "INV-1");
    run(&ports, vec![message("m1", "env-1", &event)]).await;
    let receipt = ReceiptId::for_event(&event.event_id).to_string();
    let void = |receipt: &str, reason: &str| {
        handle(
            &ports,
            json!({"action": "void", "receiptId": receipt, "reason": reason}),
        )
    };
    assert_eq!(
        void(&receipt, "withdrawn").await.unwrap(),
        json!({"voided": true, "alreadyVoided": null})
    );
    assert_eq!(
        void(&receipt, "again").await.unwrap(),
        json!({"voided": false, "alreadyVoided": "withdrawn"})
    );
    assert!(
        ports
            .book
            .lock()
            .unwrap()
            .seen(&event)
            .unwrap()
            .live
            .is_none(),
        "the invoice's entry is freed"
    );
    assert_eq!(
        error_type(void("rc-nobody", "withdrawn").await),
        "Conflict.UnknownReceipt"
    );
}

#[tokio::test]
async fn a_payload_that_is_neither_a_batch_nor_a_request_is_bad_input() {
    let ports = Consumer::default();
    for payload in [
        json!({}),
        json!("fence"),
        json!({"action": "apply", "eventId": "ev-1"}),
        json!({"action": "fence"}),
        json!({"action": "fence", "eventId": "ev-1", "documentId": "d"}),
        json!({"action": "void", "receiptId": "rc-1"}),
        json!({"Records": "not a list"}),
    ] {
        let failure = handle(&ports, payload.clone()).await;
        assert_eq!(error_type(failure), "Fatal.BadInput", "{payload}");
    }
    assert!(ports.answers.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn a_direct_request_logs_in_the_span_of_its_event_or_receipt() {
    crate::logs::capture::start();
    let ports = Consumer::default();
    let event = accepted("inv.png", "INV-1");
    let fence = json!({"action": "fence", "eventId": event.event_id});
    handle(&ports, fence).await.unwrap();
    let void = json!({"action": "void", "receiptId": "rc-nobody", "reason": "withdrawn"});
    handle(&ports, void).await.unwrap_err();

    let lines = crate::logs::capture::lines();
    let spans: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| {
            let span = &l["span"];
            assert_eq!(span["documentId"], json!(""), "{l}");
            assert_eq!(span["runId"], json!(""), "{l}");
            // Outside Lambda no version is set; the field is there for every line.
            assert_eq!(span["functionVersion"], json!(""), "{l}");
            (
                span["step"].as_str().unwrap(),
                span["operationId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        spans,
        [
            ("accounts-payable.fence", event.event_id.as_str()),
            ("accounts-payable.void", "rc-nobody"),
        ]
    );
    assert_eq!(
        lines[1]["fields"]["error"],
        json!("Conflict.UnknownReceipt")
    );
}
