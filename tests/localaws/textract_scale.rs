//! Scale runs of our local Textract (infra/localstack/docket_localstack/textract_scale.py): OCR
//! served from a content-hash cache, and a simulated duration per page. The settings are the
//! LocalStack's, not a region's: the test turns them on for a short while and back off (other
//! Textract tests meanwhile read the same words from the cache, a page a little later).

use std::time::{Duration, Instant};

use aws_sdk_textract::types::{BlockType, Document, DocumentLocation, JobStatus, S3Object};
use reqwest::Method;
use serde_json::{json, Value};

use docket_e2e::render::pdf;
use docket_e2e::resource;
use docket_e2e::util;

const SECONDS_PER_PAGE: f64 = 2.0;

async fn scale(method: Method, body: &Value) -> Value {
    let mut request = reqwest::Client::new().request(
        method,
        format!("{}/_docket/textract/scale", util::endpoint()),
    );
    if !body.is_null() {
        request = request.json(body);
    }
    let response = request.send().await.expect("textract scale reachable");
    assert!(response.status().is_success(), "{:?}", response.status());
    response.json().await.expect("JSON")
}

fn lines(blocks: &[aws_sdk_textract::types::Block]) -> Vec<String> {
    blocks
        .iter()
        .filter(|b| b.block_type() == Some(&BlockType::Line))
        .filter_map(|b| b.text().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn a_document_read_once_is_served_from_the_cache_no_sooner_than_its_simulated_duration() {
    let config = util::aws().await;
    let textract = aws_sdk_textract::Client::new(&config);
    let bucket = resource::bucket(&config, "textract-scale").await;
    // A page no other test has: its first read is a miss.
    let marker = format!("Scale run {}", util::unique("page"));
    let page: &[&str] = &["INVOICE", &marker, "Total 1234.56 EUR"];
    util::s3(&config)
        .put_object()
        .bucket(&bucket)
        .key("page.pdf")
        .body(pdf(&[page]).into())
        .send()
        .await
        .unwrap();
    let object = S3Object::builder().bucket(&bucket).name("page.pdf").build();

    scale(
        Method::POST,
        &json!({"cache": true, "secondsPerPage": SECONDS_PER_PAGE}),
    )
    .await;
    let before = scale(Method::GET, &Value::Null).await;
    let outcome = async {
        // Read synchronously: OCR, stored; the answer comes no sooner than a page's duration.
        let started = Instant::now();
        let sync = textract
            .detect_document_text()
            .document(Document::builder().s3_object(object.clone()).build())
            .send()
            .await
            .expect("detect");
        let sync_took = started.elapsed();
        let after_sync = scale(Method::GET, &Value::Null).await;

        // The same bytes as a job: from the cache, ending after the page's duration.
        let started = Instant::now();
        let job = textract
            .start_document_text_detection()
            .document_location(DocumentLocation::builder().s3_object(object).build())
            .send()
            .await
            .expect("start")
            .job_id()
            .unwrap()
            .to_string();
        let result = loop {
            let out = textract
                .get_document_text_detection()
                .job_id(&job)
                .send()
                .await
                .unwrap();
            if out.job_status() != Some(&JobStatus::InProgress) {
                break out;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "job did not end"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let job_took = started.elapsed();
        let after_job = scale(Method::GET, &Value::Null).await;
        (sync, sync_took, after_sync, result, job_took, after_job)
    }
    .await;
    scale(
        Method::POST,
        &json!({"cache": false, "secondsPerPage": null}),
    )
    .await;
    let (sync, sync_took, after_sync, result, job_took, after_job) = outcome;

    let count = |v: &Value, k: &str| v[k].as_u64().unwrap();
    assert!(
        count(&after_sync, "misses") > count(&before, "misses"),
        "the first read missed"
    );
    assert!(
        count(&after_job, "hits") > count(&after_sync, "hits"),
        "the job was a hit"
    );
    assert!(
        sync_took >= Duration::from_secs_f64(SECONDS_PER_PAGE),
        "{sync_took:?}"
    );
    assert!(
        job_took >= Duration::from_secs_f64(SECONDS_PER_PAGE),
        "{job_took:?}"
    );
    assert_eq!(result.job_status(), Some(&JobStatus::Succeeded));
    assert_eq!(lines(result.blocks()), lines(sync.blocks()));
    assert!(lines(sync.blocks()).iter().any(|l| l.contains("Scale run")));
}
