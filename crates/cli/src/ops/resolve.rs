//! `docket ops resolve OP --note TEXT`: an operator's decision on an unresolved operation,
//! recorded by the review API (`POST /operations/{id}/resolution`) with the identity of the
//! credentials that sign the request — a session of the stack's operator role (stack output
//! `OperatorRoleName`), its session name being the operator's id. The CLI only finds the
//! operation's run and sends the note; the API checks who asks and decides.

use anyhow::bail;
use docket_core::ids::{OperationId, RunId};
use docket_core::model::step::Step;
use docket_core::ports::RunStatus;
use docket_core::steps::resolve::check_note;
use serde_json::{json, Value};

use crate::review::api::{api_url, Api};
use crate::stack::{print, Stack};
use crate::Output;

/// The run among `runs` that `op` is an operation of.
fn run_of<'a>(mut runs: impl Iterator<Item = &'a RunId>, op: &OperationId) -> Option<&'a RunId> {
    runs.find(|run| Step::LEDGERED.iter().any(|step| &step.operation(run) == op))
}

pub async fn resolve(
    stack: &Stack,
    op: &str,
    run: Option<&str>,
    note: &str,
    output: Output,
) -> anyhow::Result<()> {
    check_note(note)?;
    let op: OperationId = serde_json::from_value(json!(op))?;
    let run_id = match run {
        Some(r) => RunId::parse(r)?,
        None => {
            // The run is unresolved, or resolved already (then the API says by whom).
            let mut runs = stack.store.runs_with_status(RunStatus::Unresolved).await?;
            runs.extend(stack.store.runs_with_status(RunStatus::Resolved).await?);
            match run_of(runs.iter().map(|r| &r.run_id), &op) {
                Some(r) => r.clone(),
                None => bail!(
                    "operation {op} belongs to no unresolved run (see `docket ops unresolved`); \
                     name its run with --run"
                ),
            }
        }
    };
    let api = Api::connect(stack.out("ReviewApiUrl")?).await?;
    let url = api_url(&api.base, &format!("operations/{op}/resolution"), &[])?;
    let body = json!({"runId": run_id, "note": note});
    let answer: Value = match api.call("POST", url, Some(&body)).await? {
        Ok(answer) => answer,
        Err(refusal) => {
            if output == Output::Json {
                print(output, &refusal.json(), String::new);
            }
            bail!(refusal.explain(None));
        }
    };
    print(output, &answer, || {
        format!(
            "operation {op} of run {run_id} resolved by {} (audit entry {})",
            answer["resolvedBy"].as_str().unwrap_or("?"),
            answer["auditSeq"]
        )
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use docket_core::ids::Tenant;
    use docket_core::memory::test_run;

    #[test]
    fn an_operation_is_found_by_its_run() {
        let acme = Tenant::parse("acme").unwrap();
        let (a, b) = (
            test_run(&acme, "a.pdf", "v1"),
            test_run(&acme, "b.pdf", "v1"),
        );
        let runs = [a, b.clone()];

        let found = run_of(runs.iter(), &Step::Ocr.operation(&b));

        assert_eq!(found, Some(&b));
        assert!(run_of(runs.iter(), &Step::Review.operation(&b)).is_none());
    }
}
