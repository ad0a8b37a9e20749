//! OCR: one operation per run in the operation ledger, claimed before the provider is asked
//! anything, so that retries, duplicate invocations and crashed attempts never start a second
//! job and never lose one.
//!
//! - `start` claims the operation (one conditional write), starts the provider's job with the
//!   operation id as its idempotency token, and commits the ledger's `accepted` (with the job id)
//!   together with the `ocr.started` audit entry (one transaction). It returns the job id and the
//!   claim's fence, which the state machine carries to `poll`.
//! - A retry finds the work where it is: a job already accepted is returned as is; a claim whose
//!   holder crashed is taken over after its lease and the provider is asked again with the same
//!   token (it answers with the job it accepted, if any); a completed operation returns its job.
//! - A start whose turn under the provider's quotas did not come (`Transient.QuotaFull`,
//!   `crate::admitted`) asked nothing: it gives the lease up at once (`Write::Yield`), so that
//!   the state machine's retry takes over without waiting for the lease.
//! - A lost answer from the provider (`Ambiguous.OutcomeUnknown`) gives the lease up at once and
//!   lets the state machine retry (backoff, jitter) with the same token; after
//!   `ledger.max_ambiguous_attempts` such attempts the operation and the run become unresolved,
//!   with an owner and a next action — never a second job.
//! - `poll` writes the normalized OCR and commits the ledger's `completed` (pointer, hash) with
//!   the `ocr.completed` entry, conditional on the fence: a holder that was taken over cannot
//!   land a late result.
//! - A reprocessed run (`RunInput::reuse_ocr`) whose source version's stored OCR is there and
//!   was produced by the provider's engine asks the provider nothing: its "job" is that stored
//!   document (`REUSED` + its pointer), accepted and completed through the same ledger and audit
//!   entries (`reused: true`), and `poll` copies it to the run's own key.
//! - A one-page document (`RunInput::one_page`: ingest read its page count) is read by the
//!   provider's synchronous API instead (`Ocr::detect`): no job, no job slot, no notification.
//!   The claim is completed directly (`completed` with the `ocr.completed` entry, no
//!   `ocr.started`, no job id: [`DETECTED`]) and the Task's wait ends at once. The read changes
//!   nothing at the provider, so a full quota or a lost answer gives the lease up and the retry
//!   reads again; a document the provider reads only as a job (more pages than counted) gets a
//!   job after all; a start asked of the provider before (an answer lost) stays a job.
//! - The workflow learns of the job's end by callback ([`wait`]); if that never comes, it polls
//!   the job the ledger holds ([`reconcile`]; an operation completed already answers with its
//!   OCR).

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{record, to_json_bytes, Context};
use crate::audit::AuditDraft;
use crate::error::{ErrorKind, Family};
use crate::ids::{sha256_hex, OperationId};
use crate::ledger::{
    ambiguous_attempts, decide_write, Claimed, LedgerStatus, OperationRecord, Write, WriteDecision,
};
use crate::model::run::{ObjectRef, RunInput};
use crate::model::step::Step;
use crate::ocr::OcrDocument;
use crate::ports::{
    BlobStore, Change, HasBlobs, HasLedger, HasOcr, HasStore, Ledger, Ocr, OcrPoll, Refused,
    RunStatus, Unpaced,
};
use crate::Error;

pub mod wait;

/// `OcrPolled::status` of a job that succeeded.
pub const SUCCEEDED: &str = "SUCCEEDED";

/// The started job, and the claim under which the run holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OcrStarted {
    /// The provider's job id.
    pub job_id: String,
    /// The ledger fence of the claim that holds the operation; `poll` writes under it.
    pub fence: u64,
    /// What the OCR came to, when it is known already (a repeated start of a completed
    /// operation, or a one-page document read at once): no job to wait for, no poll.
    #[serde(skip)]
    pub done: Option<OcrPolled>,
}

/// What a poll found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OcrPolled {
    /// `IN_PROGRESS` or `SUCCEEDED` (a failed job is the error `Business.OcrFailed`).
    pub status: String,
    /// The normalized OCR, once succeeded (always present, `null` before: the state machine's
    /// ResultSelector reads it).
    pub normalized: Option<ObjectRef>,
    /// The pages the provider read, once succeeded (`None` when the stored OCR was reused: no
    /// page was read, none charged). Not kept by the state machine; the OcrPages metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_read: Option<usize>,
}

