//! validate: extraction and validation of a run's normalized OCR.
//! See `docket_lambda::handlers::validate`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::handlers::validate::{handle, Deps};
use docket_lambda::{init_tracing, serve};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    serve(|request| handle(&deps, &deps.ctx, request)).await
}
