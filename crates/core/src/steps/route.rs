//! Route: write the run's `result.json`, complete the run and make it the document's current
//! result, atomically and only if no newer source version was accepted meanwhile (then the run
//! completes as `stale`: kept for audit, never promoted). An auto-approved run routes its
//! extracted fields; a reviewed one the fields its reviewer approved (with corrections).
//!
//! The completion is the first effect of route's saga ([`super::saga`]): the same transaction
//! confirms `result.promoted` in the run's journal and persists the `document.accepted` outbox
//! record; route then publishes that event ([`saga::announce`]), also when a retry finds the
//! run completed by an earlier attempt that stopped before publishing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::review::Reviewed;
use super::{record, saga, to_json_bytes, Context};
use crate::audit::AuditDraft;
use crate::error::ErrorKind;
use crate::ids::sha256_hex;
use crate::model::run::{ObjectRef, RunInput};
use crate::model::step::Step;
use crate::ports::{
    BlobStore, Change, HasBlobs, HasEvents, HasJournal, HasOutbox, HasStore, Refused, RunStatus,
    Store,
};
use crate::validate::{Decision, ValidationReport};
use crate::Error;

/// How the run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Routed {
    /// `completed` (now the document's current result) or `stale`.
    pub status: String,
    /// The result in the derived bucket.
    pub result: ObjectRef,
}

/// Routes an approved run: auto-approved (`review` is `None`), or approved by a reviewer.
pub async fn run(
    ports: &(impl HasBlobs + HasStore + HasJournal + HasOutbox + HasEvents),
    ctx: &Context,
    input: &RunInput,
    report: &ObjectRef,
    review: Option<&Reviewed>,
) -> Result<Routed, Error> {
    let op = Step::Route.operation(&input.run_id);
    let bytes = ports.blobs().get(report).await?;
    let report_hash = sha256_hex(&bytes);
    let report: ValidationReport = serde_json::from_slice(&bytes)
        .map_err(|e| Error::BadInput(format!("validation report unreadable: {e}")))?;
    let (decision, from, fields): (&str, RunStatus, BTreeMap<String, Value>) =
        match (&report.decision, review) {
            (Decision::AutoApprove, None) => {
                let fields = report
                    .extraction
                    .fields
                    .iter()
                    .map(|(name, field)| {
                        (
                            field_name(name),
                            json!({"value": field.value, "confidence": field.confidence}),
                        )
                    })
                    .collect();
                ("auto_approve", RunStatus::Started, fields)
            }
            (Decision::NeedsReview { .. }, Some(reviewed)) => {
                let fields = reviewed
                    .fields
                    .iter()
                    .map(|(name, field)| {
                        (
                            field_name(name),
                            json!({"value": field.value, "confidence": field.confidence,
                                   "source": field.source}),
                        )
                    })
                    .collect();
                ("approved_by_reviewer", RunStatus::AwaitingReview, fields)
            }
            (decision, review) => {
                return Err(Error::BadInput(format!(
                    "route called for a run that is not approved: {decision:?}, reviewed: {}",
                    review.is_some()
                )))
            }
        };
    let result = json!({
        "documentId": input.document_id,
        "runId": input.run_id,
        "tenant": input.tenant,
        "source": {"bucket": input.raw.bucket, "key": input.raw.key,
                   "versionId": input.raw.version_id, "sha256": input.sha256},
        "decision": decision,
        "reviewer": review.map(|r| &r.reviewer),
        "reviewTask": review.map(|r| &r.task_id),
        "fields": fields,
        "configVersion": report.config_version,
        "configFingerprint": input.config_fingerprint,
    });
    let target = ctx
        .layout
        .result(&input.tenant, &input.document_id, &input.run_id);
    let result_bytes = to_json_bytes(&result);
    let result_hash = sha256_hex(&result_bytes);
    let promotion = saga::promotion(ports, input, &target, &result_bytes).await?;
    ports
        .blobs()
        .put(&target, result_bytes, "application/json")
        .await?;
    let store = ports.store();

    let finish = |to: RunStatus| Change::SetRunStatus {
        run_id: input.run_id.clone(),
        from,
        to,
        outputs: [("result".to_string(), target.to_string())].into(),
        error: None,
    };
    let draft = |action: &str, promoted: Option<&Value>| {
        let mut detail = json!({"sha256": result_hash, "sourceOrder": input.source_order});
        if let Some(promoted) = promoted {
            detail["promoted"] = promoted.clone();
        }
        AuditDraft::new(&ctx.actor, action, Some(&input.run_id))
            .operation(&op)
            .input("validation", &report_hash)
            .output("result", &target.to_string())
            .detail(detail)
    };
    let Some(promotion) = promotion else {
        // The journal shows the promotion: an earlier attempt committed the completion.
        let status = finished_status(store, input).await?;
        return announced(ports, ctx, input, status, target).await;
    };
    // [finish, promote, journal, outbox]: the promotion is at index 1.
    let mut completed = vec![finish(RunStatus::Completed)];
    completed.extend(promotion.changes);
    let completion = draft("run.completed", Some(&promotion.detail));
    let status = match record(store, ctx, &input.document_id, completed, completion).await? {
        Ok(_) => RunStatus::Completed,
        Err(Refused { index: 1 }) => {
            // A newer version is current: this run is kept, never promoted.
            match record(
                store,
                ctx,
                &input.document_id,
                vec![finish(RunStatus::Stale)],
                draft("run.stale", None),
            )
            .await?
            {
                Ok(_) => RunStatus::Stale,
                Err(_) => finished_status(store, input).await?,
            }
        }
        Err(_) => finished_status(store, input).await?,
    };
    announced(ports, ctx, input, status, target).await
}