/// The parameters' fingerprint: which raw object version the job reads. The same operation id
/// with another one is `Conflict.ParametersChanged`, decided by the ledger before the provider
/// is asked.
pub fn fingerprint(input: &RunInput) -> String {
    let raw = &input.raw;
    let version = raw.version_id.as_deref().unwrap_or("");
    let params = format!("{}\n{}\n{}\n{}", raw.bucket, raw.key, version, input.sha256);
    format!("ocr-{}", &sha256_hex(params.as_bytes())[..32])
}

/// Starts (or finds) the run's OCR job; see the module docs for what a retry finds.
pub async fn start(
    ports: &(impl HasOcr + HasBlobs + HasStore + HasLedger),
    ctx: &Context,
    input: &RunInput,
) -> Result<OcrStarted, Error> {
    let ledger = ports.ledger();
    let op = Step::Ocr.operation(&input.run_id);
    let fingerprint = fingerprint(input);
    let now = ctx.clock.now().unix_timestamp();
    let rules = ctx.config.ledger.lease_rules();
    let previous = match ledger.claim(&op, &fingerprint, now, &rules).await {
        Ok(Claimed::Fresh { fence }) => (fence, None),
        Ok(Claimed::TakenOver { fence, previous }) => (fence, Some(previous)),
        Ok(Claimed::AlreadyDone(rec)) => {
            return Ok(OcrStarted {
                job_id: rec
                    .provider_job_id
                    .clone()
                    .unwrap_or_else(|| DETECTED.into()),
                fence: rec.fence,
                done: Some(completed(&rec)),
            });
        }
        Err(Error::InProgress(why)) => {
            // A live holder. If a provider already holds the work, that job is the answer
            // (this is a retry whose first attempt's answer was lost); otherwise back off.
            return match ledger.get(&op).await? {
                Some(rec) if rec.status == LedgerStatus::Accepted => recorded_job(&op, &rec),
                _ => Err(Error::InProgress(why)),
            };
        }
        Err(e) => return Err(e),
    };
    let (fence, previous) = previous;
    let holder = Holder {
        ports,
        ctx,
        input,
        op,
        fence,
    };
    let known_job = previous.as_ref().and_then(|p| p.provider_job_id.clone());
    let reused = match known_job {
        Some(_) => None,
        None => reusable(ports, input).await?,
    };
    // A start asked of the provider before (its answer lost) stays a job: ask for that job.
    let asked_before = previous.as_ref().is_some_and(|p| ambiguous_attempts(p) > 0);
    if known_job.is_none() && reused.is_none() && input.one_page() && !asked_before {
        if let Some(done) = holder.detect().await? {
            return Ok(done);
        }
    }
    let job_id = match (known_job, reused) {
        // The previous holder's provider accepted the work: reconcile to it, start nothing.
        (Some(job), _) => job,
        // A reprocess of the same source version by the same engine: no second provider job.
        (None, Some(job)) => job,
        (None, None) => match ports
            .ocr()
            .start(&holder.op, &input.raw, input.run_id.as_str())
            .await
        {
            Ok(job) => job,
            Err(Error::OutcomeUnknown(why)) => {
                let attempts = previous.as_ref().map_or(0, ambiguous_attempts) + 1;
                return Err(holder.ambiguous(attempts, why).await);
            }
            // Its turn under the quotas did not come; nothing was asked. Give the lease up
            // so that the state machine's retry takes over at once, not after the lease.
            Err(e @ Error::QuotaFull(_)) => return Err(holder.yield_lease(e).await),
            // Nothing is known to have happened: the lease runs out and a retry takes over.
            Err(e) if e.family() == Family::Transient => return Err(e),
            Err(e) => return Err(holder.fail_run(None, e).await),
        },
    };
    let write = Write::Accept {
        job_id: job_id.clone(),
    };
    let draft = AuditDraft::new(&ctx.actor, "ocr.started", Some(&input.run_id))
        .operation(&holder.op)
        .input("raw", &input.sha256)
        .detail(json!({"jobId": job_id, "fence": fence, "reused": job_id.starts_with(REUSED)}));
    holder.commit(write, vec![], draft).await?;
    Ok(OcrStarted {
        job_id,
        fence,
        done: None,
    })
}

