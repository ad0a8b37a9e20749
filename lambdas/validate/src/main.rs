//! validate: extraction and validation of a run's normalized OCR; the report goes to the derived
//! bucket. See `docket_core::steps::validate`.

// The handler's future (runtime → traced span → step → SDK calls) is deep enough that computing
// its layout in a release build exceeds rustc's default query depth of 128.
#![recursion_limit = "256"]

use docket_core::ids::OperationId;
use docket_core::ports::ObjectRef;
use docket_core::steps::{validate, RunInput};
use docket_lambda::{answer, init_tracing, parse, span, traced, Deps, Failure};
use lambda_runtime::{service_fn, LambdaEvent};
use serde::Deserialize;
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    let deps = &deps;
    lambda_runtime::run(service_fn(move |ev| handler(deps, ev))).await
}

#[derive(Deserialize)]
struct Request {
    run: RunInput,
    normalized: ObjectRef,
}

async fn handler(deps: &Deps, ev: LambdaEvent<Value>) -> Result<Value, Failure> {
    let Request { run, normalized } = parse(ev.payload)?;
    let op = OperationId::new(&run.run_id, "validate", None);
    let validated = traced(
        span("validate", Some(&run), Some(op.as_str())),
        validate::run(&deps.blobs, &deps.store, &deps.ctx, &run, &normalized),
    )
    .await?;
    answer(&validated)
}
