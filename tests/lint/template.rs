//! Lints of `infra/template.yaml` that keep a deploy reaching new executions and sparing running
//! ones: every stack parameter and step-function version substituted into the state machine
//! definition is named in the create-only Description of the StateMachineVersion, so that
//! changing it publishes a new version (the alias follows it); and the definition invokes every
//! step function by a published version (a qualified ARN), never by what is deployed now.
//!
//! The template is read as text (CloudFormation's `!Ref`/`!Sub` tags are not plain YAML): a block
//! is the lines indented under its key.

mod checkov;

use std::collections::BTreeSet;
use std::path::PathBuf;

fn template() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../infra/template.yaml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The lines under the first line whose trimmed text is `key:` after `from`, until the indentation
/// returns to that key's level.
fn block<'a>(lines: &[&'a str], from: usize, key: &str) -> (usize, Vec<&'a str>) {
    let start = (from..lines.len())
        .find(|&i| lines[i].trim() == format!("{key}:"))
        .unwrap_or_else(|| panic!("no `{key}:` after line {from}"));
    let level = indent(lines[start]);
    let body = lines[start + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > level)
        .copied()
        .collect();
    (start, body)
}

/// The names of the template's parameters.
fn parameters(lines: &[&str]) -> BTreeSet<String> {
    let (_, body) = block(lines, 0, "Parameters");
    let level = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    body.iter()
        .filter(|l| indent(l) == level && l.trim_end().ends_with(':'))
        .map(|l| l.trim().trim_end_matches(':').to_string())
        .collect()
}

/// Parameters that `text` references (`!Ref Name` or `${Name}`), out of `known`.
fn referenced(text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    known
        .iter()
        .filter(|p| text.contains(&format!("!Ref {p}")) || text.contains(&format!("${{{p}}}")))
        .cloned()
        .collect()
}

/// Substituted parameters missing from the version's Description, for the template `text`.
fn unversioned(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let params = parameters(&lines);
    let (at, _) = block(&lines, 0, "StateMachine");
    let (_, substitutions) = block(&lines, at, "DefinitionSubstitutions");
    let substituted = referenced(&substitutions.join("\n"), &params);
    assert!(
        !substituted.is_empty(),
        "no parameter found in DefinitionSubstitutions: the lint reads the wrong block"
    );
    let (at, version) = block(&lines, 0, "StateMachineVersion");
    let description = version
        .iter()
        .find(|l| l.trim_start().starts_with("Description:"))
        .unwrap_or_else(|| panic!("StateMachineVersion (line {at}) has no Description"));
    let mut missing: Vec<String> = substituted
        .difference(&referenced(description, &params))
        .cloned()
        .collect();
    if !description.contains("${DefinitionHash}") {
        missing.push("DefinitionHash".into());
    }
    // A step function's version is substituted too: a new one must publish a new machine version.
    for (_, value) in &substitution_values(&substitutions) {
        if let Some(version) = value
            .strip_prefix("!Ref ")
            .filter(|v| v.ends_with("Version"))
        {
            if !description.contains(&format!("${{{version}.Version}}")) {
                missing.push(version.to_string());
            }
        }
    }
    missing
}

