//! A scripted OCR provider, and the OCR waits in memory.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::ids::{OperationId, RunId};
use crate::model::run::ObjectRef;
use crate::ocr::OcrDocument;
use crate::ports::{CallPace, Ocr, OcrPoll, OcrWaiter, OcrWaits};
use crate::Error;

/// A scripted OCR provider: one job per operation id (like Textract's ClientRequestToken); polls
/// answer from `results` by the document's key, `InProgress` for the first `pending_polls` polls.
#[derive(Debug, Default)]
pub struct FakeOcr {
    /// Operation id → (job id, document).
    jobs: Mutex<BTreeMap<OperationId, (String, ObjectRef)>>,
    /// Document key → what the job ends with.
    pub results: Mutex<BTreeMap<String, OcrPoll>>,
    /// Polls that answer `InProgress` before the result.
    pub pending_polls: Mutex<usize>,
    /// Every start call, including repeats.
    pub start_calls: Mutex<usize>,
    /// The next this many start calls start (or find) the job and then lose the answer:
    /// `Ambiguous.OutcomeUnknown`, as after a timeout.
    pub lose_start_answers: Mutex<usize>,
    /// The next start calls fail with these errors, first one first, before any job starts.
    pub fail_starts: Mutex<Vec<Error>>,
    /// Every synchronous read, including repeats.
    pub detect_calls: Mutex<usize>,
    /// The slot booked for it that each synchronous read came with (`Ocr::detect`).
    pub detects_booked: Mutex<Vec<Option<i64>>>,
    /// The next synchronous reads fail with these errors, first one first.
    pub fail_detects: Mutex<Vec<Error>>,
}

impl FakeOcr {
    /// The job `op` started, if any.
    pub fn job_of(&self, op: &OperationId) -> Option<String> {
        self.jobs
            .lock()
            .unwrap()
            .get(op)
            .map(|(job, _)| job.clone())
    }

    /// Number of distinct jobs started.
    pub fn job_count(&self) -> usize {
        self.jobs.lock().unwrap().len()
    }
}

/// The engine the fake's documents name (`OcrDocument::from_lines`).
pub const FAKE_ENGINE: &str = "test";

impl Ocr for FakeOcr {
    fn engine(&self) -> &'static str {
        FAKE_ENGINE
    }

    async fn start(
        &self,
        op: &OperationId,
        document: &ObjectRef,
        _: &str,
    ) -> Result<String, Error> {
        *self.start_calls.lock().unwrap() += 1;
        {
            let mut fail = self.fail_starts.lock().unwrap();
            if !fail.is_empty() {
                return Err(fail.remove(0));
            }
        }
        let mut jobs = self.jobs.lock().unwrap();
        let n = jobs.len();
        let (job, _) = jobs
            .entry(op.clone())
            .or_insert_with(|| (format!("job-{n}"), document.clone()));
        let mut lose = self.lose_start_answers.lock().unwrap();
        if *lose > 0 {
            *lose -= 1;
            return Err(Error::OutcomeUnknown(format!("start of {op}: answer lost")));
        }
        Ok(job.clone())
    }

    /// Answers from `results` by the document's key, as a job would end: a one-page document
    /// is read, one of more pages is `None` (a job's), a failed read is `Business.OcrFailed`.
    async fn detect(
        &self,
        _: &OperationId,
        document: &ObjectRef,
        booked_at_ms: Option<i64>,
    ) -> Result<Option<OcrDocument>, Error> {
        *self.detect_calls.lock().unwrap() += 1;
        self.detects_booked.lock().unwrap().push(booked_at_ms);
        {
            let mut fail = self.fail_detects.lock().unwrap();
            if !fail.is_empty() {
                return Err(fail.remove(0));
            }
        }
        match self.results.lock().unwrap().get(&document.key).cloned() {
            Some(OcrPoll::Succeeded(read)) if read.pages.len() == 1 => Ok(Some(read)),
            Some(OcrPoll::Succeeded(_)) => Ok(None),
            Some(OcrPoll::Failed(message)) => Err(Error::OcrFailed(message)),
            Some(OcrPoll::InProgress) | None => Err(Error::Internal(format!(
                "no scripted result for {}",
                document.key
            ))),
        }
    }

    async fn poll(
        &self,
        _: &OperationId,
        job_id: &str,
        max_pages: u32,
        _: &impl CallPace,
    ) -> Result<OcrPoll, Error> {
        {
            let mut pending = self.pending_polls.lock().unwrap();
            if *pending > 0 {
                *pending -= 1;
                return Ok(OcrPoll::InProgress);
            }
        }
        let jobs = self.jobs.lock().unwrap();
        let (_, document) = jobs
            .values()
            .find(|(job, _)| job == job_id)
            .ok_or_else(|| Error::BadInput(format!("unknown job {job_id}")))?;
        let result = self.results.lock().unwrap().get(&document.key).cloned();
        match result {
            Some(OcrPoll::Succeeded(read)) if read.pages.len() > max_pages as usize => {
                Err(Error::TooManyPages {
                    pages: read.pages.len() as u32,
                    limit: max_pages,
                })
            }
            Some(result) => Ok(result),
            None => Err(Error::Internal(format!(
                "no scripted result for {}",
                document.key
            ))),
        }
    }
}

/// One run's OCR wait: the newest waiter and the ended job's id.
#[derive(Debug, Clone, Default)]
pub struct OcrWait {
    /// The newest waiter.
    pub waiter: Option<OcrWaiter>,
    /// The job the provider said had ended.
    pub ended: Option<String>,
}

/// The OCR waits under one lock, per run.
#[derive(Debug, Default)]
pub struct MemoryOcrWaits {
    /// Per run, its wait.
    pub waits: Mutex<BTreeMap<RunId, OcrWait>>,
}

impl OcrWaits for MemoryOcrWaits {
    async fn wait(&self, waiter: &OcrWaiter) -> Result<Option<String>, Error> {
        let mut waits = self.waits.lock().unwrap();
        let wait = waits.entry(waiter.run.run_id.clone()).or_default();
        wait.waiter = Some(waiter.clone());
        Ok(wait.ended.clone())
    }

    async fn ended(&self, run: &RunId, job_id: &str) -> Result<Option<OcrWaiter>, Error> {
        let mut waits = self.waits.lock().unwrap();
        let wait = waits.entry(run.clone()).or_default();
        wait.ended = Some(job_id.to_string());
        Ok(wait.waiter.clone())
    }
}
