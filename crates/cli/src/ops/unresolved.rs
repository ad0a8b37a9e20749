//! `docket ops unresolved`: every case that needs a person, with its owner and next action —
//! runs that ended `unresolved` joined with their ledger operations, ledger operations that are
//! unresolved on their own, runs whose review was `escalated` (no decision in time), and saga
//! compensations that failed for good (`failed-manual-review`, from the journal's index).

use std::collections::BTreeMap;

use docket_core::ids::OperationId;
use docket_core::ledger::OperationRecord;
use docket_core::model::step::Step;
use docket_core::ports::{Ledger, RunRecord, RunStatus, SagaJournal};
use docket_core::saga::{CompensationStatus, Journal};
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

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

/// A case per compensation of `journal` that failed for good: its owner, the effect's recorded
/// ids (what to undo by hand) and the error of the last attempt.
fn failed_compensations(journal: &Journal) -> Vec<Value> {
    journal
        .entries
        .iter()
        .filter(|e| e.compensation == CompensationStatus::FailedManualReview)
        .map(|e| {
            json!({
                "runId": journal.run_id,
                "documentId": journal.document_id,
                "owner": e.owner,
                "operations": [{
                    "effect": e.effect.name(),
                    "status": e.compensation.name(),
                    "error": e.last_error,
                    "attempts": e.attempts,
                    "ids": e.ids,
                    "nextAction": format!(
                        "undo {} by hand with its recorded ids, then record the decision",
                        e.effect.name()
                    ),
                }],
            })
        })
        .collect()
}

pub async fn run(stack: &Stack, output: Output) -> anyhow::Result<()> {
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
    if let Some(journal) = &stack.journal {
        for failed in journal.failed().await? {
            cases.extend(failed_compensations(&failed));
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use docket_core::error::ErrorKind;
    use docket_core::ids::Tenant;
    use docket_core::memory::failed_compensation;

    #[test]
    fn a_compensation_failed_for_good_is_a_case_with_its_owner_ids_and_error() {
        let run = docket_core::memory::test_run(&Tenant::parse("acme").unwrap(), "a.pdf", "v1");
        let journal = failed_compensation(&run, "entry-1", "docket-operations");

        let cases = failed_compensations(&journal);

        assert_eq!(cases.len(), 1, "{cases:?}");
        assert_eq!(cases[0]["owner"], "docket-operations");
        assert_eq!(cases[0]["runId"], run.as_str());
        let op = &cases[0]["operations"][0];
        assert_eq!(op["effect"], "event.published");
        assert_eq!(op["status"], "failed-manual-review");
        assert_eq!(op["error"], ErrorKind::Internal.name());
        assert_eq!(op["ids"]["entryId"], "entry-1");
    }
}