/// `(key, value)` of each substitution line.
fn substitution_values(substitutions: &[&str]) -> Vec<(String, String)> {
    substitutions
        .iter()
        .filter_map(|l| l.trim().split_once(": "))
        .filter(|(k, _)| !k.starts_with('#'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

/// Substitutions the definition `asl` of the state machine resource `machine` uses that name a
/// function other than by the ref of an `AWS::Lambda::Version` of the template `text`: an execution
/// would invoke whatever code is deployed when it reaches that state.
fn unqualified(text: &str, machine: &str, asl: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (at, _) = block(&lines, 0, machine);
    let (_, substitutions) = block(&lines, at, "DefinitionSubstitutions");
    substitution_values(&substitutions)
        .into_iter()
        .filter(|(key, _)| key.ends_with("FunctionArn") && asl.contains(&format!("${{{key}}}")))
        .filter(|(_, value)| {
            let Some(resource) = value.strip_prefix("!Ref ") else {
                return true;
            };
            let (_, body) = block(&lines, 0, resource);
            !body
                .iter()
                .any(|l| l.trim() == "Type: AWS::Lambda::Version")
        })
        .map(|(key, _)| key)
        .collect()
}

/// What a deploy can change a step function by: each is named in the create-only Description of
/// the function's version, so that changing it publishes a new version.
const FUNCTION_INPUTS: [&str; 4] = [
    "${CodeKeyPrefix}",
    "${ConfigFingerprint}",
    "${LogLevel}",
    "${TemplateHash}",
];

/// `(version resource, missing input)` for every `AWS::Lambda::Version` of the template `text`
/// whose Description does not name one of [`FUNCTION_INPUTS`].
fn stale_function_versions(text: &str) -> Vec<(String, &'static str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut stale = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != "Type: AWS::Lambda::Version" {
            continue;
        }
        let name = lines[i - 1].trim().trim_end_matches(':');
        let (_, body) = block(&lines, i - 1, name);
        let description = body
            .iter()
            .find(|l| l.trim_start().starts_with("Description:"))
            .unwrap_or_else(|| panic!("{name} has no Description"));
        for input in FUNCTION_INPUTS {
            if !description.contains(input) {
                stale.push((name.to_string(), input));
            }
        }
    }
    stale
}

#[test]
fn every_change_a_deploy_makes_to_a_step_function_publishes_a_new_version_of_it() {
    let text = template();
    let versions = text.matches("Type: AWS::Lambda::Version").count();
    assert!(
        versions >= 5,
        "{versions} Lambda versions: the lint reads the wrong template"
    );
    assert_eq!(stale_function_versions(&text), vec![]);

    let without_config = text.replacen(", config ${ConfigFingerprint}", "", 1);
    assert_eq!(
        stale_function_versions(&without_config),
        vec![("OcrFunctionVersion".to_string(), "${ConfigFingerprint}")]
    );
}

fn definition() -> String {
    asl_file("document-pipeline.asl.json")
}

fn asl_file(file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../statemachines")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_definition_invokes_every_step_function_by_its_published_version() {
    let (text, asl) = (template(), definition());
    assert!(
        asl.contains("${RouteFunctionArn}"),
        "the definition no longer names route"
    );
    assert_eq!(
        unqualified(&text, "StateMachine", &asl),
        Vec::<String>::new()
    );
    let bulk = asl_file("bulk-reprocess.asl.json");
    assert!(bulk.contains("${ReprocessFunctionArn}"));
    assert_eq!(
        unqualified(&text, "BulkReprocessStateMachine", &bulk),
        Vec::<String>::new()
    );

    // Named by the unqualified function ARN, route is found.
    let unversioned = text.replace(
        "RouteFunctionArn: !Ref RouteFunctionVersion",
        "RouteFunctionArn: !GetAtt RouteFunction.Arn",
    );
    assert_eq!(
        unqualified(&unversioned, "StateMachine", &asl),
        vec!["RouteFunctionArn"]
    );
}

#[test]
fn a_new_version_of_a_step_function_publishes_a_new_machine_version() {
    let text = template();
    let named = " route:${RouteFunctionVersion.Version}";
    assert!(
        text.contains(named),
        "the Description no longer names route's version"
    );
    assert_eq!(
        unversioned(&text.replace(named, "")),
        vec!["RouteFunctionVersion"]
    );
}

#[test]
fn every_parameter_substituted_into_the_definition_publishes_a_new_version() {
    assert_eq!(unversioned(&template()), Vec::<String>::new());
}

#[test]
fn the_template_lint_names_a_substituted_parameter_missing_from_the_version() {
    let text = template();
    let named = ", receipt wait ${ReceiptTimeoutSeconds} s";
    assert!(
        text.contains(named),
        "the version's Description no longer has the form this test removes"
    );
    let stripped = text.replace(named, "");
    assert_eq!(unversioned(&stripped), vec!["ReceiptTimeoutSeconds"]);
}

/// The `Timeout` of the function resource `name`.
fn function_timeout(text: &str, name: &str) -> i64 {
    let lines: Vec<&str> = text.lines().collect();
    let (_, body) = block(&lines, 0, name);
    let timeout = body
        .iter()
        .find_map(|l| l.trim().strip_prefix("Timeout: "))
        .unwrap_or_else(|| panic!("{name} has no Timeout"));
    timeout.parse().expect("a number of seconds")
}

#[test]
fn an_attempt_of_a_compensation_holds_it_at_least_as_long_as_compensate_can_run() {
    // A caller past the lease takes the attempt over: its holder must have ended by then.
    let timeout = function_timeout(&template(), "CompensateFunction");
    assert!(
        timeout <= docket_core::saga::ATTEMPT_LEASE_SECONDS,
        "CompensateFunction Timeout {timeout} s outlives the attempt lease"
    );
    assert!(function_timeout("  F:\n    Properties:\n      Timeout: 45\n", "F") > 30);
}

/// The alarms a gradual deploy of the pipeline's alias watches (its `DeploymentPreference`),
/// each paired with whether the template declares it as a CloudWatch alarm.
fn rollback_alarms(text: &str) -> Vec<(String, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let (_, alias) = block(&lines, 0, "StateMachineAlias");
    let alarms = alias
        .iter()
        .find_map(|l| l.trim().strip_prefix("Alarms: "))
        .expect("the alias's deployment preference names its alarms");
    alarms
        .split("!Ref ")
        .skip(1)
        .map(|name| name.split([']', ',', ' ']).next().unwrap())
        .filter(|name| !name.starts_with("AWS::"))
        .map(|name| {
            let (start, body) = block(&lines, 0, name);
            let is_alarm = indent(lines[start]) == 2
                && body
                    .iter()
                    .any(|l| l.trim() == "Type: AWS::CloudWatch::Alarm");
            (name.to_string(), is_alarm)
        })
        .collect()
}

#[test]
fn a_gradual_deploy_of_the_pipeline_rolls_back_on_its_failure_alarms() {
    let alarms = rollback_alarms(&template());
    let names: Vec<&str> = alarms.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["TechnicalFailuresAlarm"]);
    assert!(alarms.iter().all(|(_, alarm)| *alarm), "{alarms:?}");
    // A name that is no alarm is seen (CloudWatch takes an unknown alarm as OK: no rollback).
    let wrong =
        "  StateMachineAlias:\n    P:\n      Alarms: !If [C, [!Ref Queue], !Ref AWS::NoValue]\n  \
                 Queue:\n    Type: AWS::SQS::Queue\n";
    assert_eq!(rollback_alarms(wrong), [("Queue".to_string(), false)]);
}

