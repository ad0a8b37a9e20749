//! Our local Textract enforces AWS's quotas (infra/localstack/docket_localstack/
//! textract_quota.py): calls per second per operation, refused with
//! ProvisionedThroughputExceededException, and asynchronous jobs at once, refused with
//! LimitExceededException. Each test lowers the quotas of a region of its own and counts at the
//! wire what the client was answered against what the provider says it refused. The last one
//! reads a job of several answers through docket's admission: each answer in its own turn.

use std::time::{Duration, Instant};

use aws_sdk_textract::error::ProvideErrorMetadata;
use aws_sdk_textract::types::{DocumentLocation, JobStatus, S3Object};
use reqwest::Method;
use serde_json::{json, Value};

use docket_aws::admission::SystemTimer;
use docket_aws::textract::TextractOcr;
use docket_core::admission::{Quotas, DEFAULT_ARRIVAL_JITTER_MS};
use docket_core::admitted::{AdmittedOcr, Rules};
use docket_core::ids::{sha256_hex, OperationId, Tenant};
use docket_core::memory::{test_run, MemoryAdmission};
use docket_core::model::run::ObjectRef;
use docket_core::ports::{Admission, Ocr, OcrPoll, Unpaced};
use docket_e2e::render::pdf;
use docket_e2e::resource;
use docket_e2e::util;

/// A Textract client that does not retry, so each refusal reaches the test.
async fn textract_without_retries(region: &str) -> aws_sdk_textract::Client {
    let config = util::aws_in(region).await;
    aws_sdk_textract::Client::from_conf(
        aws_sdk_textract::config::Builder::from(&config)
            .retry_config(aws_sdk_textract::config::retry::RetryConfig::disabled())
            .build(),
    )
}

/// What the provider saw in `region`: `seen.<region>.<path...>` as a number (0 if absent).
fn seen(view: &Value, region: &str, path: &[&str]) -> u64 {
    let mut v = &view["seen"][region];
    for p in path {
        v = &v[*p];
    }
    v.as_u64().unwrap_or(0)
}

#[tokio::test]
async fn calls_past_an_operations_calls_per_second_are_refused_as_aws_refuses_them() {
    const REGION: &str = "ca-central-1";
    const OP: &str = "GetDocumentTextDetection";
    const CALLS: usize = 12;
    let textract = textract_without_retries(REGION).await;
    util::textract_quotas(Method::POST, &json!({"region": REGION, "tps": {OP: 2}})).await;
    let before = util::textract_quotas(Method::GET, &Value::Null).await;

    // Twelve calls at once; an admitted call asks for a job that does not exist.
    let started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..CALLS {
        let textract = textract.clone();
        calls.spawn(async move {
            let err = textract
                .get_document_text_detection()
                .job_id(format!("{i:064x}"))
                .send()
                .await
                .expect_err("no such job");
            let status = err.raw_response().map(|r| r.status().as_u16());
            (err.code().unwrap_or("?").to_string(), status)
        });
    }
    let answers = calls.join_all().await;
    let elapsed = started.elapsed();

    let count = |code: &str| answers.iter().filter(|(c, _)| c == code).count();
    let (admitted, refused) = (
        count("InvalidJobIdException"),
        count("ProvisionedThroughputExceededException"),
    );
    assert_eq!(admitted + refused, CALLS, "other answers: {answers:?}");
    assert!(
        refused >= 1,
        "12 calls at 2 per second, none refused in {elapsed:?}"
    );
    // No second admitted more than two calls.
    let seconds = elapsed.as_secs_f64().ceil() as usize + 1;
    assert!(
        admitted <= 2 * seconds,
        "{admitted} admitted in {elapsed:?}"
    );
    assert!(answers
        .iter()
        .filter(|(c, _)| c == "ProvisionedThroughputExceededException")
        .all(|(_, status)| *status == Some(400)));

    // The provider counted what the client was answered.
    let after = util::textract_quotas(Method::GET, &Value::Null).await;
    let delta = |path: &[&str]| seen(&after, REGION, path) - seen(&before, REGION, path);
    assert_eq!(delta(&["admitted", OP]) as usize, admitted);
    assert_eq!(
        delta(&["refused", OP, "ProvisionedThroughputExceededException"]) as usize,
        refused
    );
}

