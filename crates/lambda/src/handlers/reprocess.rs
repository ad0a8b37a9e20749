//! reprocess: one batch of the bulk reprocess Map (`statemachines/bulk-reprocess.asl.json`) →
//! one new run per item, audited and started. Only the bulk state machine invokes it. See
//! `docket_core::steps::reprocess`.

use docket_aws::sfn::SfnWorkflow;
use docket_core::ids::RunId;
use docket_core::model::step::Step;
use docket_core::ports::{HasConfigs, HasStore, HasWorkflow};
use docket_core::reprocess::Batch;
use docket_core::steps::{reprocess, Context};
use serde::Deserialize;
use serde_json::{json, Value};
use time::{Duration, OffsetDateTime};

use crate::{answer, span, traced, Failure};

/// What reprocess runs on: it starts executions of the pipeline's alias.
pub type Deps = crate::Deps<SfnWorkflow>;

/// How long before the function's deadline a batch stops starting runs: more than one item's
/// start takes (a few requests; seconds on a loaded local stack).
pub const DEADLINE_MARGIN: Duration = Duration::seconds(20);

/// What the bulk state machine's Map sends (`StartRuns`, `CheckRuns`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Request {
    /// Start the runs of one batch.
    Start {
        /// The batch, as the Map's `ItemBatcher` writes it.
        batch: Batch,
    },
    /// Whether a batch's runs still work (`reprocess::pace`).
    Check {
        /// The batch's runs, as `Start` answered them.
        #[serde(rename = "runIds")]
        run_ids: Vec<RunId>,
        /// When `Start` answered.
        #[serde(with = "time::serde::rfc3339")]
        since: OffsetDateTime,
    },
}

/// Answers one request of the Map; `deadline` is the invocation's. A batch has no single run:
/// its span names the reprocess, and each started run is logged in a span of its own ids. Its
/// first and last lines carry the function's clock (`at`; the log lines have no time of their
/// own) and the batch's first run (`batch`): `make bench` finds the batches in flight from
/// their first "batch started" to the "batch checked" that found them `done`.
pub async fn handle(
    ports: &(impl HasStore + HasWorkflow + HasConfigs),
    ctx: &Context,
    request: Request,
    deadline: OffsetDateTime,
) -> Result<Value, Failure> {
    match request {
        Request::Start { batch } => start(ports, ctx, &batch, deadline - DEADLINE_MARGIN).await,
        Request::Check { run_ids, since } => {
            let batch = run_ids.first().map(RunId::as_str).unwrap_or_default();
            let paced = traced(span("reprocess.check", "", "", "-"), async {
                let pace = reprocess::pace(ports, ctx, &run_ids, since).await?;
                let (working, done, at) = (pace.working, pace.done, ctx.clock.now_rfc3339());
                tracing::info!(batch, working, done, at = %at, "batch checked");
                Ok(pace)
            });
            answer(&paced.await?)
        }
    }
}

/// Starts one batch's runs until `stop_by`.
async fn start(
    ports: &(impl HasStore + HasWorkflow + HasConfigs),
    ctx: &Context,
    batch: &Batch,
    stop_by: OffsetDateTime,
) -> Result<Value, Failure> {
    let id = batch.order.reprocess_id.to_string();
    let items = batch.items.len();
    let first = batch
        .items
        .first()
        .map(|i| i.run_id(&batch.order.config_fingerprint));
    let first = first.as_ref().map(RunId::as_str).unwrap_or_default();
    let started = traced(span("reprocess.start", "", "", &id), async {
        let at = ctx.clock.now_rfc3339();
        tracing::info!(batch = first, items, at = %at, "batch started");
        let started = reprocess::start(ports, ctx, batch, stop_by).await;
        let at = ctx.clock.now_rfc3339();
        tracing::info!(batch = first, items, ok = started.is_ok(), at = %at, "batch ended");
        started
    })
    .await?;
    for run in &started {
        let op = Step::Reprocess.operation(&run.run_id);
        let ids = (run.document_id.as_str(), run.run_id.as_str(), op.as_str());
        span("reprocess.start", ids.0, ids.1, ids.2).in_scope(|| {
            tracing::info!(generation = run.generation, execution = ?run.execution, "run started");
        });
    }
    let run_ids: Vec<&RunId> = started.iter().map(|r| &r.run_id).collect();
    answer(&json!({
        "started": started.len(),
        "runs": started,
        "runIds": run_ids,
        "at": ctx.clock.now_rfc3339(),
    }))
}
