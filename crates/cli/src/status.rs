//! `docket status DOC|RUN`: where each run stands, technically beside its business status: its
//! execution (status, the state it is in or stopped in, redrives), the steps it went through
//! with their timings and attempts (from the execution's history, every page), and its open
//! obligations (ledger operations not completed, compensations not settled).

use anyhow::Context;
use aws_sdk_sfn::types::HistoryEvent;
use docket_core::ids::{DocumentId, RunId};
use docket_core::ledger::LedgerStatus;
use docket_core::model::step::Step;
use docket_core::ports::{Ledger, RunRecord, SagaJournal, Store};
use docket_core::saga::CompensationStatus;
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Args)]
pub struct Args {
    /// A run (its execution's name), or a document (then each of its runs).
    id: String,
}

/// One state an execution entered, as its history tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateVisit {
    /// The state's name.
    pub name: String,
    /// When it was entered and exited (ms since the epoch; no exit yet: it is there now).
    pub entered_ms: i64,
    pub exited_ms: Option<i64>,
    /// Its Task's attempts (each scheduling), and how many of them failed or timed out.
    pub attempts: u32,
    pub failures: u32,
}

/// The states of a history (`(event type, state name, time in ms)`, in order), each with its
/// timing and attempts. A state entered again (a poll loop, a redrive) is a visit of its own.
pub fn visits(events: &[(&str, Option<&str>, i64)]) -> Vec<StateVisit> {
    let mut out: Vec<StateVisit> = Vec::new();
    for &(kind, name, at) in events {
        match (kind, name) {
            (k, Some(name)) if k.ends_with("StateEntered") => out.push(StateVisit {
                name: name.to_string(),
                entered_ms: at,
                exited_ms: None,
                attempts: 0,
                failures: 0,
            }),
            (k, Some(name)) if k.ends_with("StateExited") => {
                let open = out
                    .iter_mut()
                    .rev()
                    .find(|v| v.name == name && v.exited_ms.is_none());
                if let Some(visit) = open {
                    visit.exited_ms = Some(at);
                }
            }
            ("TaskScheduled", _) => {
                if let Some(visit) = out.last_mut() {
                    visit.attempts += 1;
                }
            }
            ("TaskFailed" | "TaskTimedOut", _) => {
                if let Some(visit) = out.last_mut() {
                    visit.failures += 1;
                }
            }
            _ => {}
        }
    }
    out
}

fn millis(date: &aws_sdk_sfn::primitives::DateTime) -> i64 {
    date.secs() * 1000 + i64::from(date.subsec_nanos() / 1_000_000)
}

fn rfc3339_ms(ms: i64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    let runs: Vec<RunRecord> = match RunId::parse(&args.id) {
        Ok(run) => vec![stack
            .store
            .run(&run)
            .await?
            .with_context(|| format!("no run {run}"))?],
        Err(_) => {
            let document = DocumentId::parse(&args.id)
                .with_context(|| format!("{} is neither a run nor a document", args.id))?;
            stack.store.runs_of(&document).await?
        }
    };
    let sfn = aws_sdk_sfn::Client::new(&docket_aws::load_config().await);
    let mut all = Vec::with_capacity(runs.len());
    for run in &runs {
        all.push(status_of(stack, &sfn, run).await?);
    }
    let value = json!({"runs": all});
    print(output, &value, || {
        all.iter().map(text).collect::<Vec<_>>().join("\n")
    });
    Ok(())
}

async fn status_of(
    stack: &Stack,
    sfn: &aws_sdk_sfn::Client,
    run: &RunRecord,
) -> anyhow::Result<Value> {
    let arn = stack.execution_arn("StateMachineArn", run.run_id.as_str())?;
    let (execution, steps) = match sfn.describe_execution().execution_arn(&arn).send().await {
        Ok(described) => {
            let history = history(sfn, &arn).await?;
            let events: Vec<(&str, Option<&str>, i64)> = history
                .iter()
                .map(|e| {
                    let name = e
                        .state_entered_event_details()
                        .map(|d| d.name())
                        .or_else(|| e.state_exited_event_details().map(|d| d.name()));
                    (e.r#type().as_str(), name, millis(e.timestamp()))
                })
                .collect();
            let visits = visits(&events);
            let state = visits.last().map(|v| v.name.clone());
            let execution = json!({
                "status": described.status().as_str(),
                "state": state,
                "started": rfc3339_ms(millis(described.start_date())),
                "stopped": described.stop_date().map(|d| rfc3339_ms(millis(d))),
                "redriveCount": described.redrive_count(),
                "redriveStatus": described.redrive_status().map(|s| s.as_str()),
            });
            let steps: Vec<Value> = visits
                .iter()
                .map(|v| {
                    json!({
                        "state": v.name,
                        "entered": rfc3339_ms(v.entered_ms),
                        "durationMs": v.exited_ms.map(|x| x - v.entered_ms),
                        "attempts": v.attempts,
                        "failures": v.failures,
                    })
                })
                .collect();
            (execution, steps)
        }
        // A run whose execution never started (its start was refused, or is still retried).
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_execution_does_not_exist()) =>
        {
            (Value::Null, Vec::new())
        }
        Err(e) => return Err(e).with_context(|| format!("describing {arn}")),
    };
    Ok(json!({
        "runId": run.run_id,
        "documentId": run.document_id,
        "generation": run.generation,
        "status": run.status.as_str(),
        "error": run.error,
        "execution": execution,
        "steps": steps,
        "obligations": obligations(stack, run).await?,
    }))
}