#[tokio::test]
async fn a_start_past_the_jobs_that_may_run_at_once_is_refused_until_one_ends() {
    const REGION: &str = "sa-east-1";
    let textract = textract_without_retries(REGION).await;
    // The document in the default region (an S3 bucket outside us-east-1 needs a location
    // constraint); the quota is the Textract region's.
    let config = util::aws().await;
    let bucket = resource::bucket(&config, "textract-quota").await;
    // Three pages: each job takes Tesseract a few seconds, long enough to start the others.
    let page: &[&str] = &["INVOICE", "Number INV-2026-0042", "Total 1234.56 EUR"];
    util::s3(&config)
        .put_object()
        .bucket(&bucket)
        .key("three-pages.pdf")
        .body(pdf(&[page, page, page]).into())
        .send()
        .await
        .unwrap();
    util::textract_quotas(Method::POST, &json!({"region": REGION, "maxJobs": 2})).await;
    let before = util::textract_quotas(Method::GET, &Value::Null).await;
    let start = || {
        textract
            .start_document_text_detection()
            .document_location(
                DocumentLocation::builder()
                    .s3_object(
                        S3Object::builder()
                            .bucket(&bucket)
                            .name("three-pages.pdf")
                            .build(),
                    )
                    .build(),
            )
            .send()
    };

    let first = start()
        .await
        .expect("first job")
        .job_id()
        .unwrap()
        .to_string();
    let second = start()
        .await
        .expect("second job")
        .job_id()
        .unwrap()
        .to_string();
    let err = start().await.expect_err("a third job while two run");
    assert_eq!(err.code(), Some("LimitExceededException"));
    assert_eq!(err.raw_response().map(|r| r.status().as_u16()), Some(400));
    let running = util::textract_quotas(Method::GET, &Value::Null).await;
    assert_eq!(seen(&running, REGION, &["jobsRunning"]), 2);

    // Once both have ended, a start is admitted again.
    for job in [&first, &second] {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let out = textract
                .get_document_text_detection()
                .job_id(job.as_str())
                .send()
                .await
                .unwrap();
            if out.job_status() != Some(&JobStatus::InProgress) {
                assert_eq!(out.job_status(), Some(&JobStatus::Succeeded));
                break;
            }
            assert!(Instant::now() < deadline, "job {job} did not end");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    start().await.expect("a job once the others ended");

    let after = util::textract_quotas(Method::GET, &Value::Null).await;
    let refused = &[
        "refused",
        "StartDocumentTextDetection",
        "LimitExceededException",
    ];
    assert_eq!(
        seen(&after, REGION, refused) - seen(&before, REGION, refused),
        1
    );
    assert_eq!(seen(&after, REGION, &["peakJobs"]), 2);
}

#[tokio::test]
async fn a_long_jobs_answers_are_fetched_each_in_its_turn_and_none_is_refused() {
    const REGION: &str = "ap-south-1";
    const OP: &str = "GetDocumentTextDetection";
    let config = util::aws().await;
    let bucket = resource::bucket(&config, "textract-answers").await;
    // Sixteen pages of nineteen lines of six words: about 2,150 blocks, three answers of at
    // most 1,000 (the most a caller may ask for at once).
    let page: &[&str] = &["alpha bravo charlie delta echo foxtrot"; 19];
    util::s3(&config)
        .put_object()
        .bucket(&bucket)
        .key("sixteen-pages.pdf")
        .body(pdf(&[page; 16]).into())
        .send()
        .await
        .unwrap();
    util::textract_quotas(Method::POST, &json!({"region": REGION, "tps": {OP: 1}})).await;
    let before = util::textract_quotas(Method::GET, &Value::Null).await;
    // docket's admission with the same quota recorded (in memory: the pacing is what is shown).
    let admission = MemoryAdmission::default();
    let quotas = Quotas {
        tps: [(OP.to_string(), 1)].into(),
        max_jobs: 5,
        arrival_jitter_ms: DEFAULT_ARRIVAL_JITTER_MS,
    };
    admission.set_quotas("textract", &quotas).await.unwrap();
    let provider = TextractOcr::new(&util::aws_in(REGION).await);
    let ocr = AdmittedOcr::new(provider, admission, SystemTimer, Rules::textract());
    // The bucket's name is new each run, and so is the operation id (the job's token).
    let key = format!("{bucket}/sixteen-pages.pdf");
    let run = test_run(&Tenant::parse("acme").unwrap(), &key, "v1");
    let op = OperationId::new(&run, "ocr", None);
    let document = ObjectRef::new(&bucket, "sixteen-pages.pdf");

    let job = ocr.start(&op, &document, "answers").await.expect("job");
    let deadline = Instant::now() + Duration::from_secs(300);
    let read = loop {
        match ocr.poll(&op, &job, 100, &Unpaced).await.expect("poll") {
            OcrPoll::InProgress => {
                assert!(Instant::now() < deadline, "job {job} did not end");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            OcrPoll::Succeeded(read) => break read,
            failed => panic!("job {job}: {failed:?}"),
        }
    };

    assert_eq!(read.pages.len(), 16);
    let words = read.lines().map(|l| l.words.len()).sum::<usize>();
    assert!(
        words > 1_000,
        "{words} words: fewer than one answer's blocks"
    );
    let calls = util::wire_requests("textract", OP, &sha256_hex(job.as_bytes())).await;
    let refused: Vec<_> = calls.iter().filter(|c| c["status"] != 200).collect();
    assert!(refused.is_empty(), "{refused:?}");
    // Every poll that found the job running was one call; the last one three.
    let polls_running = calls.len() - 3;
    assert!(calls.len() >= 3, "{calls:?}");
    let at: Vec<i64> = calls.iter().filter_map(|c| c["atMs"].as_i64()).collect();
    let last_three = &at[polls_running..];
    assert!(
        last_three.windows(2).all(|w| w[1] - w[0] >= 900),
        "the answers came {last_three:?}"
    );
    let after = util::textract_quotas(Method::GET, &Value::Null).await;
    let refused = &["refused", OP, "ProvisionedThroughputExceededException"];
    assert_eq!(
        seen(&after, REGION, refused) - seen(&before, REGION, refused),
        0
    );
}
