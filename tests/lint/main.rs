//! Lints the state machines as data, against the rules of shared/DESIGN.md "State machines" and
//! the error taxonomy of `docket_core::error`. No AWS needed (LocalStack's
//! ValidateStateMachineDefinition is checked in the pipeline tests).

mod modules;
mod packaging;
mod review_page;
mod template;

use std::path::PathBuf;

use docket_core::error::ErrorKind;
use docket_core::model::step::Step;
use serde_json::Value;

/// Lambda service errors AWS recommends retrying on `lambda:invoke` Tasks.
const LAMBDA_SERVICE_ERRORS: &[&str] = &[
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
];

/// The one retry policy for Lambda service errors, which every `lambda:invoke` Task lists first.
/// Ten attempts, 1 s doubling to at most 20 s, full jitter: a throttling burst (the soak injects
/// Lambda 429s at probability 0.3, and they come in runs) is ridden out within about two minutes.
fn lambda_service_retry() -> Value {
    serde_json::json!({
        "ErrorEquals": LAMBDA_SERVICE_ERRORS,
        "IntervalSeconds": 1,
        "MaxAttempts": 10,
        "BackoffRate": 2.0,
        "MaxDelaySeconds": 20,
        "JitterStrategy": "FULL"
    })
}

/// The retry of a function that ran out of time (`Sandbox.Timedout`), which every plain
/// `lambda:invoke` Task lists second: it may have committed before it was stopped, and each
/// step is built to be run again (the retry reconciles). Not on a callback Task, whose retry
/// would wait on a new task token.
fn lambda_timeout_retry() -> Value {
    serde_json::json!({
        "ErrorEquals": [LAMBDA_TIMEOUT],
        "IntervalSeconds": 2,
        "MaxAttempts": 3,
        "BackoffRate": 2.0,
        "MaxDelaySeconds": 30,
        "JitterStrategy": "FULL"
    })
}

/// What Step Functions reports for a function stopped at its timeout.
const LAMBDA_TIMEOUT: &str = "Sandbox.Timedout";

/// Names a Retry may list: transient ones, Lambda service errors, and the ambiguous outcome whose
/// retry is the reconciliation.
fn retryable(name: &str) -> bool {
    LAMBDA_SERVICE_ERRORS.contains(&name)
        || name == LAMBDA_TIMEOUT
        || name.starts_with("Transient.")
        || name == "Ambiguous.OutcomeUnknown"
}

fn machines() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../statemachines");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("statemachines/") {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".asl.json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                value,
            ));
        }
    }
    assert!(!out.is_empty(), "no state machines found");
    out
}

/// Every state of a machine, those of its Map and Parallel states' inner machines too, as
/// (name, state).
fn all_states(asl: &Value) -> Vec<(&str, &Value)> {
    let mut out = Vec::new();
    let mut pending = vec![asl];
    while let Some(machine) = pending.pop() {
        for (name, state) in machine["States"].as_object().expect("States") {
            out.push((name.as_str(), state));
            for inner in ["ItemProcessor", "Iterator"] {
                if state[inner].is_object() {
                    pending.push(&state[inner]);
                }
            }
            pending.extend(state["Branches"].as_array().into_iter().flatten());
        }
    }
    out
}

