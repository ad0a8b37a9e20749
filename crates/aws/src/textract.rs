//! [`Ocr`] on Amazon Textract's text detection: asynchronous jobs, and the synchronous read
//! (`DetectDocumentText`) of a one-page document. The operation id is the
//! `ClientRequestToken`, so a retried start (after a timeout or a lost response) gets the same
//! `JobId` instead of a second job; the run id is its `JobTag`, and with a notification channel
//! ([`TextractOcr::notifying`]) Textract publishes the job's end, tagged, to an SNS topic (the
//! ocr-notified function ends the run's wait on it). Blocks are normalized into docket's
//! [`OcrDocument`] answer by answer (`normalize`); a job of more pages than the caller's limit
//! is refused at its first answer, before its text is fetched.

use aws_sdk_textract::types::{
    Document, DocumentLocation, JobStatus, NotificationChannel, S3Object,
};
use aws_sdk_textract::Client;
use docket_core::ids::OperationId;
use docket_core::model::run::ObjectRef;
use docket_core::ocr::OcrDocument;
use docket_core::ports::{CallPace, Ocr, OcrPoll};
use docket_core::Error;

use crate::errors::{classify, classify_effect, code};

mod normalize;
pub use normalize::{normalize, Normalizer};

/// Textract text detection.
#[derive(Debug, Clone)]
pub struct TextractOcr {
    client: Client,
    notify: Option<NotificationChannel>,
}

/// Textract error codes that say the document itself cannot be read (never retried).
const DOCUMENT_ERRORS: &[&str] = &[
    "InvalidS3ObjectException",
    "UnsupportedDocumentException",
    "BadDocumentException",
    "DocumentTooLargeException",
];

impl TextractOcr {
    /// From an SDK config.
    pub fn new(config: &aws_config::SdkConfig) -> Self {
        Self::with_faults(config, &crate::Faults::none())
    }

    /// Like [`TextractOcr::new`], with `faults` injected (tests and local runs only).
    ///
    /// The SDK's own retries are off: admission (`docket_core::admitted`) takes a call slot of
    /// the quota before each call, and an SDK retry would be a call sent in no slot. The SDK
    /// counts `ProvisionedThroughputExceededException` and `LimitExceededException` as
    /// throttling and retries them after its own backoff, so one refused call became up to three
    /// unpaced ones, each likely to be refused or to take the second of the next paced call. A
    /// failed call is the caller's to retry, through admission.
    pub fn with_faults(config: &aws_config::SdkConfig, faults: &crate::Faults) -> Self {
        let builder = aws_sdk_textract::config::Builder::from(config)
            .retry_config(aws_sdk_textract::config::retry::RetryConfig::disabled());
        TextractOcr {
            client: Client::from_conf(crate::with_faults(builder, faults).build()),
            notify: None,
        }
    }

    /// Jobs started from now on publish their end to SNS topic `topic_arn`, Textract assuming
    /// `role_arn` to publish.
    pub fn notifying(self, topic_arn: &str, role_arn: &str) -> Result<Self, Error> {
        let channel = NotificationChannel::builder()
            .sns_topic_arn(topic_arn)
            .role_arn(role_arn)
            .build()
            .map_err(|e| Error::Internal(format!("Textract notification channel: {e}")))?;
        Ok(TextractOcr {
            notify: Some(channel),
            ..self
        })
    }
}

/// The S3 object (the version, when it names one) Textract reads.
fn s3_object(document: &ObjectRef) -> S3Object {
    S3Object::builder()
        .bucket(&document.bucket)
        .name(&document.key)
        .set_version(document.version_id.clone())
        .build()
}

/// The engine of the documents Textract's text detection produces, before its model version.
pub const ENGINE: &str = "textract:DetectDocumentText";

impl Ocr for TextractOcr {
    fn engine(&self) -> &'static str {
        ENGINE
    }

    async fn start(
        &self,
        operation: &OperationId,
        document: &ObjectRef,
        tag: &str,
    ) -> Result<String, Error> {
        let location = DocumentLocation::builder()
            .s3_object(s3_object(document))
            .build();
        let out = self
            .client
            .start_document_text_detection()
            .document_location(location)
            .client_request_token(operation.as_str())
            .job_tag(tag)
            .set_notification_channel(self.notify.clone())
            .send()
            .await
            .map_err(|e| match code(&e) {
                Some("IdempotentParameterMismatchException") => {
                    Error::ParametersChanged(operation.to_string())
                }
                Some(c) if DOCUMENT_ERRORS.contains(&c) => Error::OcrFailed(c.to_string()),
                // Textract may have accepted the job: the retry with the same token reconciles.
                _ => classify_effect("textract StartDocumentTextDetection", e),
            })?;
        out.job_id()
            .map(str::to_string)
            .ok_or_else(|| Error::Internal("Textract returned no JobId".into()))
    }

    async fn detect(
        &self,
        _: &OperationId,
        document: &ObjectRef,
        _: Option<i64>,
    ) -> Result<Option<OcrDocument>, Error> {
        let out = self
            .client
            .detect_document_text()
            .document(Document::builder().s3_object(s3_object(document)).build())
            .send()
            .await;
        let out = match out {
            Ok(out) => out,
            Err(e) => {
                return match code(&e) {
                    // More than one page (or a format only a job reads): a job's, not an error.
                    Some("UnsupportedDocumentException") => Ok(None),
                    Some(c) if DOCUMENT_ERRORS.contains(&c) => Err(Error::OcrFailed(c.to_string())),
                    // A read changes nothing at the provider: a lost answer is asked again.
                    _ => Err(classify("textract DetectDocumentText", e)),
                };
            }
        };
        let model = out.detect_document_text_model_version().unwrap_or_default();
        let engine = format!("{ENGINE}:{model}");
        Ok(Some(normalize(out.blocks(), &engine)))
    }

    async fn poll(
        &self,
        _: &OperationId,
        job_id: &str,
        max_pages: u32,
        pace: &impl CallPace,
    ) -> Result<OcrPoll, Error> {
        let mut read = Normalizer::default();
        let mut next: Option<String> = None;
        let mut model = String::new();
        loop {
            if next.is_some() {
                pace.next_call().await?;
            }
            let out = self
                .client
                .get_document_text_detection()
                .job_id(job_id)
                .max_results(1000)
                .set_next_token(next)
                .send()
                .await
                .map_err(|e| classify("textract GetDocumentTextDetection", e))?;
            match out.job_status() {
                Some(JobStatus::InProgress) => return Ok(OcrPoll::InProgress),
                Some(JobStatus::Failed) => {
                    let message = out.status_message().unwrap_or("job failed").to_string();
                    return Ok(OcrPoll::Failed(message));
                }
                _ => {}
            }
            let pages = out.document_metadata().and_then(|m| m.pages()).unwrap_or(0);
            if pages > max_pages as i32 {
                return Err(Error::TooManyPages {
                    pages: pages as u32,
                    limit: max_pages,
                });
            }
            model = out
                .detect_document_text_model_version()
                .unwrap_or(&model)
                .to_string();
            read.add(out.blocks());
            next = out.next_token().map(str::to_string);
            if next.is_none() {
                break;
            }
        }
        let engine = format!("{ENGINE}:{model}");
        Ok(OcrPoll::Succeeded(read.finish(&engine)))
    }
}

#[cfg(test)]
mod tests;
