//! review-api: the API people call, behind the function URL (reviewers and operators only, only
//! through the URL). See `docket_lambda::review_api`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::deps::ReviewApi;
use docket_lambda::review_api::{handle, Callers};
use docket_lambda::{init_tracing, serve};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = docket_lambda::Deps::<ReviewApi>::from_env().await?;
    let callers = Callers::from_env()?;
    serve(|payload| handle(&deps, &deps.ctx, &callers, payload)).await
}
