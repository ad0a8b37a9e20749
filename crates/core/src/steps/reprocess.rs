//! Reprocess: the reprocess function's step. A batch of the bulk Map becomes one new run per
//! item, each recorded with a `document.reprocessed` audit entry (the reprocess id, the reason,
//! who asked, the generation and the run it follows) and started like an upload's run
//! (`ingest::begin_run`). A batch run again (a Map retry, the same reprocess started twice)
//! starts nothing twice: the run ids are fixed by the manifest.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::config::published;
use super::ingest::begin_run;
use super::Context;
use crate::audit::AuditDraft;
use crate::ids::{DocumentId, RunId};
use crate::model::step::Step;
use crate::ports::{HasConfigs, HasStore, HasWorkflow, Started};
use crate::reprocess::Batch;
use crate::Error;

/// A run a batch started (or found started).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Restarted {
    /// The document.
    pub document_id: DocumentId,
    /// The new run.
    pub run_id: RunId,
    /// Its generation.
    pub generation: u32,
    /// Whether this call started its execution.
    pub execution: Started,
}

/// Starts the runs of `batch`, in order. The batch's config must be published (the new runs'
/// steps read it by fingerprint): an unpublished one is `Fatal.Internal` before anything starts.
pub async fn start(
    ports: &(impl HasStore + HasWorkflow + HasConfigs),
    ctx: &Context,
    batch: &Batch,
) -> Result<Vec<Restarted>, Error> {
    let order = &batch.order;
    let fingerprint = &order.config_fingerprint;
    if ctx.config.fingerprint() != *fingerprint {
        published(ports.configs(), fingerprint).await?;
    }
    let mut started = Vec::with_capacity(batch.items.len());
    for item in &batch.items {
        if item.generation == 0 {
            return Err(Error::BadInput(format!(
                "{}: a reprocess runs generation 1 or later",
                item.document_id
            )));
        }
        let input = item.run_input(fingerprint);
        let draft = AuditDraft::new(&ctx.actor, "document.reprocessed", Some(&input.run_id))
            .operation(&Step::Reprocess.operation(&input.run_id))
            .input("raw", &item.sha256)
            .output("raw", &item.raw.to_string())
            .detail(json!({
                "reprocessId": order.reprocess_id,
                "reason": order.reason,
                // A claim, not evidence: see `Order::requested_by`.
                "requestedByClaim": order.requested_by,
                "generation": item.generation,
                "previousRunId": item.from_run_id,
                "configFingerprint": fingerprint,
                "sourceOrder": input.source_order,
            }));
        let execution = begin_run(ports, ctx, &input, item.generation, draft).await?;
        started.push(Restarted {
            document_id: item.document_id.clone(),
            run_id: input.run_id,
            generation: item.generation,
            execution,
        });
    }
    Ok(started)
}
