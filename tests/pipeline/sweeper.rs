//! The outbox sweeper on the deployed stack: a route that committed the run's completion and
//! then could not publish (PutEvents failed on every attempt, injected in this process) leaves
//! the `document.accepted` record `persisted`; the deployed route's `sweep` action, as its
//! schedule invokes it, publishes it once under its id and settles it in the journal. A
//! published event whose delivery was lost while its run waits for the consumer's answer is
//! redelivered under the same id, and the answer to it ends the wait.

use std::time::{Duration, Instant};

use docket_aws::faults::{Faults, Rule};
use docket_aws::saga::{DynamoJournal, DynamoOutbox, DynamoWaits};
use docket_aws::sfn::SfnCallback;
use docket_core::model::run::{RunInput, TaskToken};
use docket_core::ports::{
    HasCallback, HasJournal, HasWaits, Outbox, RunStatus, SagaJournal, Store,
};
use docket_core::saga::sink::ReceiptId;
use docket_core::saga::{Delivery, Effect, EventId, EventKind, Evidence};
use docket_core::steps::route;
use docket_core::steps::saga::{self, Awaited};
use docket_e2e::stack::Stack;
use docket_e2e::util;
use serde_json::{json, Value};

use crate::lost_ack::{count_actions, one, validated_run, Picked, SagaPorts, ValidatedRun};

/// Invokes the deployed route as the sweep schedule does (redelivering within the receipt
/// wait's deadline), with `olderThanSeconds: 0`.
async fn sweep(stack: &Stack) -> Value {
    let payload = json!({"action": "sweep", "olderThanSeconds": 0, "answerWithinSeconds": 900});
    let answer = stack.invoke("RouteFunctionName", &payload).await;
    answer.unwrap_or_else(|e| panic!("sweep failed: {e}"))
}

#[tokio::test]
async fn a_completion_whose_publication_failed_is_published_once_by_the_sweep() {
    // given a run routed in this process while PutEvents fails on every attempt
    let _sweeping = crate::SWEEPS.write().await;
    let stack = Stack::load().await;
    let ValidatedRun {
        store,
        blobs,
        ctx,
        input,
        validated,
    } = validated_run(&stack).await;
    let bus_down = one(Rule::fail_before_send(
        "eventbridge",
        "PutEvents",
        "InternalException",
    ));
    let saga = SagaPorts::with_bus_faults(&stack, &store, &bus_down).await;
    let failing = Picked::route(&blobs, &store, &saga);
    for _ in 0..2 {
        let routed = route::run(&failing, &ctx, &input, &validated.report, None).await;
        assert!(routed.is_err(), "the publication failed: {routed:?}");
    }
    let event = EventId::new(&input.run_id, EventKind::Accepted);
    let outbox = DynamoOutbox::new(store.client().clone(), &store.saga().unwrap().outbox);
    let stuck = outbox.record(&event).await.unwrap().unwrap();
    let run = store.run(&input.run_id).await.unwrap().unwrap();
    assert!(bus_down.injected() >= 2, "the fault fired on each route");
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "committed before publishing"
    );
    assert_eq!(stuck.delivery, Delivery::Persisted);
    assert_eq!(stack.event_puts("document.accepted", &event).await, 0);

    // when the deployed route sweeps, twice (the schedule fires every minute)
    let first = sweep(&stack).await;
    let second = sweep(&stack).await;

    // then the event is on the bus once, its record moved on and its publication audited once
    assert!(first["relayed"].as_u64().unwrap() >= 1, "{first}");
    assert_eq!(first["failed"], json!([]), "{first}");
    assert_eq!(second["failed"], json!([]), "{second}");
    assert_eq!(stack.event_puts("document.accepted", &event).await, 1);
    let record = outbox.record(&event).await.unwrap().unwrap();
    assert!(record.delivery >= Delivery::ProviderAccepted, "{record:?}");
    let chain = stack.audit(&input.document_id).await;
    assert_eq!(count_actions(&chain, "run.completed"), 1);
    assert_eq!(count_actions(&chain, "event.published"), 1);
}

/// What the waiting Task's invocation runs on, in this process.
struct Waiting {
    journal: DynamoJournal,
    waits: DynamoWaits,
    callback: SfnCallback,
}

impl HasJournal for Waiting {
    type Journal = DynamoJournal;
    fn journal(&self) -> &DynamoJournal {
        &self.journal
    }
}

