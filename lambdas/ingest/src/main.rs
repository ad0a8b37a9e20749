//! ingest: inbox uploads' EventBridge "Object Created" events, in batches from its SQS queue →
//! run records and executions. See `docket_lambda::handlers::ingest`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::handlers::ingest::{handle, Deps};
use docket_lambda::{init_tracing, serve};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    serve(|payload| handle(&deps, &deps.extra.queue, &deps.ctx, payload)).await
}
