//! Reprocess, in two steps.
//!
//! [`begin`] is review-api's, for a verified operator (`POST /reprocesses`, `docket
//! reprocess`): it checks the request, that its config is published and its manifest written,
//! and starts the bulk state machine's execution named by the reprocess id, with the operator
//! as the requester. Only review-api starts that state machine (README "Reprocess"), so who
//! asked is what the function URL verified, never what a caller wrote.
//!
//! [`start`] is the reprocess function's, invoked by the bulk Map: a batch becomes one new run
//! per item, each recorded with a `document.reprocessed` audit entry (the reprocess id, the
//! reason, who asked, the generation and the run it follows) and started like an upload's run
//! (`ingest::begin_run`). A batch run again (a Map retry, the same reprocess started twice)
//! starts nothing twice: the run ids are fixed by the manifest. A batch stops starting before
//! its function's deadline and asks for a retry, which starts the rest.
//!
//! [`pace`] holds the batch's child execution until its runs stopped working (each one's
//! execution ended, or it waits for a reviewer), so the Map's `MaxConcurrency` bounds the runs
//! at work, not only the rate they start at: at most `ReprocessConcurrency` × batch size
//! executions work at once (OCR, validation, routing, the consumer's receipt, a compensation),
//! however long the manifest.

use serde::{Deserialize, Serialize};
use serde_json::json;
use time::{Duration, OffsetDateTime};

use super::config::{configured, known};
use super::ingest::begin_run;
use super::Context;
use crate::audit::AuditDraft;
use crate::error::Family;
use crate::ids::{parse_inbox_key, DocumentId, ReprocessId, RunId};
use crate::model::run::ObjectRef;
use crate::model::step::Step;
use crate::ports::{
    BlobStore, HasBlobs, HasBulk, HasConfigs, HasStore, HasWorkflow, RunStatus, Started, Store,
    Workflow,
};
use crate::reprocess::{manifest_key, Batch, Item, Order, Requester, Start};
use crate::review::identity::Operator;
use crate::Error;

/// A reprocess review-api started (or found started).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Begun {
    /// The reprocess (the bulk execution's name).
    pub reprocess_id: ReprocessId,
    /// Whether this call started the bulk execution (the same request again finds it).
    pub execution: Started,
    /// Who asked.
    pub requested_by: Requester,
}

/// Starts the bulk execution of `asked` for `operator`. The request and limits must be valid
/// ([`Start::check`]), its config published and its manifest written (`docket reprocess`
/// writes it first, at [`manifest_key`] of the request's id): each missing one is
/// `Fatal.BadInput` naming it, and nothing starts. The same request again starts nothing and
/// answers `AlreadyExists` (the execution's name is the reprocess id).
pub async fn begin(
    ports: &(impl HasBlobs + HasConfigs + HasBulk),
    ctx: &Context,
    operator: &Operator,
    asked: &Start,
) -> Result<Begun, Error> {
    asked.check()?;
    let request = &asked.request;
    let fingerprint = &request.config_fingerprint;
    if !known(ports, ctx, fingerprint).await? {
        return Err(Error::BadInput(format!(
            "no config {fingerprint} is published (docket config publish FILE)"
        )));
    }
    let id = request.id();
    let manifest = ObjectRef::new(&ctx.layout.derived_bucket, manifest_key(&id));
    if ports.blobs().head(&manifest).await?.is_none() {
        return Err(Error::BadInput(format!(
            "reprocess {id} has no manifest at {manifest} (docket reprocess writes it)"
        )));
    }
    let order = Order {
        reprocess_id: id.clone(),
        reason: request.reason.clone(),
        requested_by: Requester {
            operator: operator.id.clone(),
            principal: operator.principal.clone(),
        },
        config_fingerprint: fingerprint.clone(),
    };
    let mut input = serde_json::to_value(&order).expect("orders serialize");
    input["manifest"] = json!({"bucket": manifest.bucket, "key": manifest.key});
    input["batchSize"] = json!(asked.batch_size);
    input["toleratedFailurePercentage"] = json!(asked.tolerated_failure_percentage);
    let execution = ports.bulk().start(id.as_str(), &input).await?;
    Ok(Begun {
        reprocess_id: id,
        execution,
        requested_by: order.requested_by,
    })
}

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

