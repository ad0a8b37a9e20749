//! review-callback: escalates review tasks for the state machine (only its role may
//! invoke this function). See `docket_lambda::handlers::review`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::handlers::review::{handle, Deps};
use docket_lambda::{init_tracing, serve};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    serve(|payload| handle(&deps, &deps.ctx, payload)).await
}
