//! A run's technical end, and its redrive.
//!
//! The state machine catches business outcomes only: a technical failure that outlived its
//! retries fails the execution at the failing Task, where Step Functions' `RedriveExecution`
//! can restart it. Step Functions' "Execution Status Change" event (FAILED, TIMED_OUT, ABORTED)
//! then records the run as `failed` ([`fail`]), with the error's name and the status the run
//! was in. Before an execution is redriven, [`reopen`] moves its run back to that status (a
//! `run.redriven` entry in the chain), so the rerun Task finds the run where it left it.

use serde_json::json;

use super::{record, Context};
use crate::audit::AuditDraft;
use crate::ids::RunId;
use crate::model::step::Step;
use crate::ports::{Change, HasStore, RunRecord, RunStatus, Store};
use crate::Error;

/// The statuses a run is in while its execution runs: those a technical failure ends.
pub const IN_FLIGHT: [RunStatus; 2] = [RunStatus::Started, RunStatus::AwaitingReview];

/// Records that `run`'s execution ended in a technical failure (`execution`: FAILED, TIMED_OUT
/// or ABORTED; `error_name`: the execution's error): the run shows `failed` with the error's
/// name instead of staying in flight. Returns the status it was in, or `None` when it had
/// already ended (a business outcome, `unresolved`, a compensation): then nothing is written.
/// Safe to repeat.
pub async fn fail(
    ports: &impl HasStore,
    ctx: &Context,
    run: &RunRecord,
    error_name: &str,
    execution: &str,
) -> Result<Option<RunStatus>, Error> {
    let op = Step::Fail.operation(&run.run_id);
    for from in IN_FLIGHT {
        let change = Change::SetRunStatus {
            run_id: run.run_id.clone(),
            from,
            to: RunStatus::Failed,
            outputs: Default::default(),
            error: Some(error_name.to_string()),
        };
        let draft = AuditDraft::new(&ctx.actor, "run.failed", Some(&run.run_id))
            .operation(&op)
            .detail(json!({"error": error_name, "from": from, "execution": execution}));
        // Refused: the run is not in `from`.
        if record(ports.store(), ctx, &run.document_id, vec![change], draft)
            .await?
            .is_ok()
        {
            return Ok(Some(from));
        }
    }
    Ok(None)
}

/// How [`reopen`] found the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reopened {
    /// It was `failed` and is back in this status.
    To(RunStatus),
    /// It was not `failed` (already reopened, or ended another way): nothing was written.
    NotFailed(RunStatus),
}

/// Moves a `failed` run back to the status its failure found it in (the last `run.failed`
/// entry of its chain says which), with a `run.redriven` entry, so that its execution can be
/// redriven. Safe to repeat: a run no longer `failed` is left as it is.
pub async fn reopen(
    ports: &impl HasStore,
    ctx: &Context,
    run_id: &RunId,
) -> Result<Reopened, Error> {
    let store = ports.store();
    let run = store
        .run(run_id)
        .await?
        .ok_or_else(|| Error::BadInput(format!("no run {run_id}")))?;
    if run.status != RunStatus::Failed {
        return Ok(Reopened::NotFailed(run.status));
    }
    let entries = store.audit_entries(&run.document_id).await?;
    let failed = entries
        .iter()
        .rev()
        .find(|e| e.draft.action == "run.failed" && e.draft.run_id.as_ref() == Some(run_id));
    let to = failed
        .and_then(|e| serde_json::from_value(e.draft.detail["from"].clone()).ok())
        .filter(|from| IN_FLIGHT.contains(from))
        .unwrap_or(RunStatus::Started);
    let change = Change::SetRunStatus {
        run_id: run_id.clone(),
        from: RunStatus::Failed,
        to,
        outputs: Default::default(),
        error: None,
    };
    let draft = AuditDraft::new(&ctx.actor, "run.redriven", Some(run_id))
        .operation(&Step::Redrive.operation(run_id))
        .detail(json!({"error": run.error, "to": to}));
    match record(store, ctx, &run.document_id, vec![change], draft).await? {
        Ok(_) => Ok(Reopened::To(to)),
        // Another reopen moved it first.
        Err(_) => {
            let now = store.run(run_id).await?.map_or(to, |r| r.status);
            Ok(Reopened::NotFailed(now))
        }
    }
}
