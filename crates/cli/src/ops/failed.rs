//! `docket ops failed [--since T]`: the pipeline executions that ended FAILED, TIMED_OUT or
//! ABORTED (Step Functions' own list of them, by status, every page), each joined with its run:
//! a run the status change event recorded `failed` is a technical failure to redrive, and so is
//! a `completed` run whose execution failed after it (compensate past its retries); one that
//! ended another way (`unresolved`, a compensation) is a case for `docket ops unresolved`.
//!
//! `docket ops redrive RUN | --failed-since T`: moves the run back to where it failed (route's
//! `reopen`, invoked with the caller's credentials: IAM decides who may), then redrives its
//! execution, which restarts at the Task that failed: a step that had committed finds its own
//! records (the OCR step its ledger entry, and so never a second Textract job).

use anyhow::{bail, Context};
use aws_sdk_sfn::types::ExecutionStatus;
use docket_core::ids::RunId;
use docket_core::ports::{RunStatus, Store};
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

/// The statuses of an execution that a redrive can restart.
const ENDED_BADLY: [ExecutionStatus; 3] = [
    ExecutionStatus::Failed,
    ExecutionStatus::TimedOut,
    ExecutionStatus::Aborted,
];

/// An execution that ended badly, with its run (when it is one of ours).
struct Failed {
    run_id: String,
    status: String,
    stopped: String,
    run_status: Option<RunStatus>,
    json: Value,
}

async fn sfn() -> aws_sdk_sfn::Client {
    aws_sdk_sfn::Client::new(&docket_aws::load_config().await)
}

fn rfc3339(date: &aws_sdk_sfn::primitives::DateTime) -> String {
    date.fmt(aws_sdk_sfn::primitives::DateTimeFormat::DateTime)
        .unwrap_or_default()
}

/// Whether a failed execution whose run is in `status` is redriven, and whether its run is
/// reopened first: `failed` is (moved back to where it failed); `started` or `awaiting_review`
/// was reopened by an earlier redrive that did not get through; `completed` failed after the run
/// completed (compensate past its retries, which catches nothing, or route after its
/// promotion), and the redrive reruns that idempotent Task. Any other end is not a technical
/// failure.
fn redrive_plan(status: RunStatus) -> Result<bool, String> {
    match status {
        RunStatus::Failed => Ok(true),
        RunStatus::Started | RunStatus::AwaitingReview | RunStatus::Completed => Ok(false),
        other => Err(format!(
            "the run is {}: not a technical failure (docket ops unresolved)",
            other.as_str()
        )),
    }
}

/// What to do about a failed execution whose run is in `status`.
fn next_action(run: &str, status: Option<RunStatus>) -> String {
    match status.map(redrive_plan) {
        Some(Ok(_)) => format!("docket ops redrive {run}"),
        Some(Err(why)) => why,
        None => "no run record: not a run of this stack".into(),
    }
}

/// The pipeline's executions that ended badly and stopped at or after `since` (RFC 3339 text
/// order, so a date works), oldest first.
async fn failed_executions(stack: &Stack, since: Option<&str>) -> anyhow::Result<Vec<Failed>> {
    let sfn = sfn().await;
    let machine = stack.out("StateMachineArn")?;
    let mut out = Vec::new();
    for status in ENDED_BADLY {
        let mut pages = sfn
            .list_executions()
            .state_machine_arn(machine)
            .status_filter(status.clone())
            .into_paginator()
            .items()
            .send();
        while let Some(execution) = pages.next().await {
            let execution = execution.with_context(|| format!("listing {status:?} executions"))?;
            let stopped = execution.stop_date().map(rfc3339).unwrap_or_default();
            if since.is_some_and(|since| stopped.as_str() < since) {
                continue;
            }
            let name = execution.name().to_string();
            let run = match RunId::parse(&name) {
                Ok(id) => stack.store.run(&id).await?,
                Err(_) => None,
            };
            let run_status = run.as_ref().map(|r| r.status);
            let json = json!({
                "runId": name,
                "documentId": run.as_ref().map(|r| r.document_id.as_str()),
                "tenant": run.as_ref().map(|r| r.tenant.as_str()),
                "executionStatus": status.as_str(),
                "runStatus": run_status.map(RunStatus::as_str),
                "error": run.as_ref().and_then(|r| r.error.clone()),
                "stopped": stopped,
                "redriveCount": execution.redrive_count(),
                "nextAction": next_action(&name, run_status),
            });
            out.push(Failed {
                run_id: name,
                status: status.as_str().into(),
                stopped,
                run_status,
                json,
            });
        }
    }
    out.sort_by(|a, b| a.stopped.cmp(&b.stopped));
    Ok(out)
}

pub async fn list(stack: &Stack, since: Option<&str>, output: Output) -> anyhow::Result<()> {
    let failed = failed_executions(stack, since).await?;
    let technical = failed
        .iter()
        .filter(|f| f.run_status == Some(RunStatus::Failed))
        .count();
    let value = json!({
        "failed": failed.iter().map(|f| &f.json).collect::<Vec<_>>(),
        "technical": technical,
    });
    print(output, &value, || {
        let mut lines: Vec<String> = failed
            .iter()
            .map(|f| {
                format!(
                    "{}  {}  {}  {}  next: {}",
                    f.stopped,
                    f.run_id,
                    f.status,
                    f.json["error"].as_str().unwrap_or("-"),
                    f.json["nextAction"].as_str().unwrap_or("-"),
                )
            })
            .collect();
        lines.push(format!(
            "{} executions ended badly, {technical} of them technical failures to redrive",
            failed.len()
        ));
        lines.join("\n")
    });
    Ok(())
}

