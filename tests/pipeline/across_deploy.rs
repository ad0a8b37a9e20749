//! Deploys do not change running executions: a run that waits in review across a deploy that
//! changes every step function (new Lambda versions) and the definition (a new machine version)
//! finishes on the versions it started on; a new upload runs on the new ones; and once the old
//! run has ended, `docket versions prune` deletes the versions only it could reach.
//!
//! Two phases around the second deploy of `scripts/test-local.sh`: the ignored test
//! [`before_a_redeploy_a_run_waits_in_review`] starts the run and records it in
//! `across-deploy.json` next to the stack outputs; the deploy then changes the step functions' log
//! filter and the review wait (the first deploy's filter is not `make demo`'s, so that no demo run
//! waits on the recorded machine version and keeps it from the prune);
//! [`a_run_waiting_across_a_deploy_finishes_on_its_own_versions`] reads the record.

use std::collections::BTreeSet;
use std::path::PathBuf;

use aws_sdk_sfn::types::HistoryEventType;
use docket_core::deploys::invoked_versions;
use docket_e2e::reviewers::{docket, json_of, pending_task, reviewer, wait_for_status, Session};
use docket_e2e::stack::{invoice_lines, invoice_pdf, outputs_path, s, tenant, Stack};
use docket_e2e::util;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The run started before the deploy, as the first phase recorded it.
#[derive(Serialize, Deserialize)]
struct Before {
    tenant: String,
    document: String,
    task: String,
    run_id: String,
    /// The machine version it runs on.
    machine: String,
    /// The Lambda versions that machine version invokes.
    invokes: BTreeSet<String>,
}

fn record_path() -> PathBuf {
    PathBuf::from(outputs_path()).with_file_name("across-deploy.json")
}

/// The machine version an execution runs on.
async fn machine_of(stack: &Stack, run_id: &str) -> String {
    let described = stack
        .sfn
        .describe_execution()
        .execution_arn(stack.execution_arn(run_id))
        .send()
        .await
        .expect("describe execution");
    described
        .state_machine_version_arn()
        .unwrap_or_else(|| panic!("{run_id} was not started through the alias"))
        .to_string()
}

/// Every Lambda invoke of the run, in order: the qualified ARN the Task named and the version
/// that Lambda reports it executed (`ExecutedVersion` of the invoke's answer: in the Task's
/// result, or for a Task that waits for a token, in its submission, the result being the
/// callback's).
async fn invokes(stack: &Stack, run_id: &str) -> Vec<(String, String)> {
    let mut calls = Vec::new();
    let mut scheduled: Option<String> = None;
    for event in stack.history(run_id).await {
        match event.r#type() {
            HistoryEventType::TaskScheduled => {
                let details = event.task_scheduled_event_details().unwrap();
                let parameters: Value = serde_json::from_str(details.parameters()).unwrap();
                scheduled = parameters["FunctionName"].as_str().map(String::from);
            }
            HistoryEventType::TaskSubmitted | HistoryEventType::TaskSucceeded => {
                let output = match event.task_submitted_event_details() {
                    Some(submitted) => submitted.output(),
                    None => event.task_succeeded_event_details().unwrap().output(),
                };
                let answer: Value = serde_json::from_str(output.unwrap_or("{}")).unwrap();
                // A task token's callback answers without one: the review decision.
                if let (Some(function), Some(executed)) =
                    (scheduled.take(), answer["ExecutedVersion"].as_str())
                {
                    calls.push((function, executed.to_string()));
                }
            }
            _ => {}
        }
    }
    calls
}

/// The version of route among `arns`.
fn route(arns: &BTreeSet<String>) -> String {
    let routes: Vec<&String> = arns.iter().filter(|a| a.contains("-route:")).collect();
    assert_eq!(routes.len(), 1, "one version of route in {arns:?}");
    routes[0].clone()
}

fn version_number(arn: &str) -> &str {
    arn.rsplit_once(':').unwrap().1
}

#[tokio::test]
#[ignore = "phase one of the across-deploy test: scripts/test-local.sh runs it before a deploy"]
async fn before_a_redeploy_a_run_waits_in_review() {
    let stack = Stack::load().await;
    let wait: u64 = stack
        .parameter("ReviewTimeoutSeconds")
        .await
        .parse()
        .unwrap();
    assert!(
        wait >= 3600,
        "the review would expire ({wait} s) before the next deploy and the approval"
    );
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    let (document, task) = pending_task(&stack, &tenant, &alice).await;
    let run_id = wait_for_status(&stack, &document, "awaiting_review").await;
    let machine = machine_of(&stack, &run_id).await;
    let invokes = invoked_versions(&stack.definition(&machine).await);
    assert!(
        invokes.len() >= 4,
        "the definition names its step functions' versions: {invokes:?}"
    );
    let before = Before {
        tenant,
        document: document.as_str().to_string(),
        task,
        run_id,
        machine,
        invokes,
    };
    std::fs::write(record_path(), serde_json::to_vec_pretty(&before).unwrap()).unwrap();
}