/// The job id of a stored OCR reused for a run: the stored document's pointer behind this.
pub const REUSED: &str = "reused:";

/// The "job id" of a one-page document read synchronously: there is no provider job.
pub const DETECTED: &str = "detected";

/// What a completed operation `rec` came to: its normalized OCR (no page read now).
fn completed(rec: &OperationRecord) -> OcrPolled {
    OcrPolled {
        status: SUCCEEDED.into(),
        normalized: rec
            .result_pointer
            .as_deref()
            .and_then(ObjectRef::from_pointer),
        pages_read: None,
    }
}

/// The job id of `input`'s stored OCR to reuse (`RunInput::reuse_ocr`), when it is there and
/// the provider's engine produced it; otherwise `None`, and the provider is asked.
async fn reusable(
    ports: &(impl HasOcr + HasBlobs),
    input: &RunInput,
) -> Result<Option<String>, Error> {
    let Some(stored) = &input.reuse_ocr else {
        return Ok(None);
    };
    if ports.blobs().head(stored).await?.is_none() {
        return Ok(None);
    }
    let document = stored_document(ports.blobs(), &stored.to_string()).await?;
    let same_engine = document.engine.starts_with(ports.ocr().engine());
    Ok(same_engine.then(|| format!("{REUSED}{stored}")))
}

/// The normalized OCR stored at `pointer`.
async fn stored_document(blobs: &impl BlobStore, pointer: &str) -> Result<OcrDocument, Error> {
    let stored = ObjectRef::from_pointer(pointer)
        .ok_or_else(|| Error::Internal(format!("not a stored OCR pointer: {pointer}")))?;
    let bytes = blobs.get(&stored).await?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::Internal(format!("stored OCR {pointer} is not a document: {e}")))
}

/// The job an earlier holder recorded.
fn recorded_job(op: &OperationId, rec: &OperationRecord) -> Result<OcrStarted, Error> {
    let job_id = rec.provider_job_id.clone().ok_or_else(|| {
        Error::Internal(format!(
            "operation {op} is {} without a job id",
            rec.status.as_str()
        ))
    })?;
    Ok(OcrStarted {
        job_id,
        fence: rec.fence,
        done: None,
    })
}

/// The holder of the run's OCR operation under `fence`: what each of its ledger writes needs.
struct Holder<'a, P> {
    ports: &'a P,
    ctx: &'a Context,
    input: &'a RunInput,
    op: OperationId,
    fence: u64,
}

impl<P: HasOcr + HasBlobs + HasStore + HasLedger> Holder<'_, P> {
    /// Reads the run's one-page document synchronously and completes the operation with it:
    /// what the OCR came to, or `None` when the provider reads the document only as a job. The
    /// read changes nothing at the provider, so any transient failure (a full quota, a lost
    /// answer) gives the lease up at once for the state machine's retry to read again.
    async fn detect(&self) -> Result<Option<OcrStarted>, Error> {
        let (raw, booked) = (&self.input.raw, self.input.read_at_ms);
        let read = self.ports.ocr().detect(&self.op, raw, booked).await;
        let document = match read {
            Ok(Some(document)) => document,
            Ok(None) => return Ok(None),
            Err(e) if matches!(e.family(), Family::Transient | Family::Ambiguous) => {
                return Err(self.yield_lease(e).await)
            }
            Err(e) => return Err(self.fail_run(None, e).await),
        };
        let polled = self.complete(None, document).await?;
        Ok(Some(OcrStarted {
            job_id: DETECTED.into(),
            fence: self.fence,
            done: Some(polled),
        }))
    }

    /// Writes the normalized `document` (of job `job_id`, or of a synchronous read) to the
    /// run's key and commits the ledger's `completed` with the `ocr.completed` entry.
    async fn complete(
        &self,
        job_id: Option<&str>,
        document: OcrDocument,
    ) -> Result<OcrPolled, Error> {
        let (ctx, input) = (self.ctx, self.input);
        let target = ctx
            .layout
            .ocr(&input.tenant, &input.document_id, &input.run_id);
        let bytes = to_json_bytes(&document);
        let hash = sha256_hex(&bytes);
        let lines = document.lines().count();
        let blobs = self.ports.blobs();
        blobs.put(&target, bytes, "application/json").await?;
        let write = Write::Complete {
            result_pointer: target.to_string(),
            result_hash: hash.clone(),
        };
        let draft = AuditDraft::new(&ctx.actor, "ocr.completed", Some(&input.run_id))
            .operation(&self.op)
            .input("raw", &input.sha256)
            .output("ocr", &target.to_string())
            .detail(json!({
                "jobId": job_id,
                "engine": document.engine,
                "pages": document.pages.len(),
                "lines": lines,
                "sha256": hash,
            }));
        self.commit(write, vec![], draft).await?;
        let reused = job_id.is_some_and(|job| job.starts_with(REUSED));
        Ok(OcrPolled {
            status: SUCCEEDED.into(),
            normalized: Some(target),
            pages_read: (!reused).then_some(document.pages.len()),
        })
    }
}