/// The routed run, after publishing its `document.accepted` event if it completed.
async fn announced(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents),
    ctx: &Context,
    input: &RunInput,
    status: RunStatus,
    result: ObjectRef,
) -> Result<Routed, Error> {
    if status == RunStatus::Completed {
        saga::announce(ports, ctx, &input.run_id).await?;
    }
    Ok(Routed {
        status: status.as_str().into(),
        result,
    })
}

fn field_name(name: &crate::model::fields::FieldName) -> String {
    let name = serde_json::to_value(name).expect("field names serialize");
    name.as_str().unwrap_or_default().to_string()
}

/// The run was already moved by an earlier attempt of this step: report what it recorded.
async fn finished_status<S: Store>(store: &S, input: &RunInput) -> Result<RunStatus, Error> {
    let run = store
        .run(&input.run_id)
        .await?
        .ok_or_else(|| Error::Internal(format!("run {} has no record", input.run_id)))?;
    match run.status {
        RunStatus::Completed | RunStatus::Stale => Ok(run.status),
        other => Err(Error::Internal(format!(
            "run {} is {} and cannot be routed",
            input.run_id,
            other.as_str()
        ))),
    }
}

/// Records that a reviewer rejected the run: `awaiting_review` → `rejected` (a business outcome,
/// no result). Safe to repeat.
pub async fn reject(ports: &impl HasStore, ctx: &Context, input: &RunInput) -> Result<(), Error> {
    let op = Step::Reject.operation(&input.run_id);
    let change = Change::SetRunStatus {
        run_id: input.run_id.clone(),
        from: RunStatus::AwaitingReview,
        to: RunStatus::Rejected,
        outputs: BTreeMap::new(),
        error: Some(ErrorKind::ReviewRejected.name().into()),
    };
    let draft = AuditDraft::new(&ctx.actor, "run.rejected", Some(&input.run_id)).operation(&op);
    // Refused: the run already left `awaiting_review`.
    let _ = record(ports.store(), ctx, &input.document_id, vec![change], draft).await?;
    Ok(())
}
