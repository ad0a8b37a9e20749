//! At-least-once delivery: the same S3 event delivered again (and concurrently) must not make a
//! second execution, result or audit entry.

use aws_sdk_dynamodb::types::AttributeValue;
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack, COMPLETED_RUN_ACTIONS};
use serde_json::Value;

use crate::lost_ack::count_actions;

/// The EventBridge event of `tests/fixtures/s3-object-created.json`, aimed at an upload.
fn event_for(stack: &Stack, key: &str, version: &str) -> Value {
    let text = include_str!("../fixtures/s3-object-created.json");
    let mut event: Value = serde_json::from_str(text).unwrap();
    // The fixture round-trips: what we parse is what AWS sends.
    assert_eq!(
        serde_json::from_str::<Value>(&event.to_string()).unwrap(),
        event
    );
    event["detail"]["bucket"]["name"] = stack.out("RawBucket").into();
    event["detail"]["object"]["key"] = key.into();
    event["detail"]["object"]["version-id"] = version.into();
    event
}

async fn deliver(stack: &Stack, event: &Value) -> Value {
    let answer = stack.invoke("IngestFunctionName", event).await;
    answer.unwrap_or_else(|e| panic!("ingest failed: {e}"))
}

#[tokio::test]
async fn the_same_event_three_times_twice_concurrently_makes_one_execution_and_one_result() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let key = format!("inbox/{tenant}/dup.pdf");
    let document = Stack::document_id(&tenant, "dup.pdf");
    let version = stack
        .upload(
            &key,
            invoice_pdf(&invoice_lines("INV-2026-0042", "1,234.50")),
        )
        .await;
    let event = event_for(&stack, &key, &version);

    let first = deliver(&stack, &event).await;
    let (second, third) = tokio::join!(deliver(&stack, &event), deliver(&stack, &event));
    let runs = stack.wait_for_runs(&document, 1).await;

    assert_eq!(runs.len(), 1, "one run record");
    let run_id = s(&runs[0], "runId");
    for answer in [&first, &second, &third] {
        assert_eq!(answer["outcome"], "started", "{answer}");
        assert_eq!(answer["run_id"], run_id.as_str(), "{answer}");
    }
    assert_eq!(
        stack.executions_of(&document).await,
        [run_id.as_str()],
        "one execution of the document"
    );
    // The result key is one per run, so a second write is only seen as a second version (the
    // derived bucket is versioned, and `versions` checks it is).
    // The last action of a completed run: its event, published after the completion.
    let chain = stack.wait_for_action(&document, "event.published").await;
    let run = &stack.runs(&document).await[0];
    let Some(AttributeValue::M(outputs)) = run.get("outputs") else {
        panic!("a completed run without outputs: {run:?}");
    };
    let pointer = outputs["result"].as_s().unwrap();
    let key = pointer
        .strip_prefix(&format!("s3://{}/", stack.out("DerivedBucket")))
        .unwrap_or_else(|| panic!("{pointer} is not in the derived bucket"));
    let versions = stack.versions(stack.out("DerivedBucket"), key).await;
    assert_eq!(versions.len(), 1, "one result write: {versions:?}");
    for action in COMPLETED_RUN_ACTIONS {
        assert_eq!(
            count_actions(&chain, action),
            1,
            "one {action} in the audit log"
        );
    }
}
