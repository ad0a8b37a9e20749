//! reprocess: one batch of the bulk reprocess Map → new runs of the next generation.
//! See `docket_lambda::handlers::reprocess`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::handlers::reprocess::{handle, Deps};
use docket_lambda::{init_tracing, serve_with_deadline};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    serve_with_deadline(|request, deadline| handle(&deps, &deps.ctx, request, deadline)).await
}
