//! Ingest: an S3 "Object Created" event for `inbox/<tenant>/...` becomes a run record and a
//! workflow execution named by the run id, or, for an upload that cannot be a document, a
//! quarantine copy with the reason. The raw object is never deleted or changed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{record, Context};
use crate::audit::AuditDraft;
use crate::doctype::sniff;
use crate::ids::{
    decode_event_key, parse_inbox_key, sha256_hex, DocumentId, OperationId, RunId, SourceVersion,
};
use crate::model::run::{ExecutionInput, ObjectRef, RunInput};
use crate::ports::{
    BlobStore, Change, HasBlobs, HasStore, HasWorkflow, RunRecord, RunStatus, Started, Workflow,
};
use crate::Error;

/// The facts of an S3 "Object Created" event that ingest uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectCreated {
    /// Bucket name.
    pub bucket: String,
    /// The key as the event carries it (URL-encoded).
    pub key: String,
    /// The new object version (absent on an unversioned bucket).
    pub version_id: Option<String>,
    /// S3's sequencer for the key (orders writes to one key).
    pub sequencer: Option<String>,
    /// The event time (RFC 3339).
    pub time: Option<String>,
}

/// What ingest did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum IngestOutcome {
    /// A run exists for this version and its execution was started (now or before).
    Started {
        /// The document.
        document_id: DocumentId,
        /// The run.
        run_id: RunId,
        /// Whether this call started the execution.
        execution: Started,
    },
    /// The upload cannot be processed: copied to quarantine with the reason, and audited.
    Quarantined {
        /// The chain the rejection is recorded in.
        document_id: DocumentId,
        /// The error's stable name.
        error: String,
        /// The quarantine copy.
        quarantine: ObjectRef,
    },
    /// Nothing to do (the event is not for an inbox upload, or the version is gone).
    Ignored {
        /// Why.
        reason: String,
    },
}

/// The smallest byte count that can hold a document of the sniffed type; anything shorter is a
/// header with nothing behind it.
const MIN_DOCUMENT_BYTES: usize = 16;

/// Handles one event. Safe to run any number of times for the same event, concurrently too: the
/// run record is a conditional put and the execution name is the run id.
pub async fn handle(
    ports: &(impl HasBlobs + HasStore + HasWorkflow),
    ctx: &Context,
    event: &ObjectCreated,
) -> Result<IngestOutcome, Error> {
    let blobs = ports.blobs();
    if event.bucket != ctx.layout.raw_bucket {
        return Err(Error::BadInput(format!(
            "event for bucket {:?}, expected the raw bucket",
            event.bucket
        )));
    }
    let key = decode_event_key(&event.key)?;
    if !key.starts_with(crate::ids::INBOX_PREFIX) {
        return Ok(IngestOutcome::Ignored {
            reason: "not an inbox upload".into(),
        });
    }
    let version_id = event.version_id.clone().unwrap_or_else(|| "null".into());
    let raw = ObjectRef {
        bucket: event.bucket.clone(),
        key: key.clone(),
        version_id: Some(version_id.clone()),
    };

    let inbox = match parse_inbox_key(&key) {
        Ok(inbox) => inbox,
        Err(e) => {
            let document = DocumentId::for_rejected_key(&key);
            return quarantine(ports, ctx, &document, &raw, e).await;
        }
    };
    let document = DocumentId::new(&inbox.tenant, &inbox.logical_key);

    let Some(meta) = blobs.head(&raw).await? else {
        return Ok(IngestOutcome::Ignored {
            reason: format!("version {version_id} no longer exists"),
        });
    };
    let limit = ctx.config.limits.max_document_bytes;
    if meta.size > limit {
        let e = Error::DocumentTooLarge {
            size: meta.size,
            limit,
        };
        return quarantine(ports, ctx, &document, &raw, e).await;
    }
    // The bytes are held only while they are summarised, within the process's budget; they
    // are gone before the run's start waits for its turn (`read_budget`).
    let read = {
        let _held = ctx.reads.hold(meta.size).await;
        Upload::read(&blobs.get(&raw).await?, ctx.config.limits.max_pages)
    };
    let upload = match read {
        Ok(upload) => upload,
        Err(e) => return quarantine(ports, ctx, &document, &raw, e).await,
    };

    let source = SourceVersion {
        version_id,
        sha256: upload.sha256,
    };
    let fingerprint = ctx.config.fingerprint();
    let run_id = RunId::new(&document, &source, &fingerprint, 0);
    let input = RunInput {
        tenant: inbox.tenant.clone(),
        document_id: document.clone(),
        run_id: run_id.clone(),
        raw: raw.clone(),
        sha256: source.sha256.clone(),
        source_order: source_order(event),
        config_fingerprint: fingerprint,
        reuse_ocr: None,
        pages: upload.pages,
        read_at_ms: None,
    };
    let draft = AuditDraft::new(&ctx.actor, "document.accepted", Some(&run_id))
        .input("raw", &source.sha256)
        .output("raw", &raw.to_string())
        .detail(json!({"sizeBytes": meta.size, "sourceOrder": input.source_order}));
    let execution = begin_run(ports, ctx, &input, 0, draft).await?;
    Ok(IngestOutcome::Started {
        document_id: document,
        run_id,
        execution,
    })
}