impl HasWaits for Waiting {
    type Waits = DynamoWaits;
    fn waits(&self) -> &DynamoWaits {
        &self.waits
    }
}

impl HasCallback for Waiting {
    type Callback = SfnCallback;
    fn callback(&self) -> &SfnCallback {
        &self.callback
    }
}

/// A run routed in this process whose event went to a bus with no rule for it (EventBridge
/// accepted it and delivered it to no one, as when a target's retries run out), then waiting
/// for the consumer's answer as the `Route` Task does once it has routed (its token is one no
/// execution holds: Step Functions refuses it, which ends a wait).
async fn published_to_no_one(stack: &Stack) -> (RunInput, EventId) {
    let ValidatedRun {
        store,
        blobs,
        ctx,
        input,
        validated,
    } = validated_run(stack).await;
    let nowhere = SagaPorts::on_bus(&store, "default", &Faults::none()).await;
    let routing = Picked::route(&blobs, &store, &nowhere);
    let routed = route::run(&routing, &ctx, &input, &validated.report, None).await;
    assert_eq!(routed.unwrap().status, "completed");
    let waiting = Waiting {
        journal: DynamoJournal::new(stack.dynamodb.clone(), stack.out("SagaJournalTable")),
        waits: DynamoWaits::new(stack.dynamodb.clone(), stack.out("ReceiptWaitsTable")),
        callback: SfnCallback::with_faults(&util::aws().await, &Faults::none()),
    };
    let token = TaskToken::new("a-token-no-execution-holds").unwrap();
    let waited = saga::await_receipt(&waiting, &input.run_id, &token).await;
    assert_eq!(waited.unwrap(), Awaited::Waiting);
    let event = EventId::new(&input.run_id, EventKind::Accepted);
    (input, event)
}

#[tokio::test]
async fn an_event_whose_delivery_was_lost_is_redelivered_by_the_sweep_and_answered_once() {
    // given a completed run whose event reached no consumer, waiting for the answer
    let _sweeping = crate::SWEEPS.write().await;
    let stack = Stack::load().await;
    let (input, event) = published_to_no_one(&stack).await;
    let journal = DynamoJournal::new(stack.dynamodb.clone(), stack.out("SagaJournalTable"));
    let waiting = journal.journal(&input.run_id).await.unwrap().unwrap();
    let recorded = waiting.entry(Effect::DownstreamRecorded);
    assert_eq!(
        recorded.evidence,
        Evidence::Uncertain,
        "the wait claimed it"
    );
    assert_eq!(stack.event_puts("document.accepted", &event).await, 1);
    let receipt = ReceiptId::for_event(&event);
    let key = format!("receipt#{receipt}");
    let consumer = || {
        util::get_item(
            &stack.dynamodb,
            stack.out("AccountsPayableTable"),
            "pk",
            &key,
        )
    };
    assert!(consumer().await.is_none(), "no consumer saw it");

    // when the deployed route sweeps for unanswered events
    let swept = sweep(&stack).await;

    // then it put the event on the stack's bus again under its id; the consumer recorded it
    // once and its answer settled the run's downstream effect, once
    let redelivered = swept["redelivered"].as_array().unwrap();
    assert!(redelivered.contains(&json!(event.to_string())), "{swept}");
    assert!(stack.event_puts("document.accepted", &event).await >= 2);
    let deadline = Instant::now() + Duration::from_secs(120);
    let settled = loop {
        let journal = journal.journal(&input.run_id).await.unwrap().unwrap();
        if journal.entry(Effect::DownstreamRecorded).evidence == Evidence::Confirmed {
            break journal;
        }
        assert!(Instant::now() < deadline, "never answered: {journal:?}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let entry = settled.entry(Effect::DownstreamRecorded);
    assert_eq!(entry.ids.receipt_id.as_ref(), Some(&receipt));
    assert!(consumer().await.is_some(), "the consumer recorded it");
    let outbox = DynamoOutbox::new(stack.dynamodb.clone(), stack.out("OutboxTable"));
    let record = outbox.record(&event).await.unwrap().unwrap();
    assert_eq!(record.delivery, Delivery::ConfirmedDelivered);
    let chain = stack.audit(&input.document_id).await;
    assert_eq!(count_actions(&chain, "downstream.recorded"), 1);
    assert_eq!(stack.event_puts("document.refused", &event).await, 0);
    let again = sweep(&stack).await;
    let redelivered = again["redelivered"].as_array().unwrap();
    assert!(!redelivered.contains(&json!(event.to_string())), "{again}");
}
