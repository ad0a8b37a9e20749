//! audit-digest: signs every audit chain's head into a locked digest (scheduled, or on demand).
//! See `docket_lambda::handlers::audit_digest`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::handlers::audit_digest::{handle, Deps};
use docket_lambda::{init_tracing, serve};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    serve(|event| handle(&deps, event)).await
}