/// Records `input`'s run (of `generation`) with `draft` as its first audit entry, and starts its
/// execution, named by the run id. Safe to run any number of times, concurrently too: the run
/// record is a conditional put, and a start of an existing execution is not a second one.
pub(super) async fn begin_run(
    ports: &(impl HasStore + HasWorkflow),
    ctx: &Context,
    input: &RunInput,
    generation: u32,
    draft: AuditDraft,
) -> Result<Started, Error> {
    let run = RunRecord {
        run_id: input.run_id.clone(),
        document_id: input.document_id.clone(),
        tenant: input.tenant.clone(),
        source: SourceVersion {
            version_id: input
                .raw
                .version_id
                .clone()
                .unwrap_or_else(|| "null".into()),
            sha256: input.sha256.clone(),
        },
        raw: input.raw.clone(),
        source_order: input.source_order.clone(),
        config_fingerprint: input.config_fingerprint.clone(),
        generation,
        status: RunStatus::Started,
        created_at: ctx.clock.now_rfc3339(),
        outputs: BTreeMap::new(),
        error: None,
        pages: input.pages,
    };
    // Refused(0): the run record exists, so an earlier delivery got here first. Starting the
    // execution again is harmless (its name is the run id), but when it exists (running or
    // ended) there is nothing to start: not asked, it takes no turn at the pacer (a duplicate
    // upload event would spend a turn another upload waits for) and no job slot that no job
    // would give back (its own job may have ended already). An earlier delivery whose start
    // failed or found no turn left no execution: this one starts it.
    let recorded = record(
        ports.store(),
        ctx,
        &input.document_id,
        vec![Change::CreateRun(run)],
        draft,
    )
    .await?;
    let name = input.run_id.as_str();
    if recorded.is_err() && ports.workflow().exists(name).await? {
        return Ok(Started::AlreadyExists);
    }
    let body = ExecutionInput {
        run: input.clone(),
        ocr_wait_seconds: ctx.ocr_wait_seconds,
        review_wait_seconds: ctx.review_wait_seconds,
    };
    let body = serde_json::to_value(body).expect("an execution input serializes");
    ports.workflow().start(name, &body).await
}

/// What ingest keeps of an upload's bytes.
struct Upload {
    sha256: String,
    pages: Option<u32>,
}

impl Upload {
    /// The summary of `bytes`, or why they are no document we can process: among the reasons,
    /// more pages than `max_pages` when the bytes tell the count (the OCR step refuses the
    /// others at their job's first answer).
    fn read(bytes: &[u8], max_pages: u32) -> Result<Self, Error> {
        let kind = check_content(bytes)?;
        let pages = crate::pages::count(bytes, kind);
        if let Some(pages) = pages.filter(|&n| n > max_pages) {
            return Err(Error::TooManyPages {
                pages,
                limit: max_pages,
            });
        }
        Ok(Self {
            sha256: sha256_hex(bytes),
            pages,
        })
    }
}

/// Checks the bytes are a document we can process.
pub fn check_content(bytes: &[u8]) -> Result<&'static str, Error> {
    if bytes.is_empty() {
        return Err(Error::EmptyDocument);
    }
    let kind = sniff(bytes).ok_or_else(|| {
        Error::UnsupportedDocumentType("not a PDF, PNG, JPEG or TIFF (by magic bytes)".into())
    })?;
    if bytes.len() < MIN_DOCUMENT_BYTES {
        return Err(Error::EmptyDocument);
    }
    Ok(kind)
}

/// Orders versions of one key: S3's sequencer where it is meaningful, behind the event time.
/// Sequencers of one key grow with each write; they are only comparable at equal length, so they
/// are left-padded. (LocalStack sends a constant sequencer; the event time still orders uploads
/// that are at least a millisecond apart.)
pub fn source_order(event: &ObjectCreated) -> String {
    let time = event.time.clone().unwrap_or_default();
    let sequencer = event.sequencer.clone().unwrap_or_default();
    format!("{time:0>30}|{sequencer:0>32}")
}

async fn quarantine(
    ports: &(impl HasBlobs + HasStore),
    ctx: &Context,
    document: &DocumentId,
    raw: &ObjectRef,
    error: Error,
) -> Result<IngestOutcome, Error> {
    let version = raw.version_id.as_deref().unwrap_or("null");
    let target = ctx.layout.quarantine(document, version);
    let metadata = BTreeMap::from([
        ("docket-error".to_string(), error.name().to_string()),
        ("docket-reason".to_string(), ascii(&error.to_string())),
        ("docket-source-key".to_string(), ascii(&raw.key)),
        ("docket-source-version".to_string(), version.to_string()),
    ]);
    // A version deleted since the event cannot be copied; the audit entry still records why.
    let copied = match ports.blobs().head(raw).await? {
        Some(_) => {
            ports.blobs().copy(raw, &target, &metadata).await?;
            true
        }
        None => false,
    };
    let draft = AuditDraft::new(&ctx.actor, "document.quarantined", None)
        .operation(&OperationId::quarantine(document, version))
        .output("raw", &raw.to_string())
        .detail(json!({
            "error": error.name(),
            "reason": error.to_string(),
            "quarantine": if copied { target.to_string() } else { String::new() },
        }));
    let _ = record(ports.store(), ctx, document, vec![], draft).await?;
    Ok(IngestOutcome::Quarantined {
        document_id: document.clone(),
        error: error.name().to_string(),
        quarantine: target,
    })
}

/// S3 metadata values must be ASCII: anything else is percent-encoded.
fn ascii(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if (0x20..0x7f).contains(&b) && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
