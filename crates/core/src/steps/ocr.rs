//! OCR: start the provider's text detection job with the operation id as its idempotency token,
//! then poll it (the state machine's Wait loop) and write the normalized OCR when it is done.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{record, to_json_bytes, Context, RunInput};
use crate::audit::AuditDraft;
use crate::ids::{sha256_hex, OperationId};
use crate::ports::{BlobStore, Change, ObjectRef, Ocr, OcrPoll, RunStatus, Store};
use crate::Error;

/// The started job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OcrStarted {
    /// The provider's job id.
    pub job_id: String,
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
}

/// The OCR operation of a run.
pub fn operation(input: &RunInput) -> OperationId {
    OperationId::new(&input.run_id, "ocr", None)
}

/// Starts (or finds, on a retry) the job. The token makes the provider return the same job for
/// the same operation, so a retry after a lost response never starts a second job.
pub async fn start<O: Ocr, S: Store>(
    ocr: &O,
    store: &S,
    ctx: &Context,
    input: &RunInput,
) -> Result<OcrStarted, Error> {
    let op = operation(input);
    let job_id = ocr.start(&op, &input.raw, input.run_id.as_str()).await?;
    let draft = AuditDraft::new(&ctx.actor, "ocr.started", Some(&input.run_id))
        .operation(&op)
        .input("raw", &input.sha256)
        .detail(json!({"jobId": job_id}));
    let _ = record(store, ctx, &input.document_id, vec![], draft).await?;
    Ok(OcrStarted { job_id })
}

/// Polls the job once. On success writes the normalized OCR; on failure records the run as
/// failed and returns `Business.OcrFailed`.
pub async fn poll<O: Ocr, B: BlobStore, S: Store>(
    ocr: &O,
    blobs: &B,
    store: &S,
    ctx: &Context,
    input: &RunInput,
    job_id: &str,
) -> Result<OcrPolled, Error> {
    let op = operation(input);
    match ocr.poll(job_id).await? {
        OcrPoll::InProgress => Ok(OcrPolled {
            status: "IN_PROGRESS".into(),
            normalized: None,
        }),
        OcrPoll::Succeeded(document) => {
            let target = ctx
                .layout
                .ocr(&input.tenant, &input.document_id, &input.run_id);
            let bytes = to_json_bytes(&document);
            let hash = sha256_hex(&bytes);
            let lines = document.lines().count();
            blobs.put(&target, bytes, "application/json").await?;
            let draft = AuditDraft::new(&ctx.actor, "ocr.completed", Some(&input.run_id))
                .operation(&op)
                .input("raw", &input.sha256)
                .output("ocr", &target.to_string())
                .detail(json!({
                    "jobId": job_id,
                    "engine": document.engine,
                    "pages": document.pages.len(),
                    "lines": lines,
                    "sha256": hash,
                }));
            let _ = record(store, ctx, &input.document_id, vec![], draft).await?;
            Ok(OcrPolled {
                status: "SUCCEEDED".into(),
                normalized: Some(target),
            })
        }
        OcrPoll::Failed(message) => {
            let error = Error::OcrFailed(message);
            let change = Change::SetRunStatus {
                run_id: input.run_id.clone(),
                from: RunStatus::Started,
                to: RunStatus::Failed,
                outputs: Default::default(),
                error: Some(error.name().into()),
            };
            let draft = AuditDraft::new(&ctx.actor, "ocr.failed", Some(&input.run_id))
                .operation(&op)
                .detail(
                    json!({"jobId": job_id, "error": error.name(), "reason": error.to_string()}),
                );
            // Refused: the run was already moved by an earlier attempt of this poll.
            let _ = record(store, ctx, &input.document_id, vec![change], draft).await?;
            Err(error)
        }
    }
}