/// Every problem in one state machine, as "State: problem" lines.
fn lint(asl: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let by_name: std::collections::HashMap<_, _> = all_states(asl).into_iter().collect();
    let compensates = |state: &Value| step_of(state) == Some(Step::Compensate);
    let caught_paths: Vec<String> = all_states(asl)
        .into_iter()
        .flat_map(|(_, state)| state["Catch"].as_array().cloned().unwrap_or_default())
        .filter_map(|catch| catch["ResultPath"].as_str().map(String::from))
        .collect();
    for (name, state) in all_states(asl) {
        let mut problem = |p: String| problems.push(format!("{name}: {p}"));
        let choices = state["Choices"].as_array().into_iter().flatten();
        let catches = state["Catch"].as_array().into_iter().flatten();
        let nexts = [&state["Next"], &state["Default"]]
            .into_iter()
            .chain(choices.chain(catches).map(|c| &c["Next"]));
        for next in nexts.filter_map(Value::as_str) {
            if !by_name.contains_key(next) {
                problem(format!("goes to {next}, which is no state"));
            }
        }
        if state["Type"] == "Fail" {
            // A Fail state may not end with a `States.*` name (Step Functions fails it with
            // States.Runtime instead): a fixed Error is ours, and an ErrorPath never reads a
            // caught error, which may be one of the platform's.
            if let Some(error) = state["Error"].as_str() {
                if ErrorKind::from_name(error).is_none() {
                    problem(format!("fails with {error}, which is not in the taxonomy"));
                }
            }
            if let Some(path) = state["ErrorPath"].as_str() {
                if caught_paths.iter().any(|caught| path.starts_with(caught)) {
                    problem(format!("fails with the caught error at {path}"));
                }
            }
        }
        if state["Type"] != "Task" {
            continue;
        }
        if !state["TimeoutSeconds"].is_u64() && !state["TimeoutSecondsPath"].is_string() {
            problem("Task without TimeoutSeconds".into());
        }
        let resource = state["Resource"].as_str().unwrap_or_default();
        if resource.ends_with(".waitForTaskToken")
            && !state["HeartbeatSeconds"].is_u64()
            && !state["HeartbeatSecondsPath"].is_string()
        {
            problem("callback Task without HeartbeatSeconds".into());
        }
        let retries = state["Retry"].as_array().cloned().unwrap_or_default();
        if retries.is_empty() {
            problem("Task without Retry".into());
        }
        if resource.starts_with("arn:aws:states:::lambda:invoke")
            && retries.first() != Some(&lambda_service_retry())
        {
            problem("the first Retry must be the Lambda service error policy".into());
        }
        if resource == "arn:aws:states:::lambda:invoke"
            && retries.get(1) != Some(&lambda_timeout_retry())
        {
            problem("the second Retry must be the Lambda timeout policy".into());
        }
        for retry in &retries {
            for key in [
                "IntervalSeconds",
                "MaxAttempts",
                "BackoffRate",
                "MaxDelaySeconds",
            ] {
                if retry.get(key).is_none() {
                    problem(format!("Retry without {key}"));
                }
            }
            if retry["JitterStrategy"] != "FULL" {
                problem("Retry without JitterStrategy FULL".into());
            }
            if retry["MaxAttempts"]
                .as_u64()
                .is_none_or(|n| n == 0 || n > 10)
            {
                problem("Retry MaxAttempts must be 1..=10".into());
            }
            let errors: Vec<&str> = retry["ErrorEquals"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for error in &errors {
                if !retryable(error) {
                    problem(format!("Retry on non-transient error {error}"));
                }
            }
            // Each retrier counts its own attempts: waiting out another attempt's lease must not
            // use up the attempts a failing dependency has (nor the reverse).
            // (`Transient.InProgress`: another attempt of the step holds the operation's lease.)
            let in_progress = ErrorKind::InProgress.name();
            if errors.contains(&in_progress) && errors.len() > 1 {
                problem(format!("{in_progress} shares its Retry with other errors"));
            }
        }
        let catches = state["Catch"].as_array().cloned().unwrap_or_default();
        for (i, catch) in catches.iter().enumerate() {
            if !catch["ResultPath"]
                .as_str()
                .is_some_and(|p| p.starts_with("$."))
            {
                problem("Catch must keep the input and put the error under ResultPath".into());
            }
            for error in catch["ErrorEquals"].as_array().into_iter().flatten() {
                let error = error.as_str().unwrap_or_default();
                // Besides ours: the catch-all, and the timeouts Step Functions itself raises
                // (a callback Task that waited too long).
                let known = ["States.ALL", "States.Timeout", "States.HeartbeatTimeout"]
                    .contains(&error)
                    || ErrorKind::from_name(error).is_some();
                if !known {
                    problem(format!("Catch on {error}, which is not in the taxonomy"));
                }
            }
            // A technical failure fails the execution at its Task, where a redrive restarts
            // it; only a compensation (or a wait whose every failure is compensated) catches
            // everything.
            if catch["ErrorEquals"].to_string().contains("\"States.ALL\"") {
                let next = catch["Next"].as_str().and_then(|n| by_name.get(n));
                if !compensates(state) && !next.is_some_and(|next| compensates(next)) {
                    problem("catches States.ALL outside a compensation".into());
                }
                if i + 1 != catches.len() {
                    problem("States.ALL must be the last Catch".into());
                }
            }
        }
    }
    // Every name the ASL throws or matches must be one the Rust side can produce.
    let text = asl.to_string();
    for family in [
        "Transient.",
        "Business.",
        "Ambiguous.",
        "Conflict.",
        "Fatal.",
    ] {
        for (i, _) in text.match_indices(family) {
            let name: String = text[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect();
            if ErrorKind::from_name(&name).is_none() {
                problems.push(format!("unknown error name {name}"));
            }
        }
    }
    problems
}

#[test]
fn every_state_machine_follows_the_retry_catch_and_timeout_rules() {
    for (file, asl) in machines() {
        let problems = lint(&asl);
        assert!(problems.is_empty(), "{file}:\n  {}", problems.join("\n  "));
    }
}

#[test]
fn the_linter_catches_each_rule_it_enforces() {
    let bad = serde_json::json!({
        "StartAt": "A",
        "States": {
            "A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                  "Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 1, "MaxAttempts": 99,
                             "BackoffRate": 2},
                            {"ErrorEquals": ["Transient.Dependency", "Transient.InProgress"],
                             "IntervalSeconds": 2, "MaxAttempts": 5, "BackoffRate": 2,
                             "MaxDelaySeconds": 30, "JitterStrategy": "FULL"}],
                  "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "B", "ResultPath": "$.failure"},
                            {"ErrorEquals": ["Business.Nope"], "Next": "B"}],
                  "End": true},
            "B": {"Type": "Fail"},
            "C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "IsPresent": true, "Next": "B"}],
                  "Default": "Gone"},
            "D": {"Type": "Fail", "Error": "States.Timeout"},
            "E": {"Type": "Fail", "ErrorPath": "$.failure.Error"}
        }
    });

    let problems = lint(&bad).join("\n");

    for expected in [
        "A: Task without TimeoutSeconds",
        "A: Retry without MaxDelaySeconds",
        "A: Retry without JitterStrategy FULL",
        "A: Retry MaxAttempts must be 1..=10",
        "A: the first Retry must be the Lambda service error policy",
        "A: the second Retry must be the Lambda timeout policy",
        "A: Retry on non-transient error States.ALL",
        "A: Transient.InProgress shares its Retry with other errors",
        "A: Catch must keep the input",
        "A: Catch on Business.Nope",
        "A: catches States.ALL outside a compensation",
        "A: States.ALL must be the last Catch",
        "C: goes to Gone, which is no state",
        "D: fails with States.Timeout, which is not in the taxonomy",
        "E: fails with the caught error at $.failure.Error",
        "unknown error name Business.Nope",
    ] {
        assert!(
            problems.contains(expected),
            "missing {expected:?} in\n{problems}"
        );
    }
}