/// Every Task of the definition `asl` (of the state machine resource `machine` in `text`) whose
/// fixed `TimeoutSeconds` does not outlast the `Timeout` of the function it invokes, as "state:
/// task s, function s". Step Functions would end a slow attempt with `States.Timeout`, which no
/// Retry names (a deadline of ours is not a transient error), before the function's own timeout
/// ended it with `Sandbox.Timedout`, which every Task retries.
fn outrun_tasks(text: &str, machine: &str, asl: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (at, _) = block(&lines, 0, machine);
    let (_, substitutions) = block(&lines, at, "DefinitionSubstitutions");
    let functions = substitution_values(&substitutions);
    let asl: serde_json::Value = serde_json::from_str(asl).expect("the definition is JSON");
    let mut tasks = Vec::new();
    let mut pending = vec![asl];
    while let Some(machine) = pending.pop() {
        for (name, state) in machine["States"].as_object().into_iter().flatten() {
            if let Some(inner) = state.get("ItemProcessor") {
                pending.push(inner.clone());
            }
            let (Some(function), Some(seconds)) = (
                state["Parameters"]["FunctionName"].as_str(),
                state["TimeoutSeconds"].as_i64(),
            ) else {
                continue;
            };
            let key = function.trim_start_matches("${").trim_end_matches('}');
            let (_, value) = functions
                .iter()
                .find(|(k, _)| k == key)
                .unwrap_or_else(|| panic!("{name} invokes {function}, which is not substituted"));
            let resource = value
                .trim_start_matches("!Ref ")
                .trim_end_matches("Version");
            let timeout = function_timeout(text, resource);
            if seconds <= timeout {
                tasks.push(format!("{name}: task {seconds} s, function {timeout} s"));
            }
        }
    }
    tasks
}

#[test]
fn every_task_outlasts_the_function_it_invokes_so_a_slow_attempt_is_retried() {
    let text = template();
    let pipeline = outrun_tasks(&text, "StateMachine", &definition());
    assert_eq!(pipeline, Vec::<String>::new());
    let bulk = asl_file("bulk-reprocess.asl.json");
    assert_eq!(
        outrun_tasks(&text, "BulkReprocessStateMachine", &bulk),
        Vec::<String>::new()
    );

    // A check given less time than the reprocess function may take is found.
    let tight = bulk.replacen("\"TimeoutSeconds\": 150", "\"TimeoutSeconds\": 60", 1);
    assert_eq!(
        outrun_tasks(&text, "BulkReprocessStateMachine", &tight),
        vec!["CheckRuns: task 60 s, function 120 s"]
    );
}

/// The `key: value` number among `lines`.
fn number(lines: &[&str], key: &str) -> usize {
    lines
        .iter()
        .find_map(|l| l.trim().strip_prefix(key)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {key}"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{key}: {e}"))
}

#[test]
fn the_scale_simulation_models_ingest_as_the_template_deploys_it() {
    let text = template();
    let lines: Vec<&str> = text.lines().collect();
    let (at, _) = block(&lines, 0, "IngestEventSource");
    let (_, properties) = block(&lines, at, "Properties");
    let ingest = docket_e2e::scale::Ingest::deployed();
    assert_eq!(number(&properties, "MaximumConcurrency"), ingest.batches);
    assert_eq!(number(&properties, "BatchSize"), ingest.batch_size);
}
