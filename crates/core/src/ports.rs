//! The narrow ports the steps are written against. Each returns docket's own types; the AWS
//! adapters (crate `docket-aws`) and the in-memory ones ([`crate::memory`]) implement them.

use std::collections::BTreeMap;
use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::audit::{AuditEntry, Checkpoint};
use crate::ids::{DocumentId, OperationId, RunId, SourceVersion, Tenant};
use crate::model::run::{ObjectRef, TaskToken};
use crate::ocr::OcrDocument;
use crate::Error;

/// What a HEAD of an object tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// Size in bytes.
    pub size: u64,
    /// The version id, on a versioned bucket.
    pub version_id: Option<String>,
}

/// Object storage.
pub trait BlobStore: Send + Sync {
    /// The object's metadata, or `None` when it does not exist.
    fn head(
        &self,
        obj: &ObjectRef,
    ) -> impl Future<Output = Result<Option<ObjectMeta>, Error>> + Send;
    /// The object's bytes (`Error::BadInput` when it does not exist).
    fn get(&self, obj: &ObjectRef) -> impl Future<Output = Result<Vec<u8>, Error>> + Send;
    /// Writes an object; returns its version id on a versioned bucket.
    fn put(
        &self,
        obj: &ObjectRef,
        body: Vec<u8>,
        content_type: &str,
    ) -> impl Future<Output = Result<Option<String>, Error>> + Send;
    /// Server-side copy, with metadata (`x-amz-meta-*`) on the copy.
    fn copy(
        &self,
        from: &ObjectRef,
        to: &ObjectRef,
        metadata: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<(), Error>> + Send;
}

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
}

impl RunStatus {
    /// The name stored and shown.
    pub fn as_str(self) -> &'static str {
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
    /// [`crate::ledger::Ledger::write`]: refused unless the record carries `fence` and a status
    /// the write moves from. Committing it with the step's audit entry makes the ledger's
    /// progress and the audit trail one write.
    Ledger {
        /// The operation.
        op: OperationId,
        /// The writer's fence.
        fence: u64,
        /// What it writes.
        write: crate::ledger::Write,
        /// When (unix seconds).
        now: i64,
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

/// What an OCR job reports.
#[derive(Debug, Clone, PartialEq)]
pub enum OcrPoll {
    /// Still running.
    InProgress,
    /// Done: the normalized document.
    Succeeded(OcrDocument),
    /// The provider could not read the document.
    Failed(String),
}

/// An asynchronous OCR provider.
pub trait Ocr: Send + Sync {
    /// Starts (or, with the same operation id, finds) the text detection job for `document`.
    /// The operation id is the provider's idempotency token. Returns the job id.
    fn start(
        &self,
        operation: &OperationId,
        document: &ObjectRef,
        tag: &str,
    ) -> impl Future<Output = Result<String, Error>> + Send;
    /// The job's state; on success the whole normalized document.
    fn poll(&self, job_id: &str) -> impl Future<Output = Result<OcrPoll, Error>> + Send;
}

/// Whether a workflow start created the execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Started {
    /// The start was accepted: a new execution, or (Step Functions answers an identical start
    /// of a still-running Standard execution idempotently) the same one again.
    New,
    /// An execution with that name existed already (a duplicate start): not an error.
    AlreadyExists,
}

/// The workflow engine.
pub trait Workflow: Send + Sync {
    /// Starts the execution named `run` with `input` (ids and pointers only).
    fn start(
        &self,
        run: &RunId,
        input: &Value,
    ) -> impl Future<Output = Result<Started, Error>> + Send;
}

/// The answer to a workflow Task that waits for a token (Step Functions' `SendTaskSuccess` /
/// `SendTaskFailure`).
pub trait TaskCallback: Send + Sync {
    /// Resumes the waiting Task with `output`. `Conflict.ReviewExpired` when the workflow no
    /// longer waits on that token (Step Functions' `TaskTimedOut` / `InvalidToken`).
    fn succeed(
        &self,
        token: &TaskToken,
        output: &Value,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// Fails the waiting Task with `error` (its name is the Task's error); errors as
    /// [`TaskCallback::succeed`].
    fn fail(
        &self,
        token: &TaskToken,
        error: crate::error::ErrorKind,
        cause: &str,
    ) -> impl Future<Output = Result<(), Error>> + Send;
}
