//! An operator's withdrawal of a document's accepted result (`docket retract DOC --reason`):
//! the current run's saga is compensated like one that failed downstream — the consumer's
//! record voided by its receipt id, `document.retracted` published naming the original event,
//! the previous version's result current again — and the restored record names the retracted
//! run, so a second retract does nothing and says why. A newer result promoted meanwhile is
//! never undone (the restore is conditional on the retracted run still being current).

use serde::{Deserialize, Serialize};

use super::{compensate_run, Context};
use crate::ids::{DocumentId, RunId};
use crate::ports::{HasDownstream, HasEvents, HasJournal, HasOutbox, HasStore, Store};
use crate::saga::SagaEnd;
use crate::Error;

/// How a retraction's reason is recorded as the compensation's reason: the prefix tells the
/// restore to name the retracted run.
pub const RETRACTED: &str = "retracted: ";

/// What a retract did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retraction {
    /// `retracted`, `already-retracted` or `nothing-accepted`.
    pub status: String,
    /// The run whose result was (or had been) retracted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    /// How its saga ended (`compensated`, `compensation_failed`, `not-required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<SagaEnd>,
    /// The saga had ended before this retract (it did nothing).
    #[serde(default)]
    pub already_ended: bool,
    /// What is current now (none: no accepted result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_run_id: Option<RunId>,
    /// For a person: what happened, or why nothing did.
    pub message: String,
}

/// Retracts `document`'s current result for `reason` (free text from the operator; recorded in
/// the journal and the audit chain, never in logs).
pub async fn retract(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents + HasDownstream),
    ctx: &Context,
    document: &DocumentId,
    reason: &str,
) -> Result<Retraction, Error> {
    let Some(current) = ports.store().document(document).await? else {
        return Ok(Retraction {
            status: "nothing-accepted".into(),
            run_id: None,
            end: None,
            already_ended: false,
            current_run_id: None,
            message: format!("document {document} has no accepted result: nothing to retract"),
        });
    };
    if let Some(retracted) = current.retracted_run_id {
        return Ok(Retraction {
            status: "already-retracted".into(),
            message: format!(
                "run {retracted} of {document} was retracted and run {} is current again; \
                 nothing more to retract until a newer version is accepted",
                current.current_run_id
            ),
            run_id: Some(retracted),
            end: None,
            already_ended: false,
            current_run_id: Some(current.current_run_id),
        });
    }
    let run = current.current_run_id;
    let done = compensate_run(ports, ctx, &run, &format!("{RETRACTED}{reason}")).await?;
    let now = ports.store().document(document).await?;
    let now = now.map(|d| d.current_run_id);
    let message = match (done.end, &now) {
        (SagaEnd::CompensationFailed, _) => format!(
            "the retraction of run {run} failed for good: an open obligation (docket ops \
             unresolved)"
        ),
        (_, Some(c)) if c == &run => format!("run {run} could not be retracted: it is current"),
        (_, Some(c)) => format!("run {run} retracted; run {c} is current again"),
        (_, None) => format!("run {run} retracted; {document} has no accepted result now"),
    };
    Ok(Retraction {
        status: "retracted".into(),
        run_id: Some(run),
        end: Some(done.end),
        already_ended: done.already_ended,
        current_run_id: now,
        message,
    })
}
