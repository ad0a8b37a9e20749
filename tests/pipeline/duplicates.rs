//! At-least-once delivery: the same S3 event delivered again (and concurrently) must not make a
//! second execution, result or audit entry.

use aws_sdk_lambda::primitives::Blob;
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};
use serde_json::Value;

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
    let out = stack
        .lambda
        .invoke()
        .function_name(stack.out("IngestFunctionName"))
        .payload(Blob::new(event.to_string()))
        .send()
        .await
        .expect("invoke ingest");
    assert!(out.function_error().is_none(), "{:?}", out.payload());
    serde_json::from_slice(out.payload().unwrap().as_ref()).unwrap()
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
    let ours = stack.executions_named(&run_id).await;
    assert_eq!(ours, 1, "one execution");
    let derived = stack
        .keys(stack.out("DerivedBucket"), &format!("{tenant}/{document}/"))
        .await;
    assert_eq!(
        derived
            .iter()
            .filter(|k| k.ends_with("result.json"))
            .count(),
        1
    );
    let chain = stack.wait_for_action(&document, "run.completed").await;
    let accepted = chain
        .iter()
        .filter(|e| e.draft.action == "document.accepted")
        .count();
    assert_eq!(accepted, 1, "one acceptance in the audit log");
}
