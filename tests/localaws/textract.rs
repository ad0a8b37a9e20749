//! Textract text detection, emulated by our LocalStack extension on Tesseract
//! (infra/localstack/docket_localstack/textract.py).
//!
//! The pages are made here from known text: a hand-written PDF in Helvetica, and a PNG rendered
//! from it by poppler's `pdftoppm`.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use aws_sdk_textract::error::ProvideErrorMetadata;
use aws_sdk_textract::operation::get_document_text_detection::GetDocumentTextDetectionOutput;
use aws_sdk_textract::primitives::Blob;
use aws_sdk_textract::types::{
    Block, BlockType, Document, DocumentLocation, JobStatus, RelationshipType, S3Object,
};

use docket_e2e::render::{pdf, png_of};
use docket_e2e::resource::{self, Resource};
use docket_e2e::util;

const INVOICE_PAGE: &[&str] = &["INVOICE", "Number INV-2026-0042", "Total 1234.56 EUR"];
const SECOND_PAGE: &[&str] = &["CONTINUED", "Delivery 2026-12-01"];
const JOB_DEADLINE: Duration = Duration::from_secs(60);

struct Fixture {
    textract: aws_sdk_textract::Client,
    s3: aws_sdk_s3::Client,
    bucket: Resource,
}

impl Fixture {
    async fn new() -> Self {
        let cfg = util::aws().await;
        let s3 = util::s3(&cfg);
        let bucket = resource::bucket(&cfg, "textract").await;
        Fixture {
            textract: aws_sdk_textract::Client::new(&cfg),
            s3,
            bucket,
        }
    }

    async fn put(&self, key: &str, body: Vec<u8>) {
        self.s3
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .body(body.into())
            .send()
            .await
            .unwrap();
    }

    fn object(&self, key: &str) -> S3Object {
        S3Object::builder().bucket(&self.bucket).name(key).build()
    }

    fn location(&self, key: &str) -> DocumentLocation {
        DocumentLocation::builder()
            .s3_object(self.object(key))
            .build()
    }

    async fn start(&self, key: &str, token: Option<&str>) -> String {
        self.textract
            .start_document_text_detection()
            .document_location(self.location(key))
            .set_client_request_token(token.map(str::to_string))
            .send()
            .await
            .unwrap()
            .job_id()
            .unwrap()
            .to_string()
    }

