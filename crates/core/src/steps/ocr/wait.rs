//! OCR completion by callback, not polling: `StartOcr` is a Task with a token, and the job's
//! completion notification (Textract → SNS → the ocr-notified function) ends its wait.
//!
//! - [`start_and_wait`] (the Task's invocation) starts or finds the run's job
//!   ([`super::start`]), then keeps the Task's token with the run and the job ([`OcrWaits`]).
//!   If the job's end was notified before (or there is no job to wait for: a reused OCR), it
//!   ends the wait itself.
//! - [`ended`] (the notification) keeps the notice and, if the Task already waits, ends it.
//! - The waiter and the notice are kept side by side in one record per run, each write
//!   returning what the other wrote before: whichever comes second ends the wait, so a job that
//!   ends before its Task began to wait is not missed, and neither side polls.
//! - Ending the wait ([`end_wait`]) is one poll of the job ([`super::poll`]: the normalized OCR
//!   written and the operation completed, or the run failed with `Business.OcrFailed`) and a
//!   callback with what it found. The notification's own status is not evidence: the provider
//!   is asked. Ending a wait twice is harmless: the ledger writes are conditional on what
//!   landed, and Step Functions refuses a second callback (`Ended::AlreadyEnded`).
//! - A wait no one ends (a notification lost) runs into the Task's deadline; the workflow then
//!   polls the job by the id the ledger holds ([`super::reconcile`]).

use serde_json::json;

use super::{poll, start, OcrPolled, OcrStarted, REUSED, SUCCEEDED};
use crate::error::{ErrorKind, Family};
use crate::model::run::{RunInput, TaskToken};
use crate::ports::{
    HasBlobs, HasCallback, HasLedger, HasOcr, HasOcrWaits, HasStore, OcrWaiter, OcrWaits,
    TaskCallback,
};
use crate::steps::Context;
use crate::Error;

/// Where a wait stands after one side's turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// The token is kept: the other side ends the wait (or the Task's deadline does).
    Waiting,
    /// The wait was ended with the normalized OCR.
    Succeeded(OcrPolled),
    /// The wait was ended with this named error (the run is recorded failed).
    Failed(ErrorKind),
    /// The workflow no longer waited on that token: the other side, or the deadline, ended it.
    AlreadyEnded,
}

impl Ended {
    /// The stable name (logged).
    pub fn name(&self) -> &'static str {
        match self {
            Ended::Waiting => "waiting",
            Ended::Succeeded(_) => "succeeded",
            Ended::Failed(_) => "failed",
            Ended::AlreadyEnded => "already-ended",
        }
    }
}

/// The invocation of the Task that waits (with `token`) for `input`'s OCR: starts or finds the
/// job, then waits for it, or ends the wait at once when its end is already known.
pub async fn start_and_wait(
    ports: &(impl HasOcr + HasBlobs + HasStore + HasLedger + HasOcrWaits + HasCallback),
    ctx: &Context,
    input: &RunInput,
    token: &TaskToken,
) -> Result<Ended, Error> {
    let started = start(ports, ctx, input).await?;
    if let Some(polled) = started.done {
        // A one-page document read at once, or a repeated start of a completed operation: its
        // OCR is known, nothing to wait for.
        return call_back(ports.callback(), token, Ok(polled)).await;
    }
    let waiter = OcrWaiter {
        token: token.clone(),
        run: input.clone(),
        job_id: started.job_id,
        fence: started.fence,
    };
    // A reused OCR is no provider job: nothing will notify its end, which is already known.
    if !waiter.job_id.starts_with(REUSED) {
        match ports.ocr_waits().wait(&waiter).await? {
            Some(job) if job == waiter.job_id => {}
            // Not notified yet (a notice of another job is not this one's end).
            _ => return Ok(Ended::Waiting),
        }
    }
    end_wait(ports, ctx, &waiter).await
}

/// The provider's notification that `run`'s job `job_id` ended: the waiter to end, if its Task
/// already waits (`None`: the Task's invocation will find the notice and end its wait itself).
pub async fn ended(
    ports: &impl HasOcrWaits,
    run: &crate::ids::RunId,
    job_id: &str,
) -> Result<Option<OcrWaiter>, Error> {
    let waiter = ports.ocr_waits().ended(run, job_id).await?;
    Ok(waiter.filter(|w| w.job_id == job_id))
}

/// Polls `waiter`'s job once and ends the wait with what it found. A job not ended yet (or no
/// turn under the provider's quotas for the poll) is `Transient.InProgress`, and so is any
/// transient failure: the caller's retry comes back.
pub async fn end_wait(
    ports: &(impl HasOcr + HasBlobs + HasStore + HasLedger + HasCallback),
    ctx: &Context,
    waiter: &OcrWaiter,
) -> Result<Ended, Error> {
    let started = OcrStarted {
        job_id: waiter.job_id.clone(),
        fence: waiter.fence,
        done: None,
    };
    let found = match poll(ports, ctx, &waiter.run, &started).await {
        Ok(polled) if polled.status == SUCCEEDED => Ok(polled),
        Ok(_) => {
            let job = &waiter.job_id;
            return Err(Error::InProgress(format!(
                "OCR job {job} has not ended yet"
            )));
        }
        // The provider could not read the document: the run is recorded failed; end the wait.
        Err(e) if e.family() == Family::Business => Err(e),
        Err(e) => return Err(e),
    };
    call_back(ports.callback(), &waiter.token, found).await
}

/// Ends the wait of `token` with what was `found`: the normalized OCR, or the named error.
async fn call_back(
    callback: &impl TaskCallback,
    token: &TaskToken,
    found: Result<OcrPolled, Error>,
) -> Result<Ended, Error> {
    let sent = match &found {
        Ok(polled) => {
            let output = json!({"status": polled.status, "normalized": polled.normalized});
            callback.succeed(token, &output).await
        }
        Err(e) => callback.fail(token, e.kind(), &e.to_string()).await,
    };
    match (sent, found) {
        (Ok(()), Ok(polled)) => Ok(Ended::Succeeded(polled)),
        (Ok(()), Err(e)) => Ok(Ended::Failed(e.kind())),
        (Err(Error::ReviewExpired(_)), _) => Ok(Ended::AlreadyEnded),
        (Err(e), _) => Err(e),
    }
}