#[test]
fn the_linter_reads_the_states_inside_a_map() {
    let nested = serde_json::json!({
        "StartAt": "M",
        "States": {
            "M": {"Type": "Map", "End": true, "ItemProcessor": {
                "StartAt": "Inner",
                "States": {"Inner": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                                     "End": true}}
            }}
        }
    });

    let problems = lint(&nested).join("\n");

    assert!(
        problems.contains("Inner: Task without TimeoutSeconds"),
        "{problems}"
    );
    assert_eq!(tasks(&nested).len(), 1);
}

/// The step a Task runs, from the function it invokes and the `action` of its payload; `None`
/// for a Task this lint does not know, which is itself a problem (a new Task must be placed).
/// A route Task that waits for a token routes and then waits for the consumer's receipt: its
/// step is the receipt's, whose outcomes it must catch (routing itself has none).
fn step_of(state: &Value) -> Option<Step> {
    let function = state["Parameters"]["FunctionName"].as_str()?;
    let action = state["Parameters"]["Payload"]["action"].as_str();
    let waits = state["Resource"]
        .as_str()
        .is_some_and(|r| r.ends_with(".waitForTaskToken"));
    Some(match (function, action) {
        ("${OcrFunctionArn}", Some("start" | "poll")) => Step::Ocr,
        ("${ValidateFunctionArn}", None) => Step::Validate,
        ("${RouteFunctionArn}", Some("route")) if waits => Step::Receipt,
        ("${RouteFunctionArn}", Some("route")) => Step::Route,
        ("${RouteFunctionArn}", Some("fail")) => Step::Fail,
        ("${RouteFunctionArn}", Some("reject")) => Step::Reject,
        ("${CompensateFunctionArn}", Some("compensate")) => Step::Compensate,
        ("${ReviewCallbackFunctionArn}", Some("escalate")) => Step::Escalate,
        ("${ReprocessFunctionArn}", Some("start" | "check")) => Step::Reprocess,
        _ => return None,
    })
}