async fn history(sfn: &aws_sdk_sfn::Client, arn: &str) -> anyhow::Result<Vec<HistoryEvent>> {
    let mut pages = sfn
        .get_execution_history()
        .execution_arn(arn)
        .into_paginator()
        .items()
        .send();
    let mut events = Vec::new();
    while let Some(event) = pages.next().await {
        events.push(event.with_context(|| format!("the history of {arn}"))?);
    }
    Ok(events)
}

/// The run's ledger operations not completed and its compensations not settled.
async fn obligations(stack: &Stack, run: &RunRecord) -> anyhow::Result<Vec<Value>> {
    let mut open = Vec::new();
    for step in Step::LEDGERED {
        let op = step.operation(&run.run_id);
        if let Some(rec) = stack.ledger.get(&op).await? {
            if !matches!(rec.status, LedgerStatus::Completed | LedgerStatus::Resolved) {
                open.push(json!({
                    "operationId": op,
                    "status": rec.status.as_str(),
                    "owner": rec.owner,
                    "nextAction": rec.next_action,
                }));
            }
        }
    }
    let journal = match &stack.journal {
        Some(journal) => journal.journal(&run.run_id).await?,
        None => None,
    };
    for entry in journal.iter().flat_map(|j| j.entries.iter()) {
        let unsettled = matches!(
            entry.compensation,
            CompensationStatus::Pending
                | CompensationStatus::Attempted
                | CompensationStatus::FailedManualReview
        );
        if unsettled {
            open.push(json!({
                "effect": entry.effect.name(),
                "status": entry.compensation.name(),
                "owner": entry.owner,
            }));
        }
    }
    Ok(open)
}

fn text(run: &Value) -> String {
    let execution = &run["execution"];
    let mut lines = vec![format!(
        "{}  {}  execution {} in {}{}",
        run["runId"].as_str().unwrap_or("?"),
        run["status"].as_str().unwrap_or("?"),
        execution["status"].as_str().unwrap_or("none"),
        execution["state"].as_str().unwrap_or("-"),
        run["error"]
            .as_str()
            .map(|e| format!("  error {e}"))
            .unwrap_or_default(),
    )];
    for step in run["steps"].as_array().into_iter().flatten() {
        lines.push(format!(
            "  {:<20} {:>8} ms  attempts {}  failed {}",
            step["state"].as_str().unwrap_or("?"),
            step["durationMs"]
                .as_i64()
                .map_or("running".into(), |d| d.to_string()),
            step["attempts"],
            step["failures"],
        ));
    }
    for open in run["obligations"].as_array().into_iter().flatten() {
        lines.push(format!("  open: {open}"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_visit_has_its_timing_attempts_and_failures_and_a_reentry_is_a_visit_of_its_own() {
        let events = [
            ("ExecutionStarted", None, 0),
            ("TaskStateEntered", Some("StartOcr"), 10),
            ("TaskScheduled", None, 11),
            ("TaskFailed", None, 20),
            ("TaskScheduled", None, 30),
            ("TaskSucceeded", None, 40),
            ("TaskStateExited", Some("StartOcr"), 41),
            ("TaskStateEntered", Some("PollOcr"), 50),
            ("TaskScheduled", None, 51),
            ("TaskStateExited", Some("PollOcr"), 60),
            ("TaskStateEntered", Some("PollOcr"), 70),
            ("TaskScheduled", None, 71),
            ("TaskTimedOut", None, 90),
        ];

        let visits = visits(&events);

        let seen: Vec<_> = visits
            .iter()
            .map(|v| {
                (
                    v.name.as_str(),
                    v.exited_ms.map(|x| x - v.entered_ms),
                    v.attempts,
                    v.failures,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("StartOcr", Some(31), 2, 1),
                ("PollOcr", Some(10), 1, 0),
                ("PollOcr", None, 1, 1),
            ]
        );
    }
}
