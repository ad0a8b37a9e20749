//! reprocess: one batch of the bulk reprocess Map (`statemachines/bulk-reprocess.asl.json`) →
//! one new run per item, audited and started. Only the bulk state machine invokes it. See
//! `docket_core::steps::reprocess`.

use docket_aws::sfn::SfnWorkflow;
use docket_core::model::step::Step;
use docket_core::ports::{HasConfigs, HasStore, HasWorkflow};
use docket_core::reprocess::Batch;
use docket_core::steps::{reprocess, Context};
use serde::Deserialize;
use serde_json::Value;

use crate::{answer, span, traced, Failure};

/// What reprocess runs on: it starts executions of the pipeline's alias.
pub type Deps = crate::Deps<SfnWorkflow>;

/// What the bulk state machine's Map sends (`StartRuns`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Request {
    /// Start the runs of one batch.
    Start {
        /// The batch, as the Map's `ItemBatcher` writes it.
        batch: Batch,
    },
}

/// Starts one batch's runs. The batch has no single run: its span names the reprocess, and
/// each started run is logged in a span of its own ids.
pub async fn handle(
    ports: &(impl HasStore + HasWorkflow + HasConfigs),
    ctx: &Context,
    Request::Start { batch }: Request,
) -> Result<Value, Failure> {
    let id = batch.order.reprocess_id.to_string();
    let items = batch.items.len();
    let started = traced(span("reprocess.start", "", "", &id), async {
        // A batch's first and last lines, with the function's clock (the log lines have no time
        // of their own): `make bench` finds the batches in flight from them.
        tracing::info!(items, at = %ctx.clock.now_rfc3339(), "batch started");
        let started = reprocess::start(ports, ctx, &batch).await;
        let at = ctx.clock.now_rfc3339();
        tracing::info!(items, ok = started.is_ok(), at = %at, "batch ended");
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
    answer(&serde_json::json!({ "started": started.len(), "runs": started }))
}
