//! ocr: starts the Textract job of a run (`action: start`) and polls it (`action: poll`), writing
//! the normalized OCR when it is done. See `docket_core::steps::ocr`.

// The handler's future (runtime → traced span → step → SDK calls) is deep enough that computing
// its layout in a release build exceeds rustc's default query depth of 128.
#![recursion_limit = "256"]

use docket_aws::textract::TextractOcr;
use docket_core::steps::ocr::{self, OcrStarted};
use docket_core::steps::RunInput;
use docket_lambda::{answer, init_tracing, parse, span, traced, Deps, Failure};
use lambda_runtime::{service_fn, LambdaEvent};
use serde::Deserialize;
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    let textract = TextractOcr::with_faults(&deps.sdk, &deps.faults);
    let (deps, textract) = (&deps, &textract);
    lambda_runtime::run(service_fn(move |ev| handler(deps, textract, ev))).await
}

#[derive(Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
enum Request {
    Start {
        run: RunInput,
    },
    Poll {
        run: RunInput,
        #[serde(flatten)]
        started: OcrStarted,
    },
}

async fn handler(
    deps: &Deps,
    textract: &TextractOcr,
    ev: LambdaEvent<Value>,
) -> Result<Value, Failure> {
    match parse(ev.payload)? {
        Request::Start { run } => {
            let op = ocr::operation(&run);
            let started = traced(span("ocr.start", Some(&run), Some(op.as_str())), async {
                let started =
                    ocr::start(textract, &deps.store, &deps.ledger, &deps.ctx, &run).await?;
                tracing::info!(jobId = %started.job_id, fence = started.fence, "ocr job started");
                Ok(started)
            })
            .await?;
            answer(&started)
        }
        Request::Poll { run, started } => {
            let op = ocr::operation(&run);
            let polled = traced(
                span("ocr.poll", Some(&run), Some(op.as_str())),
                ocr::poll(
                    textract,
                    &deps.blobs,
                    &deps.store,
                    &deps.ledger,
                    &deps.ctx,
                    &run,
                    &started,
                ),
            )
            .await?;
            answer(&polled)
        }
    }
}
