//! The outbox sweeper on the deployed stack: a route that committed the run's completion and
//! then could not publish (PutEvents failed on every attempt, injected in this process) leaves
//! the `document.accepted` record `persisted`; the deployed route's `sweep` action, as its
//! schedule invokes it, publishes it once under its id and settles it in the journal.

use docket_aws::faults::Rule;
use docket_aws::saga::DynamoOutbox;
use docket_core::ports::{Outbox, RunStatus, Store};
use docket_core::saga::{Delivery, EventId, EventKind};
use docket_core::steps::{ocr, route};
use docket_e2e::stack::Stack;
use docket_e2e::util;
use serde_json::{json, Value};

use crate::lost_ack::{
    count_actions, ctx, ledger, one, polled_and_validated, prepared_run, store, Picked, SagaPorts,
};

/// Invokes the deployed route as the sweep schedule does, with `olderThanSeconds: 0`.
async fn sweep(stack: &Stack) -> Value {
    let payload = json!({"action": "sweep", "olderThanSeconds": 0});
    let answer = stack.invoke("RouteFunctionName", &payload).await;
    answer.unwrap_or_else(|e| panic!("sweep failed: {e}"))
}

#[tokio::test]
async fn a_completion_whose_publication_failed_is_published_once_by_the_sweep() {
    // given a run routed in this process while PutEvents fails on every attempt
    let stack = Stack::load().await;
    let sdk = util::aws().await;
    let store = store(&stack, &docket_aws::faults::Faults::none()).await;
    let input = prepared_run(&stack, &store).await;
    let ctx = ctx(&stack, "docket/test");
    let textract = docket_aws::textract::TextractOcr::new(&sdk);
    let blobs = docket_aws::s3::S3Blobs::new(&sdk);
    let ledger = ledger(&store);
    let ocr_ports = Picked::ocr(&blobs, &store, &textract, &ledger);
    let started = ocr::start(&ocr_ports, &ctx, &input).await.unwrap();
    let validated = polled_and_validated(&ocr_ports, &ctx, &input, &started).await;
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