#[tokio::test]
async fn a_run_waiting_across_a_deploy_finishes_on_its_own_versions() {
    let path = record_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (scripts/test-local.sh runs before_a_redeploy_a_run_waits_in_review, then \
             deploys again)",
            path.display()
        )
    });
    let before: Before = serde_json::from_str(&text).unwrap();
    let stack = Stack::load().await;
    let operator = Session { env: Vec::new() };

    // Given a deploy since: a new machine version is live, naming a new version of route.
    let live = stack.out("StateMachineVersionArn").to_string();
    assert_ne!(
        live, before.machine,
        "the deploy published no machine version"
    );
    let live_invokes = invoked_versions(&stack.definition(&live).await);
    let (old_route, new_route) = (route(&before.invokes), route(&live_invokes));
    assert_ne!(
        old_route, new_route,
        "the deploy published no version of route"
    );
    // While the run waits, its versions are kept.
    let listed = json_of(&docket(&operator, &["versions", "prune", "--dry-run"]).await);
    let kept_machines = listed["pruning"]["keptMachines"].as_array().unwrap();
    assert!(
        kept_machines.contains(&before.machine.clone().into()),
        "{listed}"
    );
    let kept_functions = listed["pruning"]["keptFunctions"].as_array().unwrap();
    assert!(
        kept_functions.contains(&old_route.clone().into()),
        "{listed}"
    );

    // When the reviewer approves it, after the deploy.
    let alice = reviewer(&before.tenant, "alice").await;
    let approved = docket(
        &alice,
        &[
            "review",
            "approve",
            &before.task,
            "--set",
            "invoice_date=2026-04-03",
        ],
    )
    .await;
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let document = docket_core::ids::DocumentId::parse(&before.document).unwrap();
    wait_for_status(&stack, &document, "completed").await;
    assert_eq!(stack.wait_for_execution(&before.run_id).await, "SUCCEEDED");

    // Then it ran to the end on the machine version it started on...
    assert_eq!(machine_of(&stack, &before.run_id).await, before.machine);
    // ...invoking only that version's Lambda versions, each executed as named, route included.
    let calls = invokes(&stack, &before.run_id).await;
    assert!(
        calls.iter().any(|(f, _)| *f == old_route),
        "route ran after the review: {calls:?}"
    );
    for (function, executed) in &calls {
        assert!(
            before.invokes.contains(function),
            "{function} is not its version's: {calls:?}"
        );
        assert_eq!(
            version_number(function),
            executed,
            "{function} ran {executed}"
        );
    }
    // ...and the lines route wrote for the execution name the old version. (The consumer's
    // receipt and the sweep reach route through its event sources, which invoke the function as
    // deployed now: they are no step of the execution. Metric lines, `_aws`, are no log lines of
    // a step: the sweep's names the run of the oldest open review, this one while it waited.)
    let group = format!("/aws/lambda/{}", stack.out("RouteFunctionName"));
    let lines: Vec<Value> = stack
        .log_messages(&group, None)
        .await
        .iter()
        .filter(|l| l.contains(&before.run_id))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l.get("_aws").is_none())
        .filter(|l| {
            !matches!(
                l["span"]["step"].as_str(),
                Some("route.receipt" | "route.sweep")
            )
        })
        .collect();
    assert!(
        !lines.is_empty(),
        "no line of route for {} in {group}",
        before.run_id
    );
    for line in &lines {
        assert_eq!(
            line["span"]["functionVersion"],
            version_number(&old_route),
            "{line}"
        );
    }
    let result = stack
        .json(&format!(
            "s3://{}/{}/{}/{}/result.json",
            stack.out("DerivedBucket"),
            before.tenant,
            before.document,
            before.run_id
        ))
        .await;
    assert_eq!(result["decision"], "approved_by_reviewer", "{result}");

    // A new upload runs on the new versions.
    let name = format!("{}.pdf", util::unique("after-deploy"));
    let tenant = tenant();
    let body = invoice_pdf(&invoice_lines("INV-2026-0042", "1,234.50"));
    stack.upload(&format!("inbox/{tenant}/{name}"), body).await;
    let runs = stack
        .wait_for_runs(&Stack::document_id(&tenant, &name), 1)
        .await;
    let run_id = s(&runs[0], "runId");
    assert_eq!(s(&runs[0], "status"), "completed", "{:?}", runs[0]);
    // (Route records the run completed before its Task's success is in the history.)
    assert_eq!(stack.wait_for_execution(&run_id).await, "SUCCEEDED");
    assert_eq!(machine_of(&stack, &run_id).await, live);
    let calls = invokes(&stack, &run_id).await;
    assert!(calls.iter().any(|(f, _)| *f == new_route), "{calls:?}");
    assert!(
        calls.iter().all(|(f, _)| live_invokes.contains(f)),
        "{calls:?}"
    );

    // Once the old run has ended, prune deletes its machine version and old route, not the live.
    let pruned = json_of(&docket(&operator, &["versions", "prune"]).await);
    let deleted = &pruned["pruning"];
    assert!(deleted["machines"]
        .as_array()
        .unwrap()
        .contains(&before.machine.clone().into()));
    assert!(deleted["functions"]
        .as_array()
        .unwrap()
        .contains(&old_route.clone().into()));
    let gone = stack
        .sfn
        .describe_state_machine()
        .state_machine_arn(&before.machine)
        .send();
    assert!(gone.await.is_err(), "{} still exists", before.machine);
    let (function, qualifier) = old_route.rsplit_once(':').unwrap();
    let lambda = aws_sdk_lambda::Client::new(&util::aws().await);
    let old = lambda
        .get_function()
        .function_name(function)
        .qualifier(qualifier)
        .send()
        .await;
    assert!(old.is_err(), "{old_route} still exists");
    let new = lambda
        .get_function()
        .function_name(function)
        .qualifier(version_number(&new_route));
    new.send().await.expect("the live route version stays");
    stack.definition(&live).await; // the live machine version stays (or this panics)
}
