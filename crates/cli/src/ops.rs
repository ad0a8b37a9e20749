//! `docket ops unresolved`: every case that needs a person, with its owner and next action —
//! runs that ended `unresolved` joined with their ledger operations, ledger operations that are
//! unresolved on their own, and runs whose review was `escalated` (no decision in time).

use std::collections::BTreeMap;

use docket_core::ids::OperationId;
use docket_core::ledger::OperationRecord;
use docket_core::model::step::Step;
use docket_core::ports::{Ledger, RunRecord, RunStatus};
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Subcommand)]
pub enum Command {
    /// List unresolved operations and runs, with owner and next action (exit 0 even if some).
    Unresolved,
}

pub async fn run(stack: &Stack, command: Command, output: Output) -> anyhow::Result<()> {
    match command {
        Command::Unresolved => unresolved(stack, output).await,
    }
}

fn operation_json(rec: &OperationRecord) -> Value {
    json!({
        "operationId": rec.operation_id,
        "status": rec.status.as_str(),
        "owner": rec.owner,
        "nextAction": rec.next_action,
        "providerJobId": rec.provider_job_id,
        "attempts": rec.attempts.len(),
        "since": rec.attempts.last().map(|a| a.at),
    })
}

/// A case of a run: who owns it, and its operations.
fn run_case(run: &RunRecord, owner: Option<&str>, operations: Value) -> Value {
    json!({
        "runId": run.run_id,
        "documentId": run.document_id,
        "tenant": run.tenant,
        "error": run.error,
        "owner": owner,
        "operations": operations,
    })
}

async fn unresolved(stack: &Stack, output: Output) -> anyhow::Result<()> {
    let mut operations: BTreeMap<OperationId, OperationRecord> = stack
        .ledger
        .unresolved()
        .await?
        .into_iter()
        .map(|r| (r.operation_id.clone(), r))
        .collect();
    let runs = stack.store.runs_with_status(RunStatus::Unresolved).await?;
    let mut cases = Vec::new();
    for run in &runs {
        let ops: Vec<Value> = Step::LEDGERED
            .iter()
            .filter_map(|step| operations.remove(&step.operation(&run.run_id)))
            .map(|rec| operation_json(&rec))
            .collect();
        let owner = ops
            .iter()
            .find_map(|o| o["owner"].as_str().map(String::from));
        cases.push(run_case(run, owner.as_deref(), json!(ops)));
    }
    let owner = docket_core::config::PipelineConfig::builtin()
        .ledger
        .unresolved_owner;
    for run in stack.store.runs_with_status(RunStatus::Escalated).await? {
        let operations = json!([{
            "status": "escalated",
            "nextAction": "The review was not decided in time: decide it with the tenant's \
                           reviewers, then re-upload the document",
        }]);
        cases.push(run_case(&run, Some(owner.as_str()), operations));
    }
    // Unresolved operations whose run did not end unresolved (or has no record).
    for rec in operations.values() {
        cases.push(json!({
            "runId": null,
            "documentId": null,
            "owner": rec.owner,
            "operations": [operation_json(rec)],
        }));
    }
    let without_owner = cases.iter().filter(|c| c["owner"].is_null()).count();
    let value = json!({"unresolved": cases, "withoutOwner": without_owner});
    print(output, &value, || {
        let mut lines: Vec<String> = cases
            .iter()
            .map(|c| {
                let next = c["operations"][0]["nextAction"].as_str().unwrap_or("-");
                format!(
                    "{}  {}  owner {}  next: {next}",
                    c["runId"].as_str().unwrap_or("(no run)"),
                    c["documentId"].as_str().unwrap_or("-"),
                    c["owner"].as_str().unwrap_or("NONE"),
                )
            })
            .collect();
        lines.push(format!(
            "{} unresolved, {without_owner} without an owner",
            cases.len()
        ));
        lines.join("\n")
    });
    Ok(())
}
