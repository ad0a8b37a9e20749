//! An asynchronous OCR provider (Textract).

use std::future::Future;

use crate::ids::OperationId;
use crate::model::run::ObjectRef;
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

/// An asynchronous OCR provider.
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
    /// document.
    fn poll(
        &self,
        operation: &OperationId,
        job_id: &str,
    ) -> impl Future<Output = Result<OcrPoll, Error>> + Send;
    /// The engine its documents name (`OcrDocument::engine`), up to the model version, which the
    /// provider reports only with a result: a stored document whose engine starts with it is
    /// what this provider would read again (`steps::ocr` reuses it for a reprocess).
    fn engine(&self) -> &'static str;
}
