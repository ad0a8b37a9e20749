//! ocr: starts a run's Textract job and waits for its end by callback (polls it after the wait's
//! deadline).
//! See `docket_lambda::handlers::ocr`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::handlers::ocr::{handle, Deps};
use docket_lambda::{init_tracing, serve};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    serve(|request| handle(&deps, &deps.ctx, request)).await
}
