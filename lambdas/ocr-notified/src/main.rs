//! ocr-notified: Textract's job-completion notifications (SNS; only the topic may invoke this
//! function) end the waits of the runs' OCR Tasks. See `docket_lambda::handlers::ocr_notified`.

#![recursion_limit = "256"] // for release builds: see docket_lambda's crate doc

use docket_lambda::handlers::ocr_notified::{handle, Deps};
use docket_lambda::{init_tracing, serve};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    serve(|event| handle(&deps, &deps.ctx, event)).await
}
