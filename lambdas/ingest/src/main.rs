//! ingest: the EventBridge S3 "Object Created" event of an inbox upload → run record and
//! execution (or a quarantine copy with the reason). See `docket_core::steps::ingest`.

// The handler's future (runtime → traced span → step → SDK calls) is deep enough that computing
// its layout in a release build exceeds rustc's default query depth of 128.
#![recursion_limit = "256"]

use docket_aws::sfn::SfnWorkflow;
use docket_core::steps::ingest::{self, ObjectCreated};
use docket_lambda::{answer, init_tracing, parse, span, traced, Deps, Failure};
use lambda_runtime::{service_fn, LambdaEvent};
use serde::Deserialize;
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    let workflow = SfnWorkflow::with_faults(
        &deps.sdk,
        docket_aws::env("STATE_MACHINE_ARN")?,
        &deps.faults,
    );
    let (deps, workflow) = (&deps, &workflow);
    lambda_runtime::run(service_fn(move |ev| handler(deps, workflow, ev))).await
}

/// The parts of the EventBridge event ingest reads.
#[derive(Deserialize)]
struct S3Event {
    time: Option<String>,
    detail: Detail,
}

#[derive(Deserialize)]
struct Detail {
    bucket: Bucket,
    object: Object,
}

#[derive(Deserialize)]
struct Bucket {
    name: String,
}

#[derive(Deserialize)]
struct Object {
    key: String,
    #[serde(rename = "version-id")]
    version_id: Option<String>,
    sequencer: Option<String>,
}

async fn handler(
    deps: &Deps,
    workflow: &SfnWorkflow,
    ev: LambdaEvent<Value>,
) -> Result<Value, Failure> {
    let event: S3Event = parse(ev.payload)?;
    let created = ObjectCreated {
        bucket: event.detail.bucket.name,
        key: event.detail.object.key,
        version_id: event.detail.object.version_id,
        sequencer: event.detail.object.sequencer,
        time: event.time,
    };
    let outcome = traced(span("ingest", None, None), async {
        let outcome =
            ingest::handle(&deps.blobs, &deps.store, workflow, &deps.ctx, &created).await?;
        tracing::info!(outcome = ?outcome, "ingested");
        Ok(outcome)
    })
    .await?;
    answer(&outcome)
}