/// The steps a Task runs: its own ([`step_of`]) and, for a Validate Task that waits with a
/// token, the review it hands the token to (validate opens the review task; a reviewer's
/// decision ends the wait), whose outcomes it must catch too.
fn steps_of(state: &Value) -> Vec<Step> {
    let waits = state["Resource"]
        .as_str()
        .is_some_and(|r| r.ends_with(".waitForTaskToken"));
    match step_of(state) {
        Some(Step::Validate) if waits => vec![Step::Validate, Step::Review],
        step => step.into_iter().collect(),
    }
}

/// The Tasks of a state machine with the step each runs, as (state name, state, step).
fn tasks(asl: &Value) -> Vec<(&str, &Value, Option<Step>)> {
    all_states(asl)
        .into_iter()
        .filter(|(_, s)| s["Type"] == "Task")
        .map(|(name, s)| (name, s, step_of(s)))
        .collect()
}

/// Where a Task's Catch sends `error` when it lists it by name (not through `States.ALL`).
fn caught_by_name<'a>(state: &'a Value, error: &str) -> Option<&'a str> {
    state["Catch"]
        .as_array()?
        .iter()
        .find(|c| {
            c["ErrorEquals"]
                .as_array()
                .is_some_and(|e| e.iter().any(|n| n == error))
        })
        .and_then(|c| c["Next"].as_str())
}

/// What `business_errors_are_caught_by_name_and_never_retried` finds wrong in one machine.
fn business_problems(asl: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, state, step) in tasks(asl) {
        if step.is_none() {
            problems.push(format!("{name}: runs no step this lint knows"));
            continue;
        }
        let catch_all = caught_by_name(state, "States.ALL");
        // After effects have happened, every failure is compensated (the error's name is the
        // compensation's reason): a business outcome may share the catch-all's Compensate.
        let compensates = |next: &str| step_of(&asl["States"][next]) == Some(Step::Compensate);
        let outcomes = steps_of(state)
            .into_iter()
            .flat_map(|s| s.business_outcomes());
        for kind in outcomes {
            match caught_by_name(state, kind.name()) {
                None => problems.push(format!("{name}: {kind} is not caught by name")),
                Some(next) if Some(next) == catch_all && !compensates(next) => {
                    problems.push(format!("{name}: {kind} goes where the catch-all goes"))
                }
                Some(_) => {}
            }
        }
        for retry in state["Retry"].as_array().into_iter().flatten() {
            if retry["ErrorEquals"].to_string().contains("Business.") {
                problems.push(format!("{name}: retries a business error"));
            }
        }
    }
    problems
}

