//! ocr: starts the Textract job of a run (`action: start`) and polls it (`action: poll`), writing
//! the normalized OCR when it is done. See `docket_core::steps::ocr`.

use docket_core::model::run::RunInput;
use docket_core::model::step::Step;
use docket_core::ports::{HasBlobs, HasConfigs, HasLedger, HasOcr, HasStore};
use docket_core::steps::ocr::{self, OcrStarted};
use docket_core::steps::Context;
use serde::Deserialize;
use serde_json::Value;

use crate::metrics::{self, Metric};
use crate::{run_context, run_step, Failure};

/// What ocr runs on: Textract through admission.
pub type Deps = crate::Deps<crate::deps::Textract>;

/// What the state machine sends (`StartOcr`, `PollOcr`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Request {
    /// Start (or find) the run's job.
    Start {
        /// The run.
        run: RunInput,
    },
    /// Poll the job `StartOcr` returned.
    Poll {
        /// The run.
        run: RunInput,
        /// The job and the claim's fence.
        #[serde(flatten)]
        started: OcrStarted,
    },
}

/// Starts or polls the run's OCR job.
pub async fn handle(
    ports: &(impl HasOcr + HasBlobs + HasStore + HasLedger + HasConfigs),
    ctx: &Context,
    request: Request,
) -> Result<Value, Failure> {
    match request {
        Request::Start { run } => {
            let ctx = &*run_context(ports, ctx, "ocr.start", &run).await?;
            run_step("ocr.start", Step::Ocr, &run, async {
                let started = ocr::start(ports, ctx, &run).await?;
                tracing::info!(jobId = %started.job_id, fence = started.fence, "ocr job started");
                Ok(started)
            })
            .await
        }
        Request::Poll { run, started } => {
            let ctx = &*run_context(ports, ctx, "ocr.poll", &run).await?;
            run_step("ocr.poll", Step::Ocr, &run, async {
                let polled = ocr::poll(ports, ctx, &run, &started).await?;
                if let Some(pages) = polled.pages_read {
                    let of = metrics::Of::run(&run, Step::Ocr);
                    metrics::emit(Metric::OcrPages, pages as f64, of, &[]);
                }
                Ok(polled)
            })
            .await
        }
    }
}
