//! Validate: extraction and validation rules over the normalized OCR, and over the e-invoice the
//! upload carries attached when it is a PDF with one (`einvoice`, read from the raw upload by
//! its version, an image only as far as its type; a value of it counts where the page confirms
//! it, `extract::with_embedded`); the report goes to the derived bucket. An invalid document
//! ends its run as `invalid` with the business error `Business.DocumentInvalid`; one that needs
//! a person waits as `awaiting_review`.
//!
//! The Validate Task waits with a token ([`validate_and_wait`]): validate ends the wait at once
//! for a document it approves, and hands the token to the review task of one that needs a
//! person, so that the reviewer's decision ends it (`steps::review`). Both go on to one route
//! Task, which saves the state machine a Choice (a state transition for every document).

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::review::{self, Approved, OpenRequest};
use super::{record, to_json_bytes, Context};
use crate::audit::AuditDraft;
use crate::doctype::{sniff, PDF, SNIFF_BYTES};
use crate::einvoice::{self, Embedded};
use crate::error::ErrorKind;
use crate::extract::with_embedded;
use crate::ids::sha256_hex;
use crate::model::run::{ObjectRef, RunInput, TaskToken};
use crate::model::step::Step;
use crate::ocr::OcrDocument;
use crate::ports::{
    BlobStore, Change, HasBlobs, HasCallback, HasReviews, HasStore, RunStatus, TaskCallback,
};
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

/// The Validate Task's wait: its token, and how long it waits (a reviewer's time).
#[derive(Debug, Clone)]
pub struct Wait {
    /// The waiting Task attempt's token.
    pub token: TaskToken,
    /// The Task's `TimeoutSeconds`: a review task's deadline.
    pub timeout_seconds: i64,
}

/// Validates the run's normalized OCR ([`run`]), then ends the Validate Task's wait with
/// [`Approved`] for a document it approves, or opens the review task of one that needs a person
/// with the token (`steps::review::open`), whose decision ends the wait. Safe to run twice: the
/// report and its audit entry are written once, the review task is found again (a retry only
/// stores the new token), and a second `SendTaskSuccess` for a wait that already ended is
/// refused by Step Functions (`Conflict.ReviewExpired`) while the Task has long moved on.
pub async fn validate_and_wait(
    ports: &(impl HasBlobs + HasStore + HasReviews + HasCallback),
    ctx: &Context,
    input: &RunInput,
    normalized: &ObjectRef,
    wait: Wait,
) -> Result<Validated, Error> {
    let validated = run(ports, ctx, input, normalized).await?;
    if validated.decision == NEEDS_REVIEW {
        let open = OpenRequest {
            report: validated.report.clone(),
            ocr: normalized.clone(),
            token: wait.token,
            timeout_seconds: wait.timeout_seconds,
        };
        review::open(ports, ctx, input, open).await?;
    } else {
        let approved = Approved {
            report: validated.report.clone(),
            review: None,
        };
        let output = serde_json::to_value(approved).expect("an approval serializes");
        ports.callback().succeed(&wait.token, &output).await?;
    }
    Ok(validated)
}

/// The e-invoice the raw upload carries: a PDF is read whole for it, an image is not read past
/// the bytes that tell its type.
async fn embedded_invoice(ports: &impl HasBlobs, raw: &ObjectRef) -> Result<Embedded, Error> {
    let head = ports.blobs().get_prefix(raw, SNIFF_BYTES).await?;
    if sniff(&head) != Some(PDF) {
        return Ok(Embedded::Absent);
    }
    Ok(einvoice::from_document(&ports.blobs().get(raw).await?))
}

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
    let embedded = embedded_invoice(ports, &input.raw).await?;
    // The audit entry names the attachment read (its syntax, its hash as an input), or why an
    // XML attachment was not read; nothing for a document without one.
    let (invoice, embedded_detail) = match &embedded {
        Embedded::Absent => (None, None),
        Embedded::Read(invoice) => (Some(invoice), Some(json!(invoice.syntax))),
        Embedded::Unreadable(why) => (None, Some(json!({ "unreadable": why.to_string() }))),
    };
    let extraction = with_embedded(
        &document,
        &ctx.config.extraction,
        invoice,
        ctx.config.validation.min_confidence,
    );
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
    let mut draft = AuditDraft::new(&ctx.actor, "validation.completed", Some(&input.run_id))
        .operation(&op)
        .input("ocr", &ocr_hash);
    if let Some(invoice) = invoice {
        draft = draft.input("embedded", &invoice.sha256);
    }
    let mut detail = json!({
        "decision": decision,
        "reasons": codes,
        "configVersion": report.config_version,
        "sha256": report_hash,
    });
    if let Some(embedded) = embedded_detail {
        detail["embedded"] = embedded;
    }
    let draft = draft
        .output("validation", &target.to_string())
        .detail(detail);
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
