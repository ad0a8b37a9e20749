//! An operator's decision on an unresolved operation (`docket ops resolve OP --note TEXT`).
//!
//! An operation is `unresolved` when its outcome could not be established (the provider may or
//! may not hold the work); no automatic attempt touches it again, and its run stays
//! `unresolved` with an owner. The owner looks (the next action says where), decides, and
//! records the decision here: the ledger record moves `unresolved` → `resolved` with who and
//! their note, the run `unresolved` → `resolved`, and the document's chain gets an
//! `operation.resolved` entry — one transaction, so the decision is recorded whole or not at
//! all. Who decided is the operator the review API verified (`review::identity::Operators`),
//! never a name from the request. A second resolution is refused (`Conflict.AlreadyDecided`).

use serde_json::json;

use super::{record, Context};
use crate::audit::AuditDraft;
use crate::ids::{OperationId, RunId};
use crate::ledger::{LedgerStatus, Write};
use crate::model::step::Step;
use crate::ports::{Change, HasLedger, HasStore, Ledger, Refused, RunStatus, Store};
use crate::review::identity::Operator;
use crate::Error;

/// The longest note accepted, in characters.
pub const MAX_NOTE_CHARS: usize = 2000;

/// What was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The operation.
    pub operation_id: OperationId,
    /// Its run.
    pub run_id: RunId,
    /// The run's status before (`unresolved`, or what it was if it had moved on).
    pub run_was: RunStatus,
    /// The chain entry's seq.
    pub audit_seq: u64,
}

/// Records `operator`'s decision `note` on operation `op` of run `run_id`: refused as
/// `Fatal.BadInput` when the note is empty, too long or has control characters other than line
/// breaks, when the run does not exist or `op` is not one of its operations, or when the
/// operation is not unresolved; as `Conflict.AlreadyDecided` when it was resolved already.
pub async fn resolve(
    ports: &(impl HasStore + HasLedger),
    ctx: &Context,
    operator: &Operator,
    op: &OperationId,
    run_id: &RunId,
    note: &str,
) -> Result<Resolution, Error> {
    check_note(note)?;
    let run = ports
        .store()
        .run(run_id)
        .await?
        .ok_or_else(|| Error::BadInput(format!("no run {run_id}")))?;
    if !Step::LEDGERED.iter().any(|s| &s.operation(run_id) == op) {
        return Err(Error::BadInput(format!(
            "operation {op} is not an operation of run {run_id}"
        )));
    }
    let rec = ports
        .ledger()
        .get(op)
        .await?
        .ok_or_else(|| Error::BadInput(format!("operation {op} has no ledger record")))?;
    match rec.status {
        LedgerStatus::Unresolved => {}
        LedgerStatus::Resolved => return Err(already(op, rec.resolved_by.as_deref())),
        other => {
            return Err(Error::BadInput(format!(
                "operation {op} is {}, not unresolved: nothing to decide",
                other.as_str()
            )))
        }
    }
    let write = Write::Resolve {
        by: operator.id.clone(),
        note: note.to_string(),
    };
    let mut changes = vec![Change::Ledger {
        op: op.clone(),
        fence: rec.fence,
        write,
        now: ctx.clock.now().unix_timestamp(),
    }];
    if run.status == RunStatus::Unresolved {
        changes.push(Change::SetRunStatus {
            run_id: run_id.clone(),
            from: RunStatus::Unresolved,
            to: RunStatus::Resolved,
            outputs: Default::default(),
            error: run.error.clone(),
        });
    }
    let draft = AuditDraft::new(&ctx.actor, "operation.resolved", Some(run_id))
        .operation(op)
        .detail(json!({
            "operationId": op,
            "operator": operator.id,
            "principal": operator.principal,
            "note": note,
            "runWas": run.status,
        }));
    match record(ports.store(), ctx, &run.document_id, changes, draft).await? {
        Ok(entry) => Ok(Resolution {
            operation_id: op.clone(),
            run_id: run_id.clone(),
            run_was: run.status,
            audit_seq: entry.seq,
        }),
        // Another operator (or a claim) moved the record, or the run moved, since we read them.
        Err(Refused { index }) => {
            let now = ports.ledger().get(op).await?;
            match now.filter(|r| r.status == LedgerStatus::Resolved) {
                Some(r) => Err(already(op, r.resolved_by.as_deref())),
                None => Err(Error::Dependency(format!(
                    "operation {op}: change {index} of its resolution was refused; try again"
                ))),
            }
        }
    }
}

fn already(op: &OperationId, by: Option<&str>) -> Error {
    Error::AlreadyDecided(format!(
        "operation {op} was already resolved by operator {}",
        by.unwrap_or("?")
    ))
}

/// A note is what the operator found and decided: 1 to [`MAX_NOTE_CHARS`] characters, no
/// control characters but line breaks and tabs.
pub fn check_note(note: &str) -> Result<(), Error> {
    let n = note.trim().chars().count();
    let bad = note
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'));
    if n == 0 || note.chars().count() > MAX_NOTE_CHARS || bad {
        return Err(Error::BadInput(format!(
            "a resolution note has 1 to {MAX_NOTE_CHARS} characters and no control characters"
        )));
    }
    Ok(())
}