impl<P: HasStore + HasLedger> Holder<'_, P> {
    /// The provider's answer to a start was lost. Below the limit: give the lease up (the next
    /// attempt takes over at once and asks again with the same token) and report the ambiguity
    /// for the state machine to retry. At the limit: the operation and the run become
    /// unresolved.
    async fn ambiguous(&self, attempts: usize, why: String) -> Error {
        let (ctx, input, op) = (self.ctx, self.input, &self.op);
        let now = ctx.clock.now().unix_timestamp();
        let rules = &ctx.config.ledger;
        if attempts < rules.max_ambiguous_attempts {
            let released = self
                .ports
                .ledger()
                .write(op, self.fence, Write::Ambiguous, now);
            return match released.await {
                Ok(()) => Error::OutcomeUnknown(why),
                Err(e) => e,
            };
        }
        let next_action = format!(
            "Look up the Textract text detection job started with ClientRequestToken {op}; \
             if it exists, its JobId is this operation's job; if not, re-upload the document"
        );
        let write = Write::MarkUnresolved {
            owner: rules.unresolved_owner.clone(),
            next_action: next_action.clone(),
        };
        let run = Change::SetRunStatus {
            run_id: input.run_id.clone(),
            from: RunStatus::Started,
            to: RunStatus::Unresolved,
            outputs: Default::default(),
            error: Some(ErrorKind::Unresolved.name().into()),
        };
        let draft = AuditDraft::new(&ctx.actor, "ocr.unresolved", Some(&input.run_id))
            .operation(op)
            .detail(json!({
                "owner": rules.unresolved_owner,
                "nextAction": next_action,
                "ambiguousAttempts": attempts,
            }));
        match self.commit(write, vec![run], draft).await {
            Ok(()) => Error::Unresolved(format!(
                "operation {op}: the provider's outcome is unknown after {attempts} attempts \
                 ({why}); owner {}",
                rules.unresolved_owner
            )),
            Err(e) => e,
        }
    }

    /// Gives the lease up after a start that asked the provider nothing (`error`, a full
    /// quota), and returns `error` (or what the ledger write failed with).
    async fn yield_lease(&self, error: Error) -> Error {
        let now = self.ctx.clock.now().unix_timestamp();
        let released = self
            .ports
            .ledger()
            .write(&self.op, self.fence, Write::Yield, now);
        match released.await {
            Ok(()) => error,
            Err(e) => e,
        }
    }

    /// Ends the operation and the run with a named, non-transient error (ledger `failed`, run
    /// `failed`, an `ocr.failed` entry, one transaction) and returns that error. A refusal means
    /// an earlier attempt already ended them; the error is returned all the same.
    async fn fail_run(&self, job_id: Option<&str>, error: Error) -> Error {
        let write = Write::Fail {
            error: error.kind(),
        };
        let run = Change::SetRunStatus {
            run_id: self.input.run_id.clone(),
            from: RunStatus::Started,
            to: RunStatus::Failed,
            outputs: Default::default(),
            error: Some(error.name().into()),
        };
        let draft = AuditDraft::new(&self.ctx.actor, "ocr.failed", Some(&self.input.run_id))
            .operation(&self.op)
            .detail(json!({"jobId": job_id, "error": error.name(), "reason": error.to_string()}));
        match self.commit(write, vec![run], draft).await {
            Ok(()) | Err(Error::FencedOut(_)) => error,
            Err(other) => other,
        }
    }

    /// Commits the ledger `write` (first), `changes` and the audit entry in one transaction. A
    /// refused ledger write is explained by the record: the same write already landed (a lost
    /// acknowledgement) → done; the fence was taken over → `Conflict.FencedOut`. A refusal of
    /// one of `changes` means an earlier attempt already moved the run: done.
    async fn commit(
        &self,
        write: Write,
        changes: Vec<Change>,
        draft: AuditDraft,
    ) -> Result<(), Error> {
        let (op, fence) = (&self.op, self.fence);
        let now = self.ctx.clock.now().unix_timestamp();
        let mut all = vec![Change::Ledger {
            op: op.clone(),
            fence,
            write: write.clone(),
            now,
        }];
        all.extend(changes);
        let store = self.ports.store();
        match record(store, self.ctx, &self.input.document_id, all, draft).await? {
            Ok(_) | Err(Refused { index: 1.. }) => Ok(()),
            Err(Refused { index: 0 }) => {
                let rec = self.ports.ledger().get(op).await?;
                match decide_write(rec.as_ref(), op, fence, &write)? {
                    WriteDecision::AlreadyApplied => Ok(()),
                    WriteDecision::Apply => Err(Error::Dependency(format!(
                        "ledger {op}: write refused, then allowed; retry"
                    ))),
                }
            }
        }
    }
}