pub async fn redrive(
    stack: &Stack,
    run: Option<&str>,
    failed_since: Option<&str>,
    output: Output,
) -> anyhow::Result<()> {
    let runs: Vec<String> = match (run, failed_since) {
        (Some(run), _) => vec![run.to_string()],
        (None, since) => failed_executions(stack, since)
            .await?
            .into_iter()
            .filter(|f| f.run_status == Some(RunStatus::Failed))
            .map(|f| f.run_id)
            .collect(),
    };
    let mut results = Vec::new();
    let mut refused = 0;
    for (i, run) in runs.iter().enumerate() {
        eprintln!("redrive: {} of {}: {run}", i + 1, runs.len());
        match redrive_one(stack, run).await {
            Ok(done) => results.push(done),
            Err(e) => {
                refused += 1;
                results.push(json!({"runId": run, "refused": format!("{e:#}")}));
            }
        }
    }
    let value = json!({"redriven": results, "refused": refused});
    print(output, &value, || {
        let mut lines: Vec<String> = results
            .iter()
            .map(|r| match r["refused"].as_str() {
                Some(why) => format!("{}  not redriven: {why}", r["runId"].as_str().unwrap_or("")),
                None => format!(
                    "{}  redriven at {} (run {})",
                    r["runId"].as_str().unwrap_or(""),
                    r["redriveDate"].as_str().unwrap_or("?"),
                    r["runStatus"].as_str().unwrap_or("?"),
                ),
            })
            .collect();
        lines.push(format!(
            "{} redriven, {refused} refused",
            runs.len() - refused
        ));
        lines.join("\n")
    });
    if refused > 0 {
        bail!("{refused} of {} runs were not redriven", runs.len());
    }
    Ok(())
}

/// Reopens `run` (unless an earlier redrive of it already did) and redrives its execution.
async fn redrive_one(stack: &Stack, run: &str) -> anyhow::Result<Value> {
    let run_id = RunId::parse(run)?;
    let record = stack
        .store
        .run(&run_id)
        .await?
        .with_context(|| format!("no run {run}"))?;
    let execution = stack.execution_arn("StateMachineArn", run)?;
    let sfn = sfn().await;
    let described = sfn
        .describe_execution()
        .execution_arn(&execution)
        .send()
        .await
        .with_context(|| format!("describing {execution}"))?;
    if !ENDED_BADLY.contains(described.status()) {
        bail!(
            "its execution is {}: nothing to redrive",
            described.status().as_str()
        );
    }
    let reopened = match redrive_plan(record.status) {
        Ok(true) => reopen(stack, run).await?,
        Ok(false) => false,
        Err(why) => bail!("{why}"),
    };
    // The same token for a repeat of this redrive: Step Functions answers it without a second
    // redrive.
    let token = format!("{run}-{}", described.redrive_count().unwrap_or(0));
    let redriven = sfn
        .redrive_execution()
        .execution_arn(&execution)
        .client_token(token)
        .send()
        .await
        .with_context(|| format!("redriving {execution}"))?;
    let now = stack.store.run(&run_id).await?.map(|r| r.status);
    Ok(json!({
        "runId": run,
        "executionArn": execution,
        "reopened": reopened,
        "runStatus": now.map(RunStatus::as_str),
        "redriveDate": rfc3339(redriven.redrive_date()),
    }))
}

/// Route's `reopen`: the failed run back to where it failed, with a `run.redriven` entry.
async fn reopen(stack: &Stack, run: &str) -> anyhow::Result<bool> {
    let payload = json!({"action": "reopen", "runId": run});
    match stack.invoke("RouteFunctionName", &payload).await? {
        Ok(answer) => Ok(answer["reopened"].as_bool().unwrap_or(false)),
        Err(failed) => bail!(
            "reopen failed: {} ({})",
            failed["errorType"].as_str().unwrap_or("?"),
            failed["errorMessage"].as_str().unwrap_or("")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_run_is_redriven_and_any_other_sent_to_the_unresolved_list() {
        let run = "d0ec2709f9a2730509ce80ef5-ra4b55ce07eb266824763";
        assert_eq!(
            next_action(run, Some(RunStatus::Failed)),
            format!("docket ops redrive {run}")
        );
        assert!(next_action(run, Some(RunStatus::Unresolved)).contains("unresolved"));
        assert!(next_action(run, None).starts_with("no run record"));
    }

    #[test]
    fn a_completed_run_whose_execution_failed_after_it_is_redriven_without_a_reopen() {
        // Compensate catches nothing: past its retries the execution fails there, the run
        // still completed; the redrive reruns the compensation.
        assert_eq!(redrive_plan(RunStatus::Completed), Ok(false));
        assert_eq!(redrive_plan(RunStatus::Failed), Ok(true));
        assert_eq!(redrive_plan(RunStatus::AwaitingReview), Ok(false));
        for ended in [
            RunStatus::Compensated,
            RunStatus::Rejected,
            RunStatus::Unresolved,
        ] {
            assert!(redrive_plan(ended).is_err(), "{ended:?}");
        }
    }
}
