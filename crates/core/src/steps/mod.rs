//! The pipeline's steps, one module each, generic over the ports they use. A Lambda handler parses
//! its event, calls one function here and maps the result; everything else happens here.

pub mod config;
pub mod ingest;
pub mod ocr;
pub mod payable;
pub mod recover;
pub mod reprocess;
pub mod resolve;
pub mod review;
pub mod route;
pub mod saga;
pub mod validate;

use serde::Serialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::audit::{seal, AuditDraft, AuditEntry};
use crate::config::PipelineConfig;
use crate::ids::{DocumentId, RunId, Tenant};
use crate::model::run::ObjectRef;
use crate::ports::{Change, Refused, Store};
use crate::Error;

/// Where each kind of data lives: raw, normalized and derived are kept apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Uploads (`inbox/`) and quarantine copies (`quarantine/`); versioned.
    pub raw_bucket: String,
    /// Provider-neutral OCR output.
    pub normalized_bucket: String,
    /// Validation reports and results.
    pub derived_bucket: String,
}

impl Layout {
    fn run_prefix(tenant: &Tenant, document: &DocumentId, run: &RunId) -> String {
        format!("{tenant}/{document}/{run}")
    }

    /// The normalized OCR of a run.
    pub fn ocr(&self, tenant: &Tenant, document: &DocumentId, run: &RunId) -> ObjectRef {
        let prefix = Self::run_prefix(tenant, document, run);
        ObjectRef::new(&self.normalized_bucket, format!("{prefix}/ocr.json"))
    }

    /// The validation report of a run.
    pub fn validation(&self, tenant: &Tenant, document: &DocumentId, run: &RunId) -> ObjectRef {
        let prefix = Self::run_prefix(tenant, document, run);
        ObjectRef::new(&self.derived_bucket, format!("{prefix}/validation.json"))
    }

    /// The result of a run.
    pub fn result(&self, tenant: &Tenant, document: &DocumentId, run: &RunId) -> ObjectRef {
        let prefix = Self::run_prefix(tenant, document, run);
        ObjectRef::new(&self.derived_bucket, format!("{prefix}/result.json"))
    }

    /// Where a rejected upload is copied (the raw object itself stays where it is).
    pub fn quarantine(&self, document: &DocumentId, version_id: &str) -> ObjectRef {
        ObjectRef::new(
            &self.raw_bucket,
            format!("quarantine/{document}/{version_id}"),
        )
    }
}

/// The time source: the system clock, or a fixed instant in tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// `OffsetDateTime::now_utc()`.
    System,
    /// Always this instant.
    Fixed(OffsetDateTime),
}

impl Clock {
    /// The current instant.
    pub fn now(&self) -> OffsetDateTime {
        match self {
            Clock::System => OffsetDateTime::now_utc(),
            Clock::Fixed(t) => *t,
        }
    }

    /// The current instant, RFC 3339.
    pub fn now_rfc3339(&self) -> String {
        self.now()
            .format(&Rfc3339)
            .expect("RFC 3339 formats any UTC time")
    }
}

/// What every step needs besides its ports.
#[derive(Debug, Clone)]
pub struct Context {
    /// Bucket layout.
    pub layout: Layout,
    /// Rules, thresholds, limits.
    pub config: PipelineConfig,
    /// Who is acting, for the audit log (`docket/ingest`, ...).
    pub actor: String,
    /// Time source.
    pub clock: Clock,
    /// How long a run's OCR Task waits for its job's completion notification before the
    /// workflow polls the job instead (seconds; the execution input's `ocrWaitSeconds`,
    /// written when the run starts).
    pub ocr_wait_seconds: u32,
    /// How long a run that needs a person waits in Validate for a reviewer's decision before it
    /// is escalated (seconds; the execution input's `reviewWaitSeconds`, written when the run
    /// starts).
    pub review_wait_seconds: u32,
    /// The bytes of uploads the process may hold at once (ingest's reads, shared by a batch).
    pub reads: std::sync::Arc<crate::read_budget::ReadBudget>,
}

