//! ocr-notified: Textract's notification that a job ended (SNS, one record per job) ends the
//! wait of the run whose id is the job's tag. Its status is not evidence: the job is polled.
//! See `docket_core::steps::ocr::wait`.
//!
//! A failure (the poll had no turn under the quotas, a dependency failed) fails the invocation,
//! and Lambda retries the asynchronous event; a wait still not ended by then runs into the
//! Task's deadline, and the workflow polls.

use aws_lambda_events::event::sns::SnsEvent;
use docket_core::ids::RunId;
use docket_core::model::step::Step;
use docket_core::steps::ocr::wait::{self, Ended};
use docket_core::steps::Context;
use docket_core::Error;
use serde::Deserialize;
use serde_json::{json, Value};

use super::ocr::{pages_metric, OcrPorts};
use crate::{run_context, run_step, span, traced, Failure};

/// What the function runs on: the OCR functions' adapters.
pub type Deps = super::ocr::Deps;

/// The part of Textract's completion message docket reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Completion {
    /// The job that ended.
    pub job_id: String,
    /// The run id (`StartDocumentTextDetection`'s `JobTag`).
    pub job_tag: String,
}

/// The completions an SNS event carries, one per record; a message that is not one is
/// `Fatal.BadInput` (the topic carries nothing else).
pub fn completions(event: &SnsEvent) -> Result<Vec<Completion>, Error> {
    let messages = event.records.iter().map(|r| &r.sns.message);
    messages
        .map(|m| {
            serde_json::from_str(m)
                .map_err(|e| Error::BadInput(format!("not a Textract completion message: {e}")))
        })
        .collect()
}

/// Ends the wait of each notified job's run: per record, `ended`, `waiting` (no Task waits
/// yet: its invocation will find the notice and end the wait itself) or `already-ended`.
pub async fn handle(
    ports: &impl OcrPorts,
    ctx: &Context,
    event: SnsEvent,
) -> Result<Value, Failure> {
    let mut waits = Vec::new();
    for completion in completions(&event)? {
        waits.push(end(ports, ctx, &completion).await?);
    }
    Ok(json!({"waits": waits}))
}

/// Ends the wait `completion` names, if its Task waits; how the wait stands.
async fn end(
    ports: &impl OcrPorts,
    ctx: &Context,
    completion: &Completion,
) -> Result<Value, Failure> {
    let run = RunId::parse(&completion.job_tag)?;
    let op = Step::Ocr.operation(&run);
    let span = span(
        "ocr.notified",
        run.document_id().as_str(),
        run.as_str(),
        op.as_str(),
    );
    let job = &completion.job_id;
    let Some(waiter) = traced(span, wait::ended(ports, &run, job)).await? else {
        return Ok(Value::from(Ended::Waiting.name()));
    };
    let ctx = &*run_context(ports, ctx, "ocr.notified", &waiter.run).await?;
    run_step("ocr.notified", Step::Ocr, &waiter.run, async {
        let ended = wait::end_wait(ports, ctx, &waiter).await?;
        if let Ended::Succeeded(polled) = &ended {
            pages_metric(&waiter.run, polled);
        }
        tracing::info!(jobId = %job, wait = ended.name(), "ocr wait ended");
        Ok(ended.name())
    })
    .await
}
