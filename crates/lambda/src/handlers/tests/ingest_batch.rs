//! ingest's SQS batches over the in-memory ports: each message is ingested on its own, a
//! transient failure is delivered again after a backoff, a start with no turn at the pacer is
//! sent again as a new message, any other failure is set aside with its error's name, and only
//! the messages to deliver again are reported.

use std::sync::Mutex;

use docket_core::Error;
use serde_json::{json, Value};

use super::{world, PNG, UPLOAD};
use crate::handlers::ingest::{self, Redeliver};

/// The queue's side of a batch, as calls.
#[derive(Default)]
pub(super) struct RecordedQueue {
    /// (receipt, seconds) of each message hidden for a backoff.
    pub retried: Mutex<Vec<(String, i32)>>,
    /// (body, seconds, requeues) of each message sent again as a new one.
    pub requeued: Mutex<Vec<(String, i32, u32)>>,
    /// (body, error name, receives) of each message set aside.
    pub set_aside: Mutex<Vec<(String, String, u32)>>,
    /// Set-asides that fail (the failure queue refuses), first first.
    pub refuse_set_aside: Mutex<usize>,
}

impl Redeliver for RecordedQueue {
    async fn retry_later(&self, receipt: &str, seconds: i32) -> Result<(), Error> {
        self.retried.lock().unwrap().push((receipt.into(), seconds));
        Ok(())
    }
    async fn requeue(&self, body: &str, seconds: i32, requeues: u32) -> Result<(), Error> {
        let sent = (body.into(), seconds, requeues);
        self.requeued.lock().unwrap().push(sent);
        Ok(())
    }
    async fn set_aside(&self, body: &str, error: &Error, receives: u32) -> Result<(), Error> {
        let mut refuse = self.refuse_set_aside.lock().unwrap();
        if *refuse > 0 {
            *refuse -= 1;
            return Err(Error::Dependency(
                "sqs SendMessage: ThrottlingException".into(),
            ));
        }
        let record = (body.into(), error.name().to_string(), receives);
        self.set_aside.lock().unwrap().push(record);
        Ok(())
    }
}

/// The inbox event of `key`, uploaded to the memory bucket as `version`.
fn upload_event(w: &super::World, key: &str) -> Value {
    let version = w.ports.blobs.upload("raw", key, PNG);
    let mut event: Value = serde_json::from_str(UPLOAD).unwrap();
    event["detail"]["bucket"]["name"] = "raw".into();
    event["detail"]["object"]["key"] = key.into();
    event["detail"]["object"]["version-id"] = version.into();
    event
}

/// The engine's next StartExecution fails with `error`.
fn refuse_next_start(w: &super::World, error: Error) {
    w.ports.workflow.fail_starts.lock().unwrap().push(error);
}

/// A throttled StartExecution (transient).
fn throttled_start() -> Error {
    Error::Dependency("states StartExecution: ThrottlingException".into())
}

/// An SQS batch as the event source mapping delivers it: (id, body, receives) per message.
fn batch(messages: &[(&str, String, u32)]) -> Value {
    let records: Vec<Value> = messages
        .iter()
        .map(|(id, body, receives)| {
            json!({
                "messageId": id,
                "receiptHandle": format!("receipt-of-{id}"),
                "body": body,
                "attributes": {"ApproximateReceiveCount": receives.to_string()},
                "messageAttributes": {},
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:IngestQueue",
            })
        })
        .collect();
    json!({ "Records": records })
}

