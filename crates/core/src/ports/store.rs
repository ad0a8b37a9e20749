//! Runs, documents and the audit log, and the atomic commit that changes them together.

use std::collections::BTreeMap;
use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::audit::{AuditEntry, Checkpoint};
use crate::ids::{DocumentId, OperationId, RunId, SourceVersion, Tenant};
use crate::ledger::Write;
use crate::model::run::ObjectRef;
use crate::saga::{Delivery, Journal, OutboxRecord, PreviousResult};
use crate::Error;

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Accepted; the workflow runs it.
    Started,
    /// Finished and promoted to the document's current result.
    Completed,
    /// Finished, but a newer source version was already accepted: kept, never promoted.
    Stale,
    /// Validation asked for a person's decision; the run waits for it.
    AwaitingReview,
    /// The document failed validation (business outcome).
    Invalid,
    /// A step failed for good; the error names why.
    Failed,
    /// An ambiguous outcome could not be established: the operation ledger names the owner
    /// who must decide and the next action (`docket ops unresolved`).
    Unresolved,
    /// A reviewer rejected the document (business outcome; no result).
    Rejected,
    /// The review was not decided in time: the run waits for its owner (`docket ops
    /// unresolved`), never silently failed.
    Escalated,
    /// Completed, then a later saga effect failed (the consumer refused it, or its receipt did
    /// not come in time): every effect that happened was undone, in reverse order.
    Compensated,
    /// Completed, then a compensation failed for good: an open obligation with an owner
    /// (`docket ops unresolved`), never a silent success.
    CompensationFailed,
    /// Completed, then withdrawn by an operator (`docket retract`): every effect undone, the
    /// previous version's result current again.
    Retracted,
    /// Was `unresolved`; an operator decided it (`docket ops resolve`): the decision is in the
    /// ledger and the audit chain.
    Resolved,
}

impl RunStatus {
    /// Whether a run in this status is a case an operator lists (`docket ops`): failed,
    /// unresolved, escalated, a failed compensation, or resolved by an operator. The runs table
    /// indexes exactly these (a sparse index), so operators query, never scan.
    pub fn is_case(self) -> bool {
        matches!(
            self,
            RunStatus::Failed
                | RunStatus::Unresolved
                | RunStatus::Escalated
                | RunStatus::CompensationFailed
                | RunStatus::Resolved
        )
    }

    /// The name stored and shown.
    pub const fn as_str(self) -> &'static str {
        match self {
            RunStatus::Started => "started",
            RunStatus::Completed => "completed",
            RunStatus::Stale => "stale",
            RunStatus::AwaitingReview => "awaiting_review",
            RunStatus::Invalid => "invalid",
            RunStatus::Failed => "failed",
            RunStatus::Unresolved => "unresolved",
            RunStatus::Rejected => "rejected",
            RunStatus::Escalated => "escalated",
            RunStatus::Compensated => "compensated",
            RunStatus::CompensationFailed => "compensation_failed",
            RunStatus::Retracted => "retracted",
            RunStatus::Resolved => "resolved",
        }
    }
}

/// The record of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// The run (and execution name).
    pub run_id: RunId,
    /// Its document.
    pub document_id: DocumentId,
    /// Its tenant.
    pub tenant: Tenant,
    /// The raw object version it processes.
    pub source: SourceVersion,
    /// Where that version is.
    pub raw: ObjectRef,
    /// Orders source versions of one document: a larger value is a later upload.
    pub source_order: String,
    /// The pipeline config it runs under.
    pub config_fingerprint: String,
    /// 0 for a run ingest started; a reprocess of the same source version runs the next one
    /// (`reprocess::plan`).
    #[serde(default)]
    pub generation: u32,
    /// Where it stands.
    pub status: RunStatus,
    /// When it was accepted (RFC 3339).
    pub created_at: String,
    /// Outputs by name (`ocr`, `validation`, `result`) as `s3://` pointers.
    #[serde(default)]
    pub outputs: BTreeMap<String, String>,
    /// The error name when it ended failed/invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The raw document's page count, when ingest read it from the bytes
    /// ([`crate::model::run::RunInput::pages`]): a reprocess of the run passes it on, so that a
    /// one-page document is read synchronously again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
}