/// [`Context::ocr_wait_seconds`] unless the stack sets another (`OCR_WAIT_SECONDS`): long
/// enough for a multi-page job under load; a lost notification costs this much latency.
pub const DEFAULT_OCR_WAIT_SECONDS: u32 = 300;

/// [`Context::review_wait_seconds`] unless the stack sets another (`REVIEW_WAIT_SECONDS`, from
/// the stack parameter `ReviewTimeoutSeconds`): three days.
pub const DEFAULT_REVIEW_WAIT_SECONDS: u32 = 259_200;

/// How many times an audit append is retried when another writer took the next seq first.
const AUDIT_RACE_ATTEMPTS: usize = 8;

/// Appends `draft` to `document`'s chain atomically with `changes`. When another writer took the
/// sequence number first, re-reads the head and tries again; a refusal of one of `changes` is
/// returned as is (nothing was written); a lost answer is reconciled against the chain's head. When
/// the chain's head already is this operation's entry (a retried step whose first attempt
/// committed), nothing is written again.
pub async fn record<S: Store>(
    store: &S,
    ctx: &Context,
    document: &DocumentId,
    changes: Vec<Change>,
    draft: AuditDraft,
) -> Result<Result<AuditEntry, Refused>, Error> {
    append(store, ctx, document, changes, draft, true).await
}

/// [`record`] for changes that carry their own guard against a repeat (a versioned saga
/// journal: a repeat finds the journal moved and writes nothing): a head that is the same
/// operation's entry is not taken as this commit having landed, since one operation appends
/// several entries (a refusal, then its settlement).
pub async fn record_guarded<S: Store>(
    store: &S,
    ctx: &Context,
    document: &DocumentId,
    changes: Vec<Change>,
    draft: AuditDraft,
) -> Result<Result<AuditEntry, Refused>, Error> {
    append(store, ctx, document, changes, draft, false).await
}

async fn append<S: Store>(
    store: &S,
    ctx: &Context,
    document: &DocumentId,
    changes: Vec<Change>,
    draft: AuditDraft,
    repeat_is_done: bool,
) -> Result<Result<AuditEntry, Refused>, Error> {
    for _ in 0..AUDIT_RACE_ATTEMPTS {
        let head = store.audit_head(document).await?;
        if let Some(head) = head.as_ref().filter(|_| repeat_is_done) {
            let same_operation = draft.operation_id.is_some()
                && head.draft.operation_id == draft.operation_id
                && head.draft.action == draft.action;
            if same_operation {
                return Ok(Ok(head.clone()));
            }
        }
        let checkpoint = head.as_ref().map(AuditEntry::checkpoint);
        let entry = seal(
            document,
            checkpoint.as_ref(),
            ctx.clock.now_rfc3339(),
            draft.clone(),
        );
        let audit_index = changes.len();
        let mut all = changes.clone();
        all.push(Change::Audit(entry.clone()));
        match store.commit(all).await {
            Ok(Ok(())) => return Ok(Ok(entry)),
            Ok(Err(Refused { index })) if index == audit_index => continue,
            Ok(Err(refused)) => return Ok(Err(refused)),
            // The answer was lost: the commit is atomic, so it landed whole iff our exact entry
            // (same seq, same hash) is now the head. Reconcile before anything is retried.
            Err(Error::OutcomeUnknown(_)) => {
                if store
                    .audit_head(document)
                    .await?
                    .is_some_and(|h| h.hash == entry.hash)
                {
                    return Ok(Ok(entry));
                }
            }
            Err(other) => return Err(other),
        }
    }
    Err(Error::InProgress(format!(
        "audit chain of {document} contended {AUDIT_RACE_ATTEMPTS} times"
    )))
}

/// Serializes a value the steps write to S3.
pub(crate) fn to_json_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec_pretty(value).expect("step outputs serialize")
}

#[cfg(test)]
mod tests;
