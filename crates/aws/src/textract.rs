//! [`Ocr`] on Amazon Textract's text detection: asynchronous jobs, and the synchronous read
//! (`DetectDocumentText`) of a one-page document. The operation id is the
//! `ClientRequestToken`, so a retried start (after a timeout or a lost response) gets the same
//! `JobId` instead of a second job; the run id is its `JobTag`, and with a notification channel
//! ([`TextractOcr::notifying`]) Textract publishes the job's end, tagged, to an SNS topic (the
//! ocr-notified function ends the run's wait on it). Blocks are normalized into docket's
//! [`OcrDocument`].

use std::collections::HashMap;

use aws_sdk_textract::types::{
    Block, BlockType, Document, DocumentLocation, JobStatus, NotificationChannel, RelationshipType,
    S3Object,
};
use aws_sdk_textract::Client;
use docket_core::ids::OperationId;
use docket_core::model::run::ObjectRef;
use docket_core::ocr::{BoundingBox, Line, OcrDocument, Page, Word};
use docket_core::ports::{Ocr, OcrPoll};
use docket_core::Error;

use crate::errors::{classify, classify_effect, code};

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

fn bbox(block: &Block) -> BoundingBox {
    let b = block.geometry().and_then(|g| g.bounding_box());
    BoundingBox {
        left: b.map_or(0.0, |b| b.left() as f64),
        top: b.map_or(0.0, |b| b.top() as f64),
        width: b.map_or(0.0, |b| b.width() as f64),
        height: b.map_or(0.0, |b| b.height() as f64),
    }
}

fn confidence(block: &Block) -> f64 {
    (block.confidence().unwrap_or(0.0) as f64 / 100.0).clamp(0.0, 1.0)
}

fn children(block: &Block) -> impl Iterator<Item = &str> {
    block
        .relationships()
        .iter()
        .filter(|r| r.r#type() == Some(&RelationshipType::Child))
        .flat_map(|r| r.ids().iter().map(String::as_str))
}

/// The S3 object (the version, when it names one) Textract reads.
fn s3_object(document: &ObjectRef) -> S3Object {
    S3Object::builder()
        .bucket(&document.bucket)
        .name(&document.key)
        .set_version(document.version_id.clone())
        .build()
}

/// Builds the normalized document from every block of a job (in Textract's order).
pub fn normalize(blocks: &[Block], engine: &str) -> OcrDocument {
    let by_id: HashMap<&str, &Block> = blocks
        .iter()
        .filter_map(|b| b.id().map(|id| (id, b)))
        .collect();
    let mut pages: Vec<Page> = Vec::new();
    for block in blocks
        .iter()
        .filter(|b| b.block_type() == Some(&BlockType::Page))
    {
        let number = block.page().unwrap_or(pages.len() as i32 + 1).max(1) as u32;
        let lines = children(block)
            .filter_map(|id| by_id.get(id))
            .filter(|b| b.block_type() == Some(&BlockType::Line))
            .map(|line| {
                let words: Vec<Word> = children(line)
                    .filter_map(|id| by_id.get(id))
                    .filter(|b| b.block_type() == Some(&BlockType::Word))
                    .map(|w| Word {
                        text: w.text().unwrap_or_default().to_string(),
                        confidence: confidence(w),
                        bbox: bbox(w),
                    })
                    .collect();
                Line {
                    text: line.text().unwrap_or_default().to_string(),
                    confidence: confidence(line),
                    bbox: bbox(line),
                    words,
                }
            })
            .collect();
        pages.push(Page { number, lines });
    }
    pages.sort_by_key(|p| p.number);
    OcrDocument {
        engine: engine.to_string(),
        pages,
    }
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

    async fn poll(&self, _: &OperationId, job_id: &str) -> Result<OcrPoll, Error> {
        let mut blocks = Vec::new();
        let mut next: Option<String> = None;
        let mut model = String::new();
        loop {
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
            model = out
                .detect_document_text_model_version()
                .unwrap_or(&model)
                .to_string();
            blocks.extend(out.blocks().iter().cloned());
            next = out.next_token().map(str::to_string);
            if next.is_none() {
                break;
            }
        }
        let engine = format!("{ENGINE}:{model}");
        Ok(OcrPoll::Succeeded(normalize(&blocks, &engine)))
    }
}

#[cfg(test)]
mod tests;
