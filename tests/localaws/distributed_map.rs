//! A Distributed Map as bulk reprocessing needs it (issue 12): community LocalStack refuses or
//! ignores most of it; our extension emulates it (infra/localstack/docket_localstack/sfn_map_*.py).
//!
//! The state machines are the test's own, with children of Choice/Pass/Fail states only, so the
//! counts are those of the Map itself: items read from a JSON Lines object in S3, batches, the
//! tolerated failure threshold, and the result files a `ResultWriter` leaves in S3.

use std::time::{Duration, Instant};

use aws_sdk_sfn::operation::describe_execution::DescribeExecutionOutput;
use aws_sdk_sfn::types::ExecutionStatus;
use docket_e2e::resource;
use docket_e2e::util;
use serde_json::{json, Value};

/// Describes the execution until it is no longer RUNNING (`within` at most).
async fn wait_done(
    sfn: &aws_sdk_sfn::Client,
    arn: &str,
    within: Duration,
) -> DescribeExecutionOutput {
    let deadline = Instant::now() + within;
    loop {
        let described = sfn
            .describe_execution()
            .execution_arn(arn)
            .send()
            .await
            .expect("describe execution");
        if *described.status() != ExecutionStatus::Running || Instant::now() > deadline {
            return described;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A Distributed Map over the JSON Lines object `manifest.jsonl` of `bucket`, writing its results
/// under `results/`; each child fails when its first document is "broken". `extra` adds fields
/// to the Map state.
fn reprocess(bucket: &str, extra: Value) -> Value {
    let mut map = json!({
        "Type": "Map",
        "ItemReader": {
            "Resource": "arn:aws:states:::s3:getObject",
            "ReaderConfig": {"InputType": "JSONL"},
            "Parameters": {"Bucket": bucket, "Key": "manifest.jsonl"},
        },
        "ItemProcessor": {
            "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"},
            "StartAt": "Check",
            "States": {
                "Check": {
                    "Type": "Choice",
                    "Choices": [{"Variable": "$.Items[0].doc", "StringEquals": "broken", "Next": "Broken"}],
                    "Default": "Fine",
                },
                "Broken": {"Type": "Fail", "Error": "Doc.Broken", "Cause": "a broken document"},
                "Fine": {"Type": "Pass", "End": true},
            },
        },
        "ResultWriter": {
            "Resource": "arn:aws:states:::s3:putObject",
            "Parameters": {"Bucket": bucket, "Prefix": "results"},
        },
        "End": true,
    });
    for (key, value) in extra.as_object().expect("fields") {
        map[key] = value.clone();
    }
    json!({"StartAt": "Reprocess", "States": {"Reprocess": map}})
}

async fn put(s3: &aws_sdk_s3::Client, bucket: &str, key: &str, body: Vec<u8>) {
    s3.put_object()
        .bucket(bucket)
        .key(key)
        .body(body.into())
        .send()
        .await
        .unwrap_or_else(|e| panic!("put {key}: {e:?}"));
}

async fn get_json(s3: &aws_sdk_s3::Client, bucket: &str, key: &str) -> (Value, usize) {
    let body = s3
        .get_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .unwrap_or_else(|e| panic!("get {key}: {e:?}"))
        .body
        .collect()
        .await
        .expect("body")
        .into_bytes();
    (serde_json::from_slice(&body).expect("JSON"), body.len())
}

/// `n` documents as JSON Lines; document `broken_at` (if any) is "broken".
fn manifest(n: usize, broken_at: Option<usize>) -> Vec<u8> {
    (0..n)
        .map(|i| {
            let doc = if Some(i) == broken_at {
                "broken".to_string()
            } else {
                format!("doc-{i}")
            };
            format!("{}\n", json!({ "doc": doc }))
        })
        .collect::<String>()
        .into_bytes()
}

async fn run(
    sfn: &aws_sdk_sfn::Client,
    machine_arn: &str,
    within: Duration,
) -> DescribeExecutionOutput {
    let started = sfn
        .start_execution()
        .state_machine_arn(machine_arn)
        .name(util::unique("reprocess"))
        .input(json!({"reprocessId": "rp-1"}).to_string())
        .send()
        .await
        .expect("start execution");
    wait_done(sfn, started.execution_arn(), within).await
}

#[tokio::test]
async fn a_batched_map_reads_json_lines_tolerates_its_threshold_and_writes_results_by_status() {
    // Given 1,100 documents as JSON Lines, the one at 500 broken, batched by 100 (so the broken
    // one's batch, 100 documents, fails: 9.1% of them)
    let config = util::aws().await;
    let sfn = aws_sdk_sfn::Client::new(&config);
    let s3 = util::s3(&config);
    let bucket = resource::bucket(&config, "dmap").await;
    put(&s3, &bucket, "manifest.jsonl", manifest(1100, Some(500))).await;
    let batched = json!({
        "ItemBatcher": {"MaxItemsPerBatch": 100, "BatchInput": {"reprocessId.$": "$.reprocessId"}},
        "ToleratedFailurePercentage": 10,
    });
    let (_m, tolerant) =
        resource::state_machine(&config, "dmap", &reprocess(&bucket, batched)).await;

    // When it runs with 10% tolerated
    let done = run(&sfn, &tolerant, Duration::from_secs(60)).await;

    // Then it succeeds and its results name 10 succeeded batches and the failed one
    assert_eq!(*done.status(), ExecutionStatus::Succeeded, "{done:?}");
    let output: Value = serde_json::from_str(done.output().unwrap_or("null")).unwrap();
    let key = output["ResultWriterDetails"]["Key"]
        .as_str()
        .expect("a manifest key");
    let (manifest, _) = get_json(&s3, &bucket, key).await;
    let files = &manifest["ResultFiles"];
    let (succeeded, size) =
        get_json(&s3, &bucket, files["SUCCEEDED"][0]["Key"].as_str().unwrap()).await;
    assert_eq!(files["SUCCEEDED"][0]["Size"], json!(size));
    let (failed, _) = get_json(&s3, &bucket, files["FAILED"][0]["Key"].as_str().unwrap()).await;
    let succeeded = succeeded.as_array().expect("records");
    assert_eq!(succeeded.len(), 10);
    let documents: usize = succeeded
        .iter()
        .map(|r| {
            let input: Value = serde_json::from_str(r["Input"].as_str().unwrap()).unwrap();
            assert_eq!(input["BatchInput"], json!({"reprocessId": "rp-1"}));
            input["Items"].as_array().unwrap().len()
        })
        .sum();
    assert_eq!(documents, 1000);
    let failed = failed.as_array().expect("records");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["Error"], json!("Doc.Broken"));
    let input: Value = serde_json::from_str(failed[0]["Input"].as_str().unwrap()).unwrap();
    assert_eq!(input["Items"][0]["doc"], json!("broken"));

    // And with 5% tolerated (an integer, which LocalStack's grammar alone refuses) it fails
    let strict = json!({
        "ItemBatcher": {"MaxItemsPerBatch": 100},
        "ToleratedFailurePercentage": 5,
    });
    let (_s, strict) = resource::state_machine(&config, "dmap", &reprocess(&bucket, strict)).await;
    let done = run(&sfn, &strict, Duration::from_secs(60)).await;
    assert_eq!(*done.status(), ExecutionStatus::Failed, "{done:?}");
    assert_eq!(done.error(), Some("States.ExceedToleratedFailureThreshold"));
}

#[tokio::test]
async fn a_map_of_more_items_than_a_worker_could_recurse_through_ends_with_every_result() {
    // Given 1,100 documents processed one at a time (one worker takes them all)
    let config = util::aws().await;
    let sfn = aws_sdk_sfn::Client::new(&config);
    let s3 = util::s3(&config);
    let bucket = resource::bucket(&config, "dmap").await;
    put(&s3, &bucket, "manifest.jsonl", manifest(1100, None)).await;
    let mut definition = reprocess(&bucket, json!({"MaxConcurrency": 1}));
    definition["States"]["Reprocess"]["ItemProcessor"]["States"]["Check"]["Choices"][0]
        ["Variable"] = json!("$.doc");

    // When it runs
    let (_m, machine) = resource::state_machine(&config, "dmap", &definition).await;
    let done = run(&sfn, &machine, Duration::from_secs(120)).await;

    // Then it ends (LocalStack alone stays RUNNING past ~990 items) with 1,100 results
    assert_eq!(*done.status(), ExecutionStatus::Succeeded, "{done:?}");
    let output: Value = serde_json::from_str(done.output().unwrap_or("null")).unwrap();
    let key = output["ResultWriterDetails"]["Key"]
        .as_str()
        .expect("a manifest key");
    let (manifest, _) = get_json(&s3, &bucket, key).await;
    let (succeeded, _) = get_json(
        &s3,
        &bucket,
        manifest["ResultFiles"]["SUCCEEDED"][0]["Key"]
            .as_str()
            .unwrap(),
    )
    .await;
    assert_eq!(succeeded.as_array().map(Vec::len), Some(1100));
    assert_eq!(manifest["ResultFiles"]["FAILED"], json!([]));
}