fn failures(answer: &Value) -> Vec<&str> {
    answer["batchItemFailures"]
        .as_array()
        .expect("a batch response")
        .iter()
        .map(|f| f["itemIdentifier"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_batch_reports_only_the_transient_failure_and_sets_the_bad_message_aside() {
    let w = world();
    let queue = RecordedQueue::default();
    let ok = upload_event(&w, "inbox/acme/one.png").to_string();
    let throttled = upload_event(&w, "inbox/acme/two.png").to_string();
    // The first start the engine sees is refused: which of the two it is depends on the order
    // the batch's messages reach it, so each message is given its own batch.
    refuse_next_start(&w, throttled_start());

    let first = batch(&[
        ("m-2", throttled.clone(), 3),
        ("m-bad", "{\"not\": 1}".into(), 1),
    ]);
    let answer = ingest::handle(&w.ports, &queue, &w.ctx, first)
        .await
        .unwrap();
    let second = batch(&[("m-1", ok, 1)]);
    let again = ingest::handle(&w.ports, &queue, &w.ctx, second)
        .await
        .unwrap();

    // then only the throttled message is delivered again, hidden for its third backoff
    assert_eq!(failures(&answer), ["m-2"], "{answer}");
    assert_eq!(failures(&again), Vec::<&str>::new(), "{again}");
    let retried = queue.retried.lock().unwrap().clone();
    let expected = docket_core::redelivery::delay_seconds("m-2", 3);
    assert_eq!(retried, [("receipt-of-m-2".to_string(), expected)]);
    assert!((20..=40).contains(&expected), "{expected}");
    // and the message that is no event is set aside at once, named, its body kept
    let aside = queue.set_aside.lock().unwrap().clone();
    assert_eq!(
        aside,
        [("{\"not\": 1}".to_string(), "Fatal.BadInput".to_string(), 1)]
    );
    // and the good upload's execution started, the throttled one's not yet
    assert_eq!(w.ports.workflow.executions.lock().unwrap().len(), 1);

    // when the throttled message comes back, then it is ingested
    let back = batch(&[("m-2", throttled, 4)]);
    let answer = ingest::handle(&w.ports, &queue, &w.ctx, back)
        .await
        .unwrap();
    assert_eq!(failures(&answer), Vec::<&str>::new());
    assert_eq!(w.ports.workflow.executions.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_message_the_failure_queue_refuses_is_delivered_again_not_lost() {
    let w = world();
    let queue = RecordedQueue::default();
    *queue.refuse_set_aside.lock().unwrap() = 1;
    let answer = ingest::handle(&w.ports, &queue, &w.ctx, batch(&[("m-x", "[]".into(), 1)]))
        .await
        .unwrap();
    assert_eq!(failures(&answer), ["m-x"], "{answer}");
    assert!(queue.set_aside.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_direct_event_is_answered_with_its_outcome_and_a_batch_that_is_none_fails() {
    let w = world();
    let queue = RecordedQueue::default();
    let event = upload_event(&w, "inbox/acme/direct.png");
    let answer = ingest::handle(&w.ports, &queue, &w.ctx, event)
        .await
        .unwrap();
    assert_eq!(answer["outcome"], "started", "{answer}");
    let broken = json!({"Records": "not a list"});
    let e = ingest::handle(&w.ports, &queue, &w.ctx, broken)
        .await
        .unwrap_err();
    assert_eq!(e.0.name(), "Fatal.BadInput");
}

#[tokio::test]
async fn a_start_with_no_turn_is_sent_again_as_a_new_message_that_counts_and_not_reported() {
    let w = world();
    let queue = RecordedQueue::default();
    let first = upload_event(&w, "inbox/acme/busy.png").to_string();
    let again = upload_event(&w, "inbox/acme/busy-again.png").to_string();
    let busy = "textract-executions: every call slot within 5000 ms is taken";
    for _ in 0..2 {
        let full = Error::QuotaFull(busy.into());
        refuse_next_start(&w, full);
    }
    // m-q delivered for the fourth time (one more failed delivery would have spent it); m-r
    // sent again twice before, as SQS delivers the attribute
    let mut messages = batch(&[("m-q", first.clone(), 4), ("m-r", again.clone(), 1)]);
    messages["Records"][1]["messageAttributes"] = json!({
        "DocketRequeues": {"stringValue": "2", "dataType": "Number"}
    });

    let answer = ingest::handle(&w.ports, &queue, &w.ctx, messages)
        .await
        .unwrap();

    assert_eq!(failures(&answer), Vec::<&str>::new(), "{answer}");
    let mut requeued = queue.requeued.lock().unwrap().clone();
    requeued.sort_by_key(|(_, _, requeues)| *requeues);
    assert_eq!(requeued.len(), 2, "{requeued:?}");
    assert_eq!(requeued[0].0, first, "the event itself, unchanged");
    assert_eq!(requeued[0].2, 1, "sent again for the first time");
    assert!((5..=10).contains(&requeued[0].1), "{requeued:?}");
    assert_eq!(requeued[1].0, again);
    assert_eq!(requeued[1].2, 3, "counted on");
    assert!(
        (15..=30).contains(&requeued[1].1),
        "a longer wait: {requeued:?}"
    );
    assert!(queue.retried.lock().unwrap().is_empty());
    assert!(queue.set_aside.lock().unwrap().is_empty());
    assert!(w.ports.workflow.executions.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_transient_failure_on_the_last_delivery_is_set_aside_with_its_name() {
    let w = world();
    let queue = RecordedQueue::default();
    let throttled = upload_event(&w, "inbox/acme/last.png").to_string();
    refuse_next_start(&w, throttled_start());
    let last = docket_core::redelivery::DELIVERIES;

    let answer = ingest::handle(
        &w.ports,
        &queue,
        &w.ctx,
        batch(&[("m-5", throttled.clone(), last)]),
    )
    .await
    .unwrap();

    // then it is not hidden for another backoff, but set aside now, named, and let go
    assert_eq!(failures(&answer), Vec::<&str>::new(), "{answer}");
    assert!(queue.retried.lock().unwrap().is_empty());
    let aside = queue.set_aside.lock().unwrap().clone();
    assert_eq!(
        aside,
        [(throttled, "Transient.Dependency".to_string(), last)]
    );
    assert!(w.ports.workflow.executions.lock().unwrap().is_empty());
}
