//! RedriveExecution (issue 17): community LocalStack answers it "not included in your license";
//! our extension emulates it (infra/localstack/docket_localstack/sfn_redrive.py).
//!
//! The state machine is the test's own: `First` (a Lambda Task that echoes its input) then
//! `Second` (a Lambda Task that fails with `Docket.Transient` until the function's environment has
//! a flag), no Retry and no Catch, so the execution FAILS at `Second`. The test flips the flag
//! and redrives. Invocations are counted twice: at the function (the line it logs per invocation,
//! read back from CloudWatch Logs) and in the history (one `TaskScheduled` per call), which holds
//! both attempts (the redrive appends to it).

use std::time::{Duration, Instant};

use aws_sdk_sfn::operation::describe_execution::DescribeExecutionOutput;
use aws_sdk_sfn::types::{
    ExecutionRedriveFilter, ExecutionRedriveStatus, ExecutionStatus, HistoryEvent, HistoryEventType,
};
use docket_e2e::function::Function;
use docket_e2e::resource;
use docket_e2e::util;
use serde_json::{json, Value};

const FLAG: &str = "DOCKET_HEALED";

/// Describes the execution until it is no longer RUNNING (30 s at most).
async fn wait_done(sfn: &aws_sdk_sfn::Client, arn: &str) -> DescribeExecutionOutput {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let described = sfn
            .describe_execution()
            .execution_arn(arn)
            .send()
            .await
            .expect("describe execution");
        if *described.status() != ExecutionStatus::Running || Instant::now() > deadline {
            return described;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn history(sfn: &aws_sdk_sfn::Client, arn: &str) -> Vec<HistoryEvent> {
    sfn.get_execution_history()
        .execution_arn(arn)
        .max_results(1000)
        .send()
        .await
        .expect("execution history")
        .events()
        .to_vec()
}

/// The inputs the function logged (one `docket-testfn request_id=... input=...` line per
/// invocation), once `until` accepts them or after 20 s.
async fn logged_inputs(
    config: &aws_config::SdkConfig,
    function: &str,
    until: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let logs = aws_sdk_cloudwatchlogs::Client::new(config);
    let group = format!("/aws/lambda/{function}");
    let mut inputs = Vec::new();
    for _ in 0..80 {
        let mut pages = logs
            .filter_log_events()
            .log_group_name(&group)
            .into_paginator()
            .send();
        inputs.clear();
        while let Some(Ok(page)) = pages.next().await {
            inputs.extend(page.events().iter().filter_map(|e| {
                let (_, input) = e.message()?.split_once("docket-testfn request_id=")?;
                serde_json::from_str(input.split_once(" input=")?.1.trim()).ok()
            }));
        }
        if until(&inputs) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    inputs
}

fn count(events: &[HistoryEvent], kind: HistoryEventType) -> usize {
    events.iter().filter(|e| *e.r#type() == kind).count()
}

/// The inputs with which the state `name` was entered, in order.
fn entered_inputs(events: &[HistoryEvent], name: &str) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| e.state_entered_event_details())
        .filter(|d| d.name() == name)
        .map(|d| serde_json::from_str(d.input().unwrap_or("null")).expect("state input is JSON"))
        .collect()
}

#[tokio::test]
async fn a_redriven_execution_reruns_only_the_failed_state_with_its_input_and_then_succeeds() {
    // Given a state machine whose second Task fails until a flag is set, and an execution of it
    // that failed there
    let config = util::aws().await;
    let sfn = aws_sdk_sfn::Client::new(&config);
    let f = Function::deploy(&config, 10, &[]).await;
    let lambda_task = |payload: Value, next: Option<&str>| {
        let mut state = json!({
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": f.arn, "Payload": payload},
            "OutputPath": "$.Payload",
        });
        match next {
            Some(next) => state["Next"] = json!(next),
            None => state["End"] = json!(true),
        }
        state
    };
    let definition = json!({
        "StartAt": "First",
        "States": {
            "First": lambda_task(json!({"echo": {"doc.$": "$.doc", "first": "done"}}), Some("Second")),
            "Second": lambda_task(json!({"fail_unless_env": FLAG, "doc.$": "$.doc"}), None),
        }
    });
    let (machine, machine_arn) = resource::state_machine(&config, "redrive-sm", &definition).await;
    let doc = util::unique("doc");
    let started = sfn
        .start_execution()
        .state_machine_arn(&machine_arn)
        .name(util::unique("run"))
        .input(json!({ "doc": doc }).to_string())
        .send()
        .await
        .expect("start execution");
    let arn = started.execution_arn().to_string();
    let failed = wait_done(&sfn, &arn).await;
    assert_eq!(*failed.status(), ExecutionStatus::Failed, "{failed:?}");
    assert_eq!(failed.error(), Some("Docket.Transient"), "{failed:?}");
    assert_eq!(failed.redrive_count(), Some(0));
    assert_eq!(
        failed.redrive_status(),
        Some(&ExecutionRedriveStatus::Redrivable)
    );
    let before = history(&sfn, &arn).await;
    assert_eq!(count(&before, HistoryEventType::TaskScheduled), 2);
    let failed_input = entered_inputs(&before, "Second");
    assert_eq!(failed_input, vec![json!({"doc": doc, "first": "done"})]);

    // When the flag is set and the execution is redriven
    f.set_env(&[(FLAG, "yes")]).await;
    let redriven = sfn
        .redrive_execution()
        .execution_arn(&arn)
        .send()
        .await
        .expect("redrive execution");
    let done = wait_done(&sfn, &arn).await;

    // Then it succeeds under the same ARN and name, having run First once and Second twice, the
    // second time with the input it failed with
    assert_eq!(*done.status(), ExecutionStatus::Succeeded, "{done:?}");
    assert_eq!(done.name(), failed.name());
    assert_eq!(done.start_date(), failed.start_date());
    let output: Value = serde_json::from_str(done.output().unwrap_or("null")).unwrap();
    assert_eq!(output, json!({ FLAG: "yes" }));
    assert_eq!(done.error(), None, "{done:?}");
    assert_eq!(done.redrive_count(), Some(1));
    assert_eq!(done.redrive_date(), Some(redriven.redrive_date()));
    assert_eq!(
        done.redrive_status(),
        Some(&ExecutionRedriveStatus::NotRedrivable)
    );
    assert_eq!(
        done.redrive_status_reason(),
        Some("Execution is SUCCEEDED and cannot be redriven")
    );
    let after = history(&sfn, &arn).await;
    assert_eq!(entered_inputs(&after, "First").len(), 1, "{after:#?}");
    assert_eq!(
        entered_inputs(&after, "Second"),
        vec![failed_input[0].clone(); 2]
    );
    assert_eq!(count(&after, HistoryEventType::TaskScheduled), 3);
    // At the function: First's payload once, Second's twice (Second runs after First, so once
    // both of Second's calls are logged, First's count is final).
    let is_second = |v: &Value| v.get("fail_unless_env").is_some();
    let inputs = logged_inputs(&config, &f.name, |seen| {
        seen.iter().filter(|v| is_second(v)).count() >= 2
    })
    .await;
    let firsts = inputs.iter().filter(|v| v.get("echo").is_some()).count();
    let seconds = inputs.iter().filter(|v| is_second(v)).count();
    assert_eq!((firsts, seconds), (1, 2), "function saw {inputs:?}");
    assert_eq!(count(&after, HistoryEventType::ExecutionStarted), 1);
    assert_eq!(count(&after, HistoryEventType::ExecutionFailed), 1);
    assert_eq!(count(&after, HistoryEventType::ExecutionSucceeded), 1);
    let redrives: Vec<_> = after
        .iter()
        .filter(|e| *e.r#type() == HistoryEventType::ExecutionRedriven)
        .map(|e| {
            e.execution_redriven_event_details()
                .and_then(|d| d.redrive_count())
        })
        .collect();
    assert_eq!(redrives, vec![Some(1)]);
    let ids: Vec<i64> = after.iter().map(HistoryEvent::id).collect();
    assert_eq!(ids, (1..=after.len() as i64).collect::<Vec<_>>());

    // And ListExecutions filters it as redriven
    for (filter, expected) in [
        (ExecutionRedriveFilter::Redriven, true),
        (ExecutionRedriveFilter::NotRedriven, false),
    ] {
        let listed = sfn
            .list_executions()
            .state_machine_arn(&machine_arn)
            .redrive_filter(filter.clone())
            .send()
            .await
            .expect("list executions");
        let found = listed
            .executions()
            .iter()
            .find(|e| e.execution_arn() == arn);
        assert_eq!(found.is_some(), expected, "{filter:?}: {listed:?}");
        if let Some(item) = found {
            assert_eq!(item.redrive_count(), Some(1));
        }
    }

    // And a second redrive of the succeeded execution is refused
    let again = sfn.redrive_execution().execution_arn(&arn).send().await;
    let again = again
        .expect_err("redrive of a SUCCEEDED execution")
        .into_service_error();
    assert!(again.is_execution_not_redrivable(), "{again:?}");
    assert_eq!(
        count(
            &history(&sfn, &arn).await,
            HistoryEventType::ExecutionRedriven
        ),
        1
    );

    machine.delete().await;
    f.delete().await;
}

#[tokio::test]
async fn redrive_of_an_unknown_execution_is_refused() {
    // Given a state machine with no execution of the name used
    let config = util::aws().await;
    let sfn = aws_sdk_sfn::Client::new(&config);
    let definition = json!({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}});
    let (machine, machine_arn) =
        resource::state_machine(&config, "redrive-none", &definition).await;
    let unknown = format!(
        "{}:{}",
        machine_arn.replacen(":stateMachine:", ":execution:", 1),
        util::unique("never-started")
    );

    // When that execution is redriven
    let refused = sfn.redrive_execution().execution_arn(&unknown).send().await;

    // Then Step Functions answers ExecutionDoesNotExist
    let refused = refused
        .expect_err("redrive of an unknown execution")
        .into_service_error();
    assert!(refused.is_execution_does_not_exist(), "{refused:?}");
    machine.delete().await;
}
