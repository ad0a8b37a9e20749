//! compensate: a run's saga undone in reverse order, from the state machine's Catch.
//! See `docket_lambda::handlers::compensate`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::handlers::compensate::{handle, Deps};
use docket_lambda::{init_tracing, serve};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    serve(|request| handle(&deps, &deps.ctx, request)).await
}
