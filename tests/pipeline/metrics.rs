//! The functions' business metrics, as CloudWatch embedded-metric (EMF) lines in their local
//! logs: one per outcome, in the stack's namespace, per tenant, with the run's ids; and a
//! business outcome never moves the technical-failure metric (the redrive soak shows that a
//! technical failure does).

use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};
use serde_json::{json, Value};

fn one(lines: Vec<Value>, what: &str) -> Value {
    assert_eq!(lines.len(), 1, "{what}: {lines:?}");
    lines.into_iter().next().unwrap()
}

#[tokio::test]
async fn each_outcome_logs_one_metric_line_and_an_invalid_document_no_technical_failure() {
    // given a clean invoice and one without its total, of a fresh tenant
    let stack = Stack::load().await;
    let tenant = tenant();
    let mut invalid = invoice_lines("INV-2026-0044", "10.00");
    invalid.retain(|l| !l.starts_with("Total"));
    let (good, bad) = ("emf-good.pdf", "emf-invalid.pdf");
    let clean = invoice_pdf(&invoice_lines("INV-2026-0042", "1,234.50"));
    stack.upload(&format!("inbox/{tenant}/{good}"), clean).await;
    stack
        .upload(&format!("inbox/{tenant}/{bad}"), invoice_pdf(&invalid))
        .await;

    // when both runs end
    let completed = &stack
        .wait_for_runs(&Stack::document_id(&tenant, good), 1)
        .await[0];
    let refused = &stack
        .wait_for_runs(&Stack::document_id(&tenant, bad), 1)
        .await[0];
    assert_eq!(s(completed, "status"), "completed");
    assert_eq!(s(refused, "status"), "invalid");
    let (good_run, bad_run) = (s(completed, "runId"), s(refused, "runId"));
    assert_eq!(stack.wait_for_execution(&bad_run).await, "SUCCEEDED");

    // then route logged one DocumentsCompleted line for the clean one, ocr its pages, validate
    // one DocumentsInvalid for the other — in the stack's namespace, per tenant, with the ids
    let done = one(
        stack
            .wait_for_emf("RouteFunctionName", "DocumentsCompleted", &good_run)
            .await,
        "DocumentsCompleted",
    );
    let namespace = format!("docket/{}", stack.parameter("Stage").await);
    let emf = &done["_aws"]["CloudWatchMetrics"][0];
    assert_eq!(emf["Namespace"], namespace.as_str());
    assert_eq!(emf["Dimensions"], json!([["Tenant"], []]));
    assert_eq!(emf["Metrics"][0]["Name"], "DocumentsCompleted");
    assert_eq!(done["DocumentsCompleted"], 1.0);
    assert_eq!(done["Tenant"], tenant.as_str());
    assert_eq!(done["documentId"], s(completed, "documentId").as_str());
    assert!(done["operationId"].as_str().unwrap().starts_with("op-"));
    // Pages read are counted where the OCR wait was ended: by ocr-notified (the job's
    // notification), or by ocr itself when the notification came before its Task waited.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let lines = loop {
        let lines = [
            stack
                .emf_lines("OcrNotifiedFunctionName", "OcrPages", &good_run)
                .await,
            stack
                .emf_lines("OcrFunctionName", "OcrPages", &good_run)
                .await,
        ]
        .concat();
        if !lines.is_empty() || std::time::Instant::now() > deadline {
            break lines;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };
    let pages = one(lines, "OcrPages");
    assert_eq!(pages["OcrPages"], 1.0, "one page: {pages}");
    let invalid = one(
        stack
            .wait_for_emf("ValidateFunctionName", "DocumentsInvalid", &bad_run)
            .await,
        "DocumentsInvalid",
    );
    assert_eq!(invalid["Tenant"], tenant.as_str());

    // and no technical failure, of either run, in route's metric lines — which route does
    // write (the completed line above was read from the same group)
    for run in [&good_run, &bad_run] {
        let failures = stack
            .emf_lines("RouteFunctionName", "TechnicalFailures", run)
            .await;
        assert!(failures.is_empty(), "{run}: {failures:?}");
    }
    assert!(stack
        .emf_lines("ValidateFunctionName", "DocumentsToReview", &bad_run)
        .await
        .is_empty());
}

#[tokio::test]
async fn the_sweep_logs_the_age_of_the_oldest_open_review_task() {
    // given a review task pending for at least two seconds
    let stack = Stack::load().await;
    let tenant = tenant();
    let document = Stack::document_id(&tenant, "emf-review.pdf");
    let body = docket_e2e::reviewers::ambiguous_invoice("INV-2026-0045", "10.00");
    stack
        .upload(&format!("inbox/{tenant}/emf-review.pdf"), body)
        .await;
    // (the run awaits review before its task is opened: wait for the task itself)
    stack.wait_for_action(&document, "review.opened").await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let since_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;

    // when route sweeps (as its schedule does every minute; nothing here is old enough to relay)
    let payload = json!({"action": "sweep", "olderThanSeconds": 86400});
    stack
        .invoke("RouteFunctionName", &payload)
        .await
        .unwrap_or_else(|e| panic!("sweep failed: {e}"));

    // then it logged the oldest pending task's age: at least our task's (the oldest is at least
    // as old), stack-wide, with the ids of that task's run
    let group = format!("/aws/lambda/{}", stack.out("RouteFunctionName"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let line = loop {
        let found = stack
            .log_messages(&group, None)
            .await
            .iter()
            .filter_map(|m| serde_json::from_str::<Value>(m).ok())
            .filter(|l| l.get("OldestOpenReviewAge").is_some())
            .find(|l| l["_aws"]["Timestamp"].as_u64() >= Some(since_ms));
        match found {
            Some(line) => break line,
            None if std::time::Instant::now() > deadline => panic!("no OldestOpenReviewAge line"),
            None => tokio::time::sleep(std::time::Duration::from_millis(500)).await,
        }
    };
    let age = line["OldestOpenReviewAge"].as_f64().unwrap();
    assert!(age >= 2.0, "{line}");
    let emf = &line["_aws"]["CloudWatchMetrics"][0];
    assert_eq!(emf["Dimensions"], json!([[]]));
    assert_eq!(emf["Metrics"][0]["Unit"], "Seconds");
    assert!(line["runId"].as_str().unwrap().starts_with('d'), "{line}");
}