/// Polls the job once. On success writes the normalized OCR and completes the operation; on a
/// failed job (or one of more pages than `limits.max_pages`) ends the operation and the run and
/// returns `Business.OcrFailed` (`Business.TooManyPages`).
pub async fn poll(
    ports: &(impl HasOcr + HasBlobs + HasStore + HasLedger),
    ctx: &Context,
    input: &RunInput,
    started: &OcrStarted,
) -> Result<OcrPolled, Error> {
    let holder = Holder {
        ports,
        ctx,
        input,
        op: Step::Ocr.operation(&input.run_id),
        fence: started.fence,
    };
    let job_id = started.job_id.as_str();
    let polled = match job_id.strip_prefix(REUSED) {
        Some(pointer) => OcrPoll::Succeeded(stored_document(ports.blobs(), pointer).await?),
        None => {
            let max_pages = ctx.config.limits.max_pages;
            match ports
                .ocr()
                .poll(&holder.op, job_id, max_pages, &Unpaced)
                .await
            {
                Ok(polled) => polled,
                // The document itself is refused (more pages than the limit): the run ends.
                Err(e) if e.family() == Family::Business => {
                    return Err(holder.fail_run(Some(job_id), e).await)
                }
                Err(e) => return Err(e),
            }
        }
    };
    match polled {
        OcrPoll::InProgress => Ok(OcrPolled {
            status: "IN_PROGRESS".into(),
            normalized: None,
            pages_read: None,
        }),
        OcrPoll::Succeeded(document) => holder.complete(Some(job_id), document).await,
        OcrPoll::Failed(message) => {
            let error = Error::OcrFailed(message);
            Err(holder.fail_run(Some(job_id), error).await)
        }
    }
}

/// The fallback when the workflow's wait for the job's end ran into its deadline (its
/// notification lost): polls once the job the ledger holds for the run, under the fence it
/// holds it with.
pub async fn reconcile(
    ports: &(impl HasOcr + HasBlobs + HasStore + HasLedger),
    ctx: &Context,
    input: &RunInput,
) -> Result<OcrPolled, Error> {
    let op = Step::Ocr.operation(&input.run_id);
    let record = ports.ledger().get(&op).await?;
    let record = record.ok_or_else(|| Error::Internal(format!("no ledger record for {op}")))?;
    if record.status == LedgerStatus::Completed {
        // Read synchronously (no job to poll), or polled already: its OCR is known.
        return Ok(completed(&record));
    }
    let started = recorded_job(&op, &record)?;
    poll(ports, ctx, input, &started).await
}
