//! Validate: extraction and validation rules over the normalized OCR; the report goes to the
//! derived bucket. An invalid document ends its run as `invalid` with the business error
//! `Business.DocumentInvalid`; one that needs a person waits as `awaiting_review`.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{record, to_json_bytes, Context};
use crate::audit::AuditDraft;
use crate::error::ErrorKind;
use crate::extract::extract;
use crate::ids::sha256_hex;
use crate::model::run::{ObjectRef, RunInput};
use crate::model::step::Step;
use crate::ocr::OcrDocument;
use crate::ports::{BlobStore, Change, HasBlobs, HasStore, RunStatus};
use crate::validate::{validate, Decision};
use crate::Error;

/// What validation decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Validated {
    /// `auto_approve` or `needs_review`.
    pub decision: String,
    /// The report in the derived bucket.
    pub report: ObjectRef,
    /// Reason codes (`low_confidence`, ...), for a review.
    pub reasons: Vec<String>,
}

/// The decision that asks a person (`Validated::decision`).
pub const NEEDS_REVIEW: &str = "needs_review";

/// Validates the run's normalized OCR.
pub async fn run(
    ports: &(impl HasBlobs + HasStore),
    ctx: &Context,
    input: &RunInput,
    normalized: &ObjectRef,
) -> Result<Validated, Error> {
    let op = Step::Validate.operation(&input.run_id);
    let bytes = ports.blobs().get(normalized).await?;
    let ocr_hash = sha256_hex(&bytes);
    let document: OcrDocument = serde_json::from_slice(&bytes)
        .map_err(|e| Error::BadInput(format!("normalized OCR unreadable: {e}")))?;
    let extraction = extract(&document, &ctx.config.extraction);
    let today = ctx.clock.now().date();
    let report = validate(&extraction, &ctx.config.validation, today);

    let target = ctx
        .layout
        .validation(&input.tenant, &input.document_id, &input.run_id);
    let report_bytes = to_json_bytes(&report);
    let report_hash = sha256_hex(&report_bytes);
    ports
        .blobs()
        .put(&target, report_bytes, "application/json")
        .await?;

    let (decision, reasons) = match &report.decision {
        Decision::AutoApprove => ("auto_approve", vec![]),
        Decision::NeedsReview { reasons } => (NEEDS_REVIEW, reasons.clone()),
        Decision::Invalid { reasons } => ("invalid", reasons.clone()),
    };
    let codes: Vec<String> = reasons.iter().map(|r| r.code.clone()).collect();
    let next_status = match decision {
        "invalid" => Some(RunStatus::Invalid),
        NEEDS_REVIEW => Some(RunStatus::AwaitingReview),
        _ => None,
    };
    let changes = next_status
        .map(|to| Change::SetRunStatus {
            run_id: input.run_id.clone(),
            from: RunStatus::Started,
            to,
            outputs: [("validation".to_string(), target.to_string())].into(),
            error: (to == RunStatus::Invalid)
                .then(|| ErrorKind::DocumentInvalid.name().to_string()),
        })
        .into_iter()
        .collect();
    let draft = AuditDraft::new(&ctx.actor, "validation.completed", Some(&input.run_id))
        .operation(&op)
        .input("ocr", &ocr_hash)
        .output("validation", &target.to_string())
        .detail(json!({
            "decision": decision,
            "reasons": codes,
            "configVersion": report.config_version,
            "sha256": report_hash,
        }));
    // Refused: an earlier attempt of this step already moved the run.
    let _ = record(ports.store(), ctx, &input.document_id, changes, draft).await?;

    if decision == "invalid" {
        return Err(Error::DocumentInvalid(codes.join(",")));
    }
    Ok(Validated {
        decision: decision.into(),
        report: target,
        reasons: codes,
    })
}