    /// Polls until the job leaves IN_PROGRESS; panics after JOB_DEADLINE.
    async fn finished(&self, job_id: &str) -> GetDocumentTextDetectionOutput {
        let started = Instant::now();
        loop {
            let out = self
                .textract
                .get_document_text_detection()
                .job_id(job_id)
                .send()
                .await
                .unwrap();
            if out.job_status() != Some(&JobStatus::InProgress) {
                return out;
            }
            assert!(
                started.elapsed() < JOB_DEADLINE,
                "job {job_id} still IN_PROGRESS after {JOB_DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Every block of a finished job, fetched `max_results` at a time.
    async fn blocks_paged(&self, job_id: &str, max_results: i32) -> (Vec<Block>, usize) {
        let (mut blocks, mut calls, mut token) = (Vec::new(), 0, None);
        loop {
            let out = self
                .textract
                .get_document_text_detection()
                .job_id(job_id)
                .max_results(max_results)
                .set_next_token(token)
                .send()
                .await
                .unwrap();
            calls += 1;
            assert!(out.blocks().len() <= max_results as usize);
            blocks.extend(out.blocks().iter().cloned());
            token = out.next_token().map(str::to_string);
            if token.is_none() {
                return (blocks, calls);
            }
            assert!(calls < 10_000, "paging does not end");
        }
    }
}

fn words(blocks: &[Block]) -> Vec<&str> {
    blocks
        .iter()
        .filter(|b| b.block_type() == Some(&BlockType::Word))
        .filter_map(|b| b.text())
        .collect()
}

/// Confidence in 0..=100 for text blocks, boxes and polygons inside the page.
fn assert_well_formed(blocks: &[Block]) {
    for block in blocks {
        let kind = block.block_type().unwrap();
        assert!(block.id().is_some_and(|id| !id.is_empty()));
        if kind != &BlockType::Page {
            let confidence = block.confidence().unwrap();
            assert!((0.0..=100.0).contains(&confidence), "{block:?}");
            assert!(block.text().is_some_and(|t| !t.is_empty()), "{block:?}");
        }
        let geometry = block.geometry().unwrap();
        let b = geometry.bounding_box().unwrap();
        let unit = 0.0..=1.0;
        assert!(
            unit.contains(&b.left()) && unit.contains(&b.top()),
            "{block:?}"
        );
        assert!(unit.contains(&(b.left() + b.width())), "{block:?}");
        assert!(unit.contains(&(b.top() + b.height())), "{block:?}");
        assert_eq!(geometry.polygon().len(), 4);
    }
}

fn children(block: &Block) -> Vec<&str> {
    block
        .relationships()
        .iter()
        .filter(|r| r.r#type() == Some(&RelationshipType::Child))
        .flat_map(|r| r.ids().iter().map(String::as_str))
        .collect()
}

fn code<E: ProvideErrorMetadata>(err: &E) -> &str {
    err.code().unwrap_or("<no code>")
}

#[tokio::test]
async fn detect_document_text_reads_the_words_of_a_known_page() {
    // given a PNG of an invoice page in S3
    let fx = Fixture::new().await;
    fx.put("invoice.png", png_of(&pdf(&[INVOICE_PAGE]))).await;

    // when its text is detected synchronously
    let out = fx
        .textract
        .detect_document_text()
        .document(
            Document::builder()
                .s3_object(fx.object("invoice.png"))
                .build(),
        )
        .send()
        .await
        .unwrap();

    // then the words of the page come back, on one page, with sane confidence and geometry
    let found = words(out.blocks());
    for expected in ["INVOICE", "INV-2026-0042", "1234.56", "EUR"] {
        assert!(found.contains(&expected), "{expected} not in {found:?}");
    }
    assert_eq!(out.document_metadata().unwrap().pages(), Some(1));
    assert!(out.detect_document_text_model_version().is_some());
    assert_eq!(out.blocks()[0].block_type(), Some(&BlockType::Page));
    assert_well_formed(out.blocks());
    let lines: Vec<&str> = out
        .blocks()
        .iter()
        .filter(|b| b.block_type() == Some(&BlockType::Line))
        .filter_map(|b| b.text())
        .collect();
    assert!(lines.contains(&"Number INV-2026-0042"), "{lines:?}");
}

#[tokio::test]
async fn text_detection_job_reads_every_page_of_a_known_pdf() {
    // given a two-page PDF in S3
    let fx = Fixture::new().await;
    fx.put("invoice.pdf", pdf(&[INVOICE_PAGE, SECOND_PAGE]))
        .await;

    // when a text detection job runs on it
    let job_id = fx.start("invoice.pdf", None).await;
    let out = fx.finished(&job_id).await;

    // then it succeeds with one PAGE block per page and each page's words on that page
    assert_eq!(
        out.job_status(),
        Some(&JobStatus::Succeeded),
        "{:?}",
        out.status_message()
    );
    assert_eq!(out.document_metadata().unwrap().pages(), Some(2));
    let blocks = out.blocks();
    let pages: Vec<Option<i32>> = blocks
        .iter()
        .filter(|b| b.block_type() == Some(&BlockType::Page))
        .map(Block::page)
        .collect();
    assert_eq!(pages, vec![Some(1), Some(2)]);
    let on_page = |n: i32| -> Vec<Block> {
        blocks
            .iter()
            .filter(|b| b.page() == Some(n))
            .cloned()
            .collect()
    };
    let (first, second) = (on_page(1), on_page(2));
    assert!(words(&first).contains(&"INVOICE"), "{:?}", words(&first));
    assert!(
        words(&first).contains(&"INV-2026-0042"),
        "{:?}",
        words(&first)
    );
    assert!(
        words(&second).contains(&"CONTINUED"),
        "{:?}",
        words(&second)
    );
    assert!(!words(&second).contains(&"INVOICE"));
    assert_well_formed(blocks);
    assert!(blocks
        .iter()
        .filter(|b| b.block_type() == Some(&BlockType::Word))
        .all(|b| b.text_type().is_some()));
}

#[tokio::test]
async fn same_client_request_token_gives_the_same_job() {
    // given a PDF in S3 and one start request with a token
    let fx = Fixture::new().await;
    fx.put("invoice.pdf", pdf(&[INVOICE_PAGE])).await;
    let token = util::unique("token");
    let first = fx.start("invoice.pdf", Some(&token)).await;

    // when the same request is sent again
    let second = fx.start("invoice.pdf", Some(&token)).await;

    // then it answers with the first job, and a request without a token starts another
    assert_eq!(first, second);
    assert_ne!(fx.start("invoice.pdf", None).await, first);
}

#[tokio::test]
async fn same_client_request_token_with_other_parameters_is_a_mismatch() {
    // given a job started with a token for one object
    let fx = Fixture::new().await;
    fx.put("a.pdf", pdf(&[INVOICE_PAGE])).await;
    fx.put("b.pdf", pdf(&[SECOND_PAGE])).await;
    let token = util::unique("token");
    fx.start("a.pdf", Some(&token)).await;

    // when the token is reused for another object
    let err = fx
        .textract
        .start_document_text_detection()
        .document_location(fx.location("b.pdf"))
        .client_request_token(&token)
        .send()
        .await
        .unwrap_err()
        .into_service_error();

    // then the request is refused with IdempotentParameterMismatchException
    assert!(
        err.is_idempotent_parameter_mismatch_exception(),
        "{}: {err:?}",
        code(&err)
    );
}

#[tokio::test]
async fn corrupt_and_foreign_files_are_refused_by_their_aws_error() {
    // given a PDF header followed by garbage in S3, and bytes of no supported format
    let fx = Fixture::new().await;
    fx.put(
        "corrupt.pdf",
        b"%PDF-1.7\n\x00\x13garbage, no objects, no xref\n".to_vec(),
    )
    .await;
    let foreign: Vec<u8> = (0u32..4096).map(|i| (i * 7919 % 251) as u8 + 1).collect();

    // when their text is detected
    let corrupt = fx
        .textract
        .detect_document_text()
        .document(
            Document::builder()
                .s3_object(fx.object("corrupt.pdf"))
                .build(),
        )
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let unsupported = fx
        .textract
        .detect_document_text()
        .document(Document::builder().bytes(Blob::new(foreign)).build())
        .send()
        .await
        .unwrap_err()
        .into_service_error();

    // then the corrupt one is a BadDocument and the foreign one an UnsupportedDocument
    assert!(corrupt.is_bad_document_exception(), "{}", code(&corrupt));
    assert!(
        unsupported.is_unsupported_document_exception(),
        "{}",
        code(&unsupported)
    );
}

#[tokio::test]
async fn text_detection_job_on_a_corrupt_pdf_fails_with_a_message() {
    // given a PDF header followed by garbage in S3
    let fx = Fixture::new().await;
    fx.put("corrupt.pdf", b"%PDF-1.7\ngarbage".to_vec()).await;

    // when a text detection job runs on it
    let job_id = fx.start("corrupt.pdf", None).await;
    let out = fx.finished(&job_id).await;

    // then the job is FAILED, says why, and has no blocks
    assert_eq!(out.job_status(), Some(&JobStatus::Failed));
    assert!(out.status_message().is_some_and(|m| !m.is_empty()));
    assert!(out.blocks().is_empty());
}

#[tokio::test]
async fn missing_object_is_an_invalid_s3_object() {
    // given a bucket without the object
    let fx = Fixture::new().await;

    // when a job is started on it
    let err = fx
        .textract
        .start_document_text_detection()
        .document_location(fx.location("nothing-here.pdf"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();

    // then it is refused at once with InvalidS3ObjectException
    assert!(err.is_invalid_s3_object_exception(), "{}", code(&err));
}

#[tokio::test]
async fn paging_with_small_max_results_returns_every_block_exactly_once() {
    // given a finished job on a two-page PDF
    let fx = Fixture::new().await;
    fx.put("invoice.pdf", pdf(&[INVOICE_PAGE, SECOND_PAGE]))
        .await;
    let job_id = fx.start("invoice.pdf", None).await;
    let unpaged = fx.finished(&job_id).await;
    assert_eq!(unpaged.job_status(), Some(&JobStatus::Succeeded));
    assert!(unpaged.next_token().is_none());

    // when its blocks are fetched five at a time
    let (paged, calls) = fx.blocks_paged(&job_id, 5).await;

    // then every block comes exactly once, in the same order as in one unpaged fetch,
    // and every CHILD id refers to a block of the job
    let ids: Vec<&str> = paged.iter().map(|b| b.id().unwrap()).collect();
    let expected: Vec<&str> = unpaged.blocks().iter().map(|b| b.id().unwrap()).collect();
    assert_eq!(ids, expected);
    let unique: HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "duplicate block ids");
    assert_eq!(calls, ids.len().div_ceil(5));
    assert!(
        ids.len() > 5,
        "too few blocks to exercise paging: {}",
        ids.len()
    );
    for block in &paged {
        for child in children(block) {
            assert!(unique.contains(child), "dangling CHILD id {child}");
        }
    }
    let lines = paged
        .iter()
        .filter(|b| b.block_type() == Some(&BlockType::Line));
    assert!(lines.clone().count() >= 5);
    assert!(lines.clone().all(|l| !children(l).is_empty()));
}

#[tokio::test]
async fn unknown_job_id_is_an_invalid_job_id() {
    // given a job id nobody issued
    let fx = Fixture::new().await;

    // when its result is asked for
    let err = fx
        .textract
        .get_document_text_detection()
        .job_id("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
        .send()
        .await
        .unwrap_err()
        .into_service_error();

    // then the request is refused with InvalidJobIdException
    assert!(err.is_invalid_job_id_exception(), "{}", code(&err));
}