/// Starts the runs of `batch`, in order, until `stop_by` (the function's deadline less a margin).
/// The batch's config must be published (the new runs' steps read it by fingerprint): an
/// unpublished one is `Fatal.Internal` before anything starts. Every item is tried; if any
/// failed, the batch fails naming each failed document (the Map counts a failed batch's items
/// as failed), after the others were started. Items left at `stop_by` are `Transient.InProgress`:
/// the Map's retry of the batch finds the started ones started and starts the rest.
pub async fn start(
    ports: &(impl HasStore + HasWorkflow + HasConfigs),
    ctx: &Context,
    batch: &Batch,
    stop_by: OffsetDateTime,
) -> Result<Vec<Restarted>, Error> {
    let order = &batch.order;
    configured(ports, ctx, &order.config_fingerprint).await?;
    let mut started = Vec::with_capacity(batch.items.len());
    let mut failed = Vec::new();
    for item in &batch.items {
        if ctx.clock.now() >= stop_by {
            return Err(Error::InProgress(format!(
                "{} of {} items tried before the function's deadline; a retry starts the rest",
                started.len() + failed.len(),
                batch.items.len()
            )));
        }
        match start_one(ports, ctx, order, item).await {
            Ok(run) => started.push(run),
            Err(e) => failed.push((item.document_id.clone(), e)),
        }
    }
    match failed.first() {
        None => Ok(started),
        Some((_, first)) => Err(batch_failure(batch.items.len(), &failed, first)),
    }
}

/// How long a batch's child execution waits for its runs to stop working ([`pace`]) before it
/// ends anyway. A run works past this only if it is stuck (its own steps' timeouts end a
/// working execution long before), and a stuck run must not hold a slot of the Map for ever.
pub const PACING_LIMIT: Duration = Duration::hours(1);

/// Whether a batch's runs still work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pace {
    /// Runs of the batch still at work ([`pace`]).
    pub working: usize,
    /// Whether the batch's child execution may end: none works, or it waited [`PACING_LIMIT`]
    /// since `since`.
    pub done: bool,
}

/// How many of `runs` (a batch's, started at `since`) still work. A run works while its
/// execution runs, except while it waits for a reviewer (that can take days, and asks nothing
/// of the OCR provider). A `started` run works without asking the workflow (one read per run
/// while most of the batch runs its steps); a run past its steps (`completed`, `compensated`,
/// ...) may still wait for the consumer's receipt or compensate, so the workflow is asked
/// whether its execution ended. A run with no record was never started.
pub async fn pace(
    ports: &(impl HasStore + HasWorkflow),
    ctx: &Context,
    runs: &[RunId],
    since: OffsetDateTime,
) -> Result<Pace, Error> {
    let mut working = 0;
    for run in runs {
        let at_work = match ports.store().run(run).await?.map(|r| r.status) {
            None | Some(RunStatus::AwaitingReview) => false,
            Some(RunStatus::Started) => true,
            Some(_) => ports.workflow().running(run.as_str()).await?,
        };
        working += usize::from(at_work);
    }
    let done = working == 0 || ctx.clock.now() - since >= PACING_LIMIT;
    Ok(Pace { working, done })
}

/// The batch's error when some items failed (the others were started): a transient failure's
/// name if any (a retry of the batch starts nothing twice and may start the rest), else the
/// first failure's, with every failed document and its reason.
fn batch_failure(items: usize, failed: &[(DocumentId, Error)], first: &Error) -> Error {
    let kind = failed
        .iter()
        .map(|(_, e)| e.kind())
        .find(|k| k.family() == Family::Transient)
        .unwrap_or_else(|| first.kind());
    let which: Vec<String> = failed.iter().map(|(d, e)| format!("{d}: {e}")).collect();
    kind.with_detail(format!(
        "{} of {items} items failed ({})",
        failed.len(),
        which.join("; ")
    ))
}

/// Checks one item and starts its run. The item must be a later generation of a document whose
/// id its own inbox key derives (a line that names one tenant's document with another's key is
/// refused: the manifest cannot move a document between tenants).
async fn start_one(
    ports: &(impl HasStore + HasWorkflow),
    ctx: &Context,
    order: &Order,
    item: &Item,
) -> Result<Restarted, Error> {
    let fingerprint = &order.config_fingerprint;
    if item.generation == 0 {
        return Err(Error::BadInput(
            "a reprocess runs generation 1 or later".into(),
        ));
    }
    let inbox = parse_inbox_key(&item.raw.key)?;
    let document = DocumentId::new(&inbox.tenant, &inbox.logical_key);
    if inbox.tenant != item.tenant || document != item.document_id {
        return Err(Error::BadInput(format!(
            "the item names tenant {} and document {}, its key {document} of tenant {}",
            item.tenant, item.document_id, inbox.tenant
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
            "requestedBy": order.requested_by,
            "generation": item.generation,
            "previousRunId": item.from_run_id,
            "configFingerprint": fingerprint,
            "sourceOrder": input.source_order,
        }));
    let execution = begin_run(ports, ctx, &input, item.generation, draft).await?;
    Ok(Restarted {
        document_id: item.document_id.clone(),
        run_id: input.run_id,
        generation: item.generation,
        execution,
    })
}
