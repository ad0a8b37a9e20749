//! A consumer's receipt that never comes: the wait's deadline passes, the run is compensated,
//! and its execution fails with the timeout's name in the taxonomy (`Transient.TimedOut`; a
//! Fail state may not end with the `States.Timeout` its Catch caught).

use std::time::Duration;

use aws_sdk_sfn::types::{ExecutionStatus, HistoryEventType};
use docket_core::saga::{EventId, EventKind};
use docket_e2e::function::Function;
use docket_e2e::resource;
use docket_e2e::stack::{s, tenant, Stack};
use docket_e2e::util;
use serde_json::{json, Value};

use crate::saga::processed;

/// The deployed pipeline's states from the Task that routes and waits for the receipt on, as
/// deployed.
const TAIL: [&str; 5] = [
    "Route",
    "Compensate",
    "CompensationEnded?",
    "Compensated",
    "CompensationFailed",
];

#[tokio::test]
async fn a_receipt_that_never_comes_is_compensated_and_the_execution_fails_timed_out() {
    // No zero-age sweep may publish this run's event again meanwhile.
    let _quiet = crate::SWEEPS.read().await;
    // given a run that completed, its invoice recorded downstream
    let stack = Stack::load().await;
    let tenant = tenant();
    let (document, run, status) = processed(&stack, &tenant, "late.pdf", "INV-2026-0707").await;
    assert_eq!(status, "SUCCEEDED");
    // and the deployed definition's Task that routes and waits for the receipt, and what
    // follows it, unchanged but for the function it invokes: one that answers at once and
    // never sends the token back, as a consumer whose answer never comes (the deadline: 5 s)
    let config = util::aws().await;
    let deployed = stack.definition(stack.out("StateMachineArn")).await;
    let asl: Value = serde_json::from_str(&deployed).unwrap();
    let mut states: serde_json::Map<String, Value> = TAIL
        .iter()
        .map(|name| (name.to_string(), asl["States"][name].clone()))
        .collect();
    let silent = Function::deploy(&config, 10, &[]).await;
    states["Route"]["Parameters"] =
        json!({"FunctionName": silent.arn, "Payload": {"echo": "no answer"}});
    let definition = json!({"StartAt": "Route", "States": states});
    let (_machine, machine) = resource::state_machine(&config, "receipt", &definition).await;
    let first = stack
        .sfn
        .describe_execution()
        .execution_arn(stack.execution_arn(run.as_str()))
        .send()
        .await
        .unwrap();
    let first: Value = serde_json::from_str(first.input().unwrap()).unwrap();

    // when the run waits there for its receipt
    let input = json!({"run": first["run"], "validation": {"receiptSeconds": 5}});
    let execution = stack
        .sfn
        .start_execution()
        .state_machine_arn(&machine)
        .name(util::unique("receipt"))
        .input(input.to_string())
        .send()
        .await
        .expect("start")
        .execution_arn()
        .to_string();
    let ended = stack.ended(&execution, Duration::from_secs(180)).await;

    // then the wait timed out, the compensation ran, and the execution failed with the
    // timeout's taxonomy name (not States.Runtime, which a Fail state ending with a caught
    // States.Timeout gets)
    let history = stack
        .sfn
        .get_execution_history()
        .execution_arn(&execution)
        .max_results(1000)
        .send()
        .await
        .unwrap();
    let events = history.events();
    assert!(
        events
            .iter()
            .any(|e| *e.r#type() == HistoryEventType::TaskTimedOut),
        "the wait did not time out: {events:?}"
    );
    let entered: Vec<&str> = events
        .iter()
        .filter_map(|e| e.state_entered_event_details())
        .map(|d| d.name())
        .collect();
    assert_eq!(
        entered,
        ["Route", "Compensate", "CompensationEnded?", "Compensated"],
        "{events:?}"
    );
    assert_eq!(*ended.status(), ExecutionStatus::Failed);
    assert_eq!(ended.error(), Some("Transient.TimedOut"), "{ended:?}");
    // and the run is compensated, with the timeout recorded as its reason, and its
    // publication retracted once
    let runs = stack.runs(&document).await;
    let record = runs.iter().find(|r| s(r, "runId") == run.as_str()).unwrap();
    assert_eq!(s(record, "status"), "compensated", "{runs:?}");
    assert_eq!(s(record, "error"), "States.Timeout", "{runs:?}");
    let retraction = EventId::new(&run, EventKind::Retracted);
    assert_eq!(stack.event_puts("document.retracted", &retraction).await, 1);
}
