//! Lambda without Docker: zip functions with a `bootstrap` (runtime provided.al2023) run as local
//! processes through our runtime executor (infra/localstack/docket_localstack/lambda_executor.py).
//!
//! The function is `tests/testfn` (`docket_e2e::function`), built once per test run and
//! deployed fresh per test.

use std::time::{Duration, Instant};

use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::InvocationType;
use aws_sdk_sfn::types::{ExecutionStatus, HistoryEventType};
use docket_e2e::function::{invoke, Function};
use docket_e2e::resource;
use docket_e2e::util;
use serde_json::{json, Value};

/// Pids of live processes whose environment names this function (its bootstraps). Panics if
/// `/proc` cannot be read: an empty answer must mean "none running", not "could not look".
fn bootstrap_pids(function_name: &str) -> Vec<u32> {
    let needle = format!("AWS_LAMBDA_FUNCTION_NAME={function_name}");
    let dir = std::fs::read_dir("/proc").expect("read /proc");
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}

/// Runs a one-Task state machine around `task` to completion: (status, output, history).
async fn run_state_machine(
    config: &aws_config::SdkConfig,
    definition: Value,
) -> (
    ExecutionStatus,
    Value,
    Vec<aws_sdk_sfn::types::HistoryEvent>,
) {
    let sfn = aws_sdk_sfn::Client::new(config);
    let (machine, arn) = resource::state_machine(config, "lambda-sm", &definition).await;
    let execution = sfn
        .start_execution()
        .state_machine_arn(arn)
        .input("{}")
        .send()
        .await
        .expect("start execution");
    let deadline = Instant::now() + Duration::from_secs(30);
    let described = loop {
        let d = sfn
            .describe_execution()
            .execution_arn(execution.execution_arn())
            .send()
            .await
            .expect("describe execution");
        if *d.status() != ExecutionStatus::Running || Instant::now() > deadline {
            break d;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let history = sfn
        .get_execution_history()
        .execution_arn(execution.execution_arn())
        .max_results(1000)
        .send()
        .await
        .expect("execution history")
        .events()
        .to_vec();
    let output = described
        .output()
        .map(|o| serde_json::from_str(o).expect("output is JSON"))
        .unwrap_or(Value::Null);
    machine.delete().await;
    (described.status().clone(), output, history)
}

#[tokio::test]
async fn invoke_returns_the_echo_and_the_function_sees_its_environment() {
    // Given a deployed function with an environment variable
    let config = util::aws().await;
    let f = Function::deploy(&config, 10, &[("DOCKET_GREETING", "hello from env")]).await;

    // When it is invoked synchronously
    let (echo, echo_err) = f
        .invoke(json!({"echo": {"doc": "invoice-1", "n": 7}}))
        .await;
    let (env, env_err) = f.invoke(json!({"env": "DOCKET_GREETING"})).await;
    let (root, _) = f.invoke(json!({"env": "LAMBDA_TASK_ROOT"})).await;

    // Then it answers with the echo and the variable's value
    assert_eq!(echo_err, None, "echo failed: {echo}");
    assert_eq!(echo, json!({"doc": "invoice-1", "n": 7}));
    assert_eq!(env_err, None, "env failed: {env}");
    assert_eq!(env, json!({"DOCKET_GREETING": "hello from env"}));
    let root = root["LAMBDA_TASK_ROOT"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        std::path::Path::new(&root).join("bootstrap").is_file(),
        "LAMBDA_TASK_ROOT {root:?} should hold the unzipped bootstrap"
    );
    f.delete().await;
}

#[tokio::test]
async fn event_invoke_runs_the_function_and_its_log_reaches_cloudwatch() {
    // Given a deployed function
    let config = util::aws().await;
    let f = Function::deploy(&config, 10, &[]).await;
    let marker = util::unique("docket-async-marker");

    // When it is invoked asynchronously with a unique marker
    let out = f
        .client
        .invoke()
        .function_name(&f.name)
        .invocation_type(InvocationType::Event)
        .payload(Blob::new(json!({"echo": marker}).to_string()))
        .send()
        .await
        .expect("async invoke");
    assert_eq!(out.status_code(), 202);

    // Then the function's log line, framed by START/REPORT, appears in /aws/lambda/<name>
    let logs = aws_sdk_cloudwatchlogs::Client::new(&config);
    let group = format!("/aws/lambda/{}", f.name);
    let mut messages = Vec::new();
    for _ in 0..60 {
        if let Ok(found) = logs.filter_log_events().log_group_name(&group).send().await {
            messages = found
                .events()
                .iter()
                .filter_map(|e| e.message().map(str::to_string))
                .collect();
            if messages.iter().any(|m| m.contains(&marker))
                && messages.iter().any(|m| m.starts_with("REPORT RequestId:"))
            {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        messages.iter().any(|m| m.contains(&marker)),
        "marker {marker} not in {group}: {messages:?}"
    );
    assert!(messages.iter().any(|m| m.starts_with("START RequestId:")));
    assert!(messages
        .iter()
        .any(|m| m.starts_with("REPORT RequestId:") && m.contains("Memory Size: 128 MB")));
    f.delete().await;
}

#[tokio::test]
async fn step_functions_retry_on_the_transient_error_name_lets_the_task_succeed() {
    // Given a function that fails once with Docket.Transient, then succeeds
    let config = util::aws().await;
    let f = Function::deploy(&config, 10, &[]).await;
    let key = util::unique("retry");
    let definition = json!({
        "StartAt": "Call",
        "States": {
            "Call": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {
                    "FunctionName": f.arn,
                    "Payload": {"fail_times": {"key": key, "n": 1}}
                },
                "Retry": [{
                    "ErrorEquals": ["Docket.Transient"],
                    "IntervalSeconds": 1,
                    "MaxAttempts": 2,
                    "BackoffRate": 1.0
                }],
                "OutputPath": "$.Payload",
                "End": true
            }
        }
    });

    // When a state machine calls it with a Retry on that error name
    let (status, output, history) = run_state_machine(&config, definition).await;

    // Then the execution succeeds on the second attempt, and the history shows the failed first
    let failed: Vec<_> = history
        .iter()
        .filter(|e| *e.r#type() == HistoryEventType::TaskFailed)
        .filter_map(|e| e.task_failed_event_details()?.error())
        .collect();
    assert_eq!(status, ExecutionStatus::Succeeded, "history: {history:?}");
    assert_eq!(failed, vec!["Docket.Transient"]);
    assert_eq!(output, json!({"attempt": 2}));
    f.delete().await;
}

#[tokio::test]
async fn a_function_running_past_its_timeout_fails_and_its_process_is_gone() {
    // Given a function with a 1 s timeout
    let config = util::aws().await;
    let f = Function::deploy(&config, 1, &[]).await;

    // When it sleeps for 3 s (and meanwhile its bootstrap is seen running, so that "none left"
    // below is a finding of the same search, not of a search that finds nothing)
    let started = Instant::now();
    let running = async {
        loop {
            let pids = bootstrap_pids(&f.name);
            if !pids.is_empty() || started.elapsed() > Duration::from_millis(900) {
                return pids;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let ((payload, function_error), running) =
        tokio::join!(f.invoke(json!({"sleep_ms": 3000})), running);
    let took = started.elapsed();
    assert!(
        !running.is_empty(),
        "its bootstrap was not seen while it ran"
    );

    // Then the invoke reports a timeout error after about 1 s ...
    assert!(function_error.is_some(), "no FunctionError: {payload}");
    assert_eq!(payload["errorType"], "Sandbox.Timedout", "{payload}");
    let message = payload["errorMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("Task timed out after 1.00 seconds"),
        "{message}"
    );
    assert!(took < Duration::from_millis(2900), "took {took:?}");
    // ... no bootstrap of the function is left running
    assert_eq!(bootstrap_pids(&f.name), Vec::<u32>::new());
    // ... and the next invoke runs in a fresh runtime
    let (echo, err) = f.invoke(json!({"echo": "again"})).await;
    assert_eq!((echo, err), (json!("again"), None));
    f.delete().await;
}

#[tokio::test]
async fn a_function_error_reaches_step_functions_with_its_error_type_and_is_caught() {
    // Given a function that fails with errorType Docket.Example
    let config = util::aws().await;
    let f = Function::deploy(&config, 10, &[]).await;
    let definition = json!({
        "StartAt": "Call",
        "States": {
            "Call": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {
                    "FunctionName": f.arn,
                    "Payload": {"fail": {"errorType": "Docket.Example", "message": "bad invoice"}}
                },
                "Catch": [
                    {"ErrorEquals": ["Docket.Other"], "Next": "Wrong"},
                    {"ErrorEquals": ["Docket.Example"], "ResultPath": "$.error", "Next": "Caught"}
                ],
                "End": true
            },
            "Wrong": {"Type": "Fail", "Error": "WrongCatcher"},
            "Caught": {"Type": "Pass", "End": true}
        }
    });

    // When a state machine calls it with a Catch on that name (not States.ALL)
    let (status, output, history) = run_state_machine(&config, definition).await;

    // Then the catcher for Docket.Example matches and the execution ends in the catch state
    assert_eq!(status, ExecutionStatus::Succeeded, "history: {history:?}");
    assert_eq!(output["error"]["Error"], "Docket.Example", "{output}");
    let cause: Value =
        serde_json::from_str(output["error"]["Cause"].as_str().unwrap_or("null")).unwrap();
    assert_eq!(cause["errorMessage"], "bad invoice");
    let entered_caught = history.iter().any(|e| {
        e.state_entered_event_details()
            .is_some_and(|d| d.name() == "Caught")
    });
    assert!(entered_caught, "history: {history:?}");
    f.delete().await;
}

#[tokio::test]
async fn concurrent_invokes_run_in_parallel_environments_and_all_succeed() {
    // Given a deployed function
    let config = util::aws().await;
    let f = Function::deploy(&config, 10, &[]).await;

    // When four invokes that each sleep 500 ms run at once
    let started = Instant::now();
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            tokio::spawn(invoke(
                f.client.clone(),
                f.name.clone(),
                json!({"sleep_ms": 500}),
            ))
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.expect("invoke task"));
    }
    let took = started.elapsed();

    // Then all succeed, in less time than running them one after another would take
    for (payload, err) in &results {
        assert_eq!((payload, err), (&json!({"slept_ms": 500}), &None));
    }
    assert!(took < Duration::from_millis(1900), "took {took:?}");
    f.delete().await;
}