/// The document's current accepted result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentRecord {
    /// The document.
    pub document_id: DocumentId,
    /// Its tenant.
    pub tenant: Tenant,
    /// The run whose result is current.
    pub current_run_id: RunId,
    /// That run's source order.
    pub source_order: String,
    /// The run an operator retracted (`docket retract`) to make this one current again; none
    /// once a run is promoted since (a promotion writes the whole record). A second retract of
    /// the document finds it and does nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retracted_run_id: Option<RunId>,
}

/// One change in an atomic [`Store::commit`].
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Creates a run record; refused if the run exists.
    CreateRun(RunRecord),
    /// Moves a run from status `from` to `to` (and adds outputs/error); refused unless the run
    /// is in `from`, so a step that already moved it cannot move it twice.
    SetRunStatus {
        /// The run.
        run_id: RunId,
        /// The status it must be in.
        from: RunStatus,
        /// Its new status.
        to: RunStatus,
        /// Outputs to add.
        outputs: BTreeMap<String, String>,
        /// The error name, if it failed.
        error: Option<String>,
    },
    /// Makes `run_id` the document's current result; refused when the current one has a larger
    /// source order (a result of an older version never overwrites a newer one).
    Promote(DocumentRecord),
    /// Appends an audit entry and moves the document's checkpoint to it; refused when the seq is
    /// taken or the checkpoint is not at the previous entry (no forks, no gaps).
    Audit(AuditEntry),
    /// A write of the operation ledger by the holder of `fence`, with the same condition as
    /// [`Ledger::write`](super::Ledger::write): refused unless the record carries `fence` and a
    /// status the write moves from. Committing it with the step's audit entry makes the
    /// ledger's progress and the audit trail one write.
    Ledger {
        /// The operation.
        op: OperationId,
        /// The writer's fence.
        fence: u64,
        /// What it writes.
        write: Write,
        /// When (unix seconds).
        now: i64,
    },
    /// Writes a run's saga journal iff the stored one is at `version - 1` (no journal for
    /// version 1): two writers that read the same version cannot both write. Committed with the
    /// audit entry of the effect or compensation it records (`steps::saga`).
    Journal(Journal),
    /// Writes an outbox record. `from: None` persists a new one (refused if the event has a
    /// record: the id is stable, the event is one); `from: Some(d)` moves a record that was read
    /// in delivery state `d` (refused unless it still is: delivery only moves forward, once).
    /// Committed with the state change the event announces.
    Outbox {
        /// The record as it is to be stored.
        record: OutboxRecord,
        /// The delivery state it was read in (`None`: no record yet).
        from: Option<Delivery>,
    },
    /// The compensation of a promotion: `previous` becomes the document's current result again
    /// (`None`: the document has no current result), refused unless the current one is still
    /// `run` — a newer result is never undone.
    Restore {
        /// The document.
        document: DocumentId,
        /// The run whose promotion is undone.
        run: RunId,
        /// What was current before it.
        previous: Option<PreviousResult>,
        /// An operator retracted `run`: the restored record names it
        /// ([`DocumentRecord::retracted_run_id`]).
        retracted: bool,
    },
}

/// A commit that was refused because the condition of `changes[index]` did not hold. Nothing of
/// the commit was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// The change whose condition failed.
    pub index: usize,
}

/// Runs, documents and the audit log: the records the steps change together, atomically.
pub trait Store: Send + Sync {
    /// Applies every change or none.
    fn commit(
        &self,
        changes: Vec<Change>,
    ) -> impl Future<Output = Result<Result<(), Refused>, Error>> + Send;
    /// A run record.
    fn run(&self, run_id: &RunId) -> impl Future<Output = Result<Option<RunRecord>, Error>> + Send;
    /// A document's current result.
    fn document(
        &self,
        id: &DocumentId,
    ) -> impl Future<Output = Result<Option<DocumentRecord>, Error>> + Send;
    /// The last audit entry of a document's chain (strongly consistent).
    fn audit_head(
        &self,
        id: &DocumentId,
    ) -> impl Future<Output = Result<Option<AuditEntry>, Error>> + Send;
    /// The chain's checkpoint (last seq and hash), kept apart from the entries: it is what
    /// catches a truncated tail.
    fn audit_checkpoint(
        &self,
        id: &DocumentId,
    ) -> impl Future<Output = Result<Option<Checkpoint>, Error>> + Send;
    /// The whole chain, in seq order.
    fn audit_entries(
        &self,
        id: &DocumentId,
    ) -> impl Future<Output = Result<Vec<AuditEntry>, Error>> + Send;
}
