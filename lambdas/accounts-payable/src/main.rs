//! accounts-payable: the reference downstream consumer (SQS batches, a compensation's requests).
//! See `docket_lambda::handlers::accounts_payable`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::handlers::accounts_payable::{handle, Deps};
use docket_lambda::{init_tracing, serve};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    serve(|event| handle(&deps, event)).await
}
