//! An OCR provider (Textract): its asynchronous jobs, its synchronous read of a one-page
//! document, and where a run's OCR Task waits for its job's completion notification.

use std::future::Future;

use crate::ids::{OperationId, RunId};
use crate::model::run::{ObjectRef, RunInput, TaskToken};
use crate::ocr::OcrDocument;
use crate::Error;

/// What an OCR job reports.
#[derive(Debug, Clone, PartialEq)]
pub enum OcrPoll {
    /// Still running.
    InProgress,
    /// Done: the normalized document.
    Succeeded(OcrDocument),
    /// The provider could not read the document.
    Failed(String),
}

/// Spaces the calls of one request that takes several (a long job's answers): each call after
/// the first waits for its turn.
pub trait CallPace: Send + Sync {
    /// Waits until one more call may be sent; `Transient.QuotaFull` when no turn comes soon.
    fn next_call(&self) -> impl Future<Output = Result<(), Error>> + Send;
}

/// Calls as fast as they come (a provider under no admission).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unpaced;

impl CallPace for Unpaced {
    async fn next_call(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// An OCR provider: jobs for any document, and a synchronous read for one page.
pub trait Ocr: Send + Sync {
    /// Starts (or, with the same operation id, finds) the text detection job for `document`.
    /// The operation id is the provider's idempotency token. Returns the job id.
    fn start(
        &self,
        operation: &OperationId,
        document: &ObjectRef,
        tag: &str,
    ) -> impl Future<Output = Result<String, Error>> + Send;
    /// The state of job `job_id`, which `operation` started; on success the whole normalized
    /// document. A finished job of more than `max_pages` pages is `Business.TooManyPages`,
    /// told before its text is fetched (the provider's first answer says how many pages). A
    /// long job's text takes more than one call; each call after the first waits for
    /// `pace.next_call()` (a provider under admission spaces them within its quota).
    fn poll(
        &self,
        operation: &OperationId,
        job_id: &str,
        max_pages: u32,
        pace: &impl CallPace,
    ) -> impl Future<Output = Result<OcrPoll, Error>> + Send;
    /// Reads a one-page `document` synchronously (no job, nothing to wait for): the normalized
    /// document, or `None` when the provider reads it only as a job (more than one page). A
    /// read changes nothing at the provider, so asking again after a lost answer is safe.
    /// `booked_at_ms` is a call slot booked for this read ahead of time
    /// ([`RunInput::read_at_ms`]): a provider under admission reads at it while it is usable
    /// ([`crate::admitted`]); the provider itself takes no notice of it.
    fn detect(
        &self,
        operation: &OperationId,
        document: &ObjectRef,
        booked_at_ms: Option<i64>,
    ) -> impl Future<Output = Result<Option<OcrDocument>, Error>> + Send;
    /// The engine its documents name (`OcrDocument::engine`), up to the model version, which the
    /// provider reports only with a result: a stored document whose engine starts with it is
    /// what this provider would read again (`steps::ocr` reuses it for a reprocess).
    fn engine(&self) -> &'static str;
}

/// The Task that waits for a run's OCR job (`StartOcr`, with a token): the token, and what
/// ending the wait needs (the run, its job and the ledger fence it holds the job under).
#[derive(Debug, Clone, PartialEq)]
pub struct OcrWaiter {
    /// The waiting Task's token (a bearer credential: kept server-side, never logged).
    pub token: TaskToken,
    /// The run.
    pub run: RunInput,
    /// The provider's job.
    pub job_id: String,
    /// The fence of the ledger claim that holds the job.
    pub fence: u64,
}

/// Where a run's OCR Task waits for the provider's completion notification: the waiter and the
/// notification (the ended job's id) side by side in one record per run, each write answering
/// what the other wrote before. Whichever of the two arrives second finds the first, so a job
/// that ends before its Task began to wait is not missed.
pub trait OcrWaits: Send + Sync {
    /// Keeps `waiter` as the one waiting for its run's job (a newer one replaces an older one);
    /// the id of the job the provider said had ended, if its notification came first.
    fn wait(
        &self,
        waiter: &OcrWaiter,
    ) -> impl Future<Output = Result<Option<String>, Error>> + Send;
    /// Keeps the provider's notification that `run`'s job `job_id` ended; the waiter, if the
    /// wait began first.
    fn ended(
        &self,
        run: &RunId,
        job_id: &str,
    ) -> impl Future<Output = Result<Option<OcrWaiter>, Error>> + Send;
}
