//! ocr: the run's OCR Task (`action: start`, with the Task's token) starts the Textract job and
//! waits for its end by callback; after the wait's deadline, `action: poll` polls the job the
//! ledger holds. See `docket_core::steps::ocr` and its `wait`.

use docket_core::model::run::{RunInput, TaskToken};
use docket_core::model::step::Step;
use docket_core::ports::{
    HasBlobs, HasCallback, HasConfigs, HasLedger, HasOcr, HasOcrWaits, HasStore,
};
use docket_core::steps::ocr::wait::{self, Ended};
use docket_core::steps::ocr::{self, OcrPolled};
use docket_core::steps::Context;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::metrics::{self, Metric};
use crate::{run_context, run_step, Failure};

/// What the OCR functions run on (ocr and ocr-notified).
pub type Deps = crate::Deps<crate::deps::OcrFns>;

/// The ports the OCR functions' handlers take: the provider, the buckets, the records, the
/// ledger, the configs, the OCR waits and the callback that ends one.
pub trait OcrPorts:
    HasOcr + HasBlobs + HasStore + HasLedger + HasConfigs + HasOcrWaits + HasCallback
{
}

impl<T> OcrPorts for T where
    T: HasOcr + HasBlobs + HasStore + HasLedger + HasConfigs + HasOcrWaits + HasCallback
{
}

/// What the state machine sends (`StartOcr`, `PollOcr`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Start (or find) the run's job and wait for its end with `token`.
    Start {
        /// The run.
        run: RunInput,
        /// The waiting Task's token (serialized by the fixture tests only).
        #[cfg_attr(test, serde(serialize_with = "crate::fixtures::expose_token"))]
        token: TaskToken,
    },
    /// Poll the job the ledger holds (the wait ran into its deadline).
    Poll {
        /// The run.
        run: RunInput,
    },
}

/// Starts the run's OCR job and waits, or polls it.
pub async fn handle(
    ports: &impl OcrPorts,
    ctx: &Context,
    request: Request,
) -> Result<Value, Failure> {
    match request {
        Request::Start { run, token } => {
            let ctx = &*run_context(ports, ctx, "ocr.start", &run).await?;
            run_step("ocr.start", Step::Ocr, &run, async {
                let ended = wait::start_and_wait(ports, ctx, &run, &token).await?;
                if let Ended::Succeeded(polled) = &ended {
                    pages_metric(&run, polled);
                }
                tracing::info!(wait = ended.name(), "ocr job started");
                Ok(json!({"wait": ended.name()}))
            })
            .await
        }
        Request::Poll { run } => {
            let ctx = &*run_context(ports, ctx, "ocr.poll", &run).await?;
            run_step("ocr.poll", Step::Ocr, &run, async {
                let polled = ocr::reconcile(ports, ctx, &run).await?;
                pages_metric(&run, &polled);
                Ok(polled)
            })
            .await
        }
    }
}

/// The pages the provider read for `run` (none when its stored OCR was reused): the OcrPages
/// metric.
pub fn pages_metric(run: &RunInput, polled: &OcrPolled) {
    if let Some(pages) = polled.pages_read {
        let of = metrics::Of::run(run, Step::Ocr);
        metrics::emit(Metric::OcrPages, pages as f64, of, &[]);
    }
}