#[test]
fn business_errors_are_caught_by_name_and_never_retried() {
    for (file, asl) in machines() {
        let problems = business_problems(&asl);
        assert!(problems.is_empty(), "{file}:\n  {}", problems.join("\n  "));
        // Every step with business outcomes is run by some Task of the pipeline, or the check
        // above saw nothing.
        if file != "document-pipeline.asl.json" {
            continue;
        }
        let run: Vec<_> = tasks(&asl)
            .into_iter()
            .flat_map(|(_, state, _)| steps_of(state))
            .collect();
        for step in Step::ALL {
            if !step.business_outcomes().is_empty() {
                assert!(run.contains(&step), "{file}: no Task runs {step}");
            }
        }
    }
}

#[test]
fn the_business_lint_catches_a_catch_all_a_missing_catch_and_an_unknown_task() {
    let bad = serde_json::json!({
        "StartAt": "V",
        "States": {
            "V": {"Type": "Task", "Parameters": {"FunctionName": "${ValidateFunctionArn}"},
                  "Retry": [{"ErrorEquals": ["Business.DocumentInvalid"]}],
                  "Catch": [{"ErrorEquals": ["Business.DocumentInvalid"], "Next": "F"},
                            {"ErrorEquals": ["States.ALL"], "Next": "F"}]},
            "O": {"Type": "Task", "Parameters": {"FunctionName": "${OcrFunctionArn}",
                                                 "Payload": {"action": "start"}},
                  "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "F"}]},
            "X": {"Type": "Task", "Parameters": {"FunctionName": "${OcrFunctionArn}",
                                                 "Payload": {"action": "translate"}}},
            "F": {"Type": "Fail"}
        }
    });

    let problems = business_problems(&bad).join("\n");

    for expected in [
        "V: Business.DocumentInvalid goes where the catch-all goes",
        "V: retries a business error",
        "O: Business.OcrFailed is not caught by name",
        "X: runs no step this lint knows",
    ] {
        assert!(
            problems.contains(expected),
            "missing {expected:?} in\n{problems}"
        );
    }
}

#[test]
fn the_ledgers_ambiguity_limit_is_reached_before_the_start_ocr_retries_run_out() {
    // The OCR step marks its operation unresolved on the `max_ambiguous_attempts`-th lost answer;
    // the state machine must retry Ambiguous.OutcomeUnknown at least that often (minus the first
    // attempt), or the run would end in the catch-all as failed while the ledger still says
    // in progress.
    let limit = docket_core::config::PipelineConfig::builtin()
        .ledger
        .max_ambiguous_attempts as u64;
    for (file, asl) in machines() {
        let starts: Vec<_> = tasks(&asl)
            .into_iter()
            .filter(|(_, s, _)| s["Parameters"]["Payload"]["action"] == "start")
            .filter(|(_, _, step)| *step == Some(Step::Ocr))
            .collect();
        if file != "document-pipeline.asl.json" && starts.is_empty() {
            continue;
        }
        assert_eq!(starts.len(), 1, "{file}: one Task starts the OCR job");
        let (_, start, _) = starts[0];
        let retries = start["Retry"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| {
                r["ErrorEquals"]
                    .to_string()
                    .contains("Ambiguous.OutcomeUnknown")
            })
            .and_then(|r| r["MaxAttempts"].as_u64())
            .unwrap_or(0);
        assert!(
            retries + 1 >= limit,
            "{file}: the OCR start retries Ambiguous.OutcomeUnknown {retries} times, \
             the ledger gives up after {limit} attempts"
        );
        // An unresolved operation has an owner and a next action in the ledger: the run must
        // not end where the catch-all sends it (recorded as a technical failure).
        let unresolved = ErrorKind::Unresolved.name();
        assert!(
            caught_by_name(start, unresolved)
                .is_some_and(|next| Some(next) != caught_by_name(start, "States.ALL")),
            "{file}: the OCR start does not catch {unresolved} by name"
        );
    }
}
