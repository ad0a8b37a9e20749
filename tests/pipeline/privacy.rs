//! Document content stays out of execution history and logs: a canary printed in a document is
//! read by OCR (it is in the normalized OCR) but appears in no history event and no log line.

use std::time::Duration;

use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};

/// A word and a number that OCR reads back exactly (random letters it does not: it has no
/// dictionary to lean on), unique per run.
fn canary() -> String {
    const WORDS: [&str; 5] = ["PELICAN", "MARMALADE", "ZANZIBAR", "QUOKKA", "HALIBUT"];
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{} {}",
        WORDS[nanos as usize % WORDS.len()],
        10000 + nanos % 90000
    )
}

/// Every message of every docket log group in CloudWatch Logs.
pub(crate) async fn all_log_messages(stack: &Stack) -> Vec<(String, String)> {
    let mut messages = Vec::new();
    let groups = stack.logs.describe_log_groups().send().await.unwrap();
    for group in groups.log_groups() {
        let name = group.log_group_name().unwrap_or_default();
        if !name.contains("docket") {
            continue;
        }
        let mut next = None;
        loop {
            let out = stack
                .logs
                .filter_log_events()
                .log_group_name(name)
                .set_next_token(next)
                .send()
                .await
                .unwrap();
            for event in out.events() {
                let message = event.message().unwrap_or_default().to_string();
                messages.push((name.to_string(), message));
            }
            next = out.next_token().map(str::to_string);
            if next.is_none() {
                break;
            }
        }
    }
    messages
}

#[tokio::test]
async fn a_canary_printed_in_a_document_appears_in_no_history_and_no_log() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let canary = canary();
    let mut lines = invoice_lines("INV-2026-0042", "1,234.50");
    lines.insert(1, format!("Reference {canary}"));
    let document = Stack::document_id(&tenant, "canary.pdf");
    stack
        .upload(&format!("inbox/{tenant}/canary.pdf"), invoice_pdf(&lines))
        .await;

    let runs = stack.wait_for_runs(&document, 1).await;
    let run_id = s(&runs[0], "runId");
    stack.wait_for_execution(&run_id).await;
    let ocr_key = format!("{tenant}/{document}/{run_id}/ocr.json");
    let ocr = stack
        .json(&format!("s3://{}/{ocr_key}", stack.out("NormalizedBucket")))
        .await;
    let history = format!("{:?}", stack.history(&run_id).await);
    // Logs reach CloudWatch asynchronously; give them a moment.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let logs = all_log_messages(&stack).await;

    assert!(
        ocr.to_string().contains(&canary),
        "the canary must be read by OCR, or this test proves nothing"
    );
    assert!(!history.contains(&canary), "canary in execution history");
    assert!(
        !logs.is_empty(),
        "no log lines were read: the check proves nothing"
    );
    for (group, message) in &logs {
        assert!(!message.contains(&canary), "canary in {group}: {message}");
    }
    // Every JSON line of the steps' functions (this run's and any other's) names the document,
    // the run and the operation.
    let step_lines: Vec<serde_json::Value> = logs
        .iter()
        .filter(|(group, _)| {
            ["-ocr", "-validate", "-route", "-review-callback"]
                .iter()
                .any(|f| group.ends_with(f))
        })
        .filter_map(|(_, message)| serde_json::from_str::<serde_json::Value>(message).ok())
        // The one line a function logs at init, before any step, when it runs with SDK fault
        // injection (the soak's configuration): no document exists then. A local stack keeps
        // those lines, so a later `make test` on it reads them.
        .filter(|line| line["fields"]["message"] != docket_aws::faults::ENABLED_LINE)
        .collect();
    let ours = step_lines
        .iter()
        .filter(|l| l["span"]["runId"] == run_id.as_str())
        .count();
    assert!(ours >= 2, "no step log lines of this run: {step_lines:?}");
    for line in &step_lines {
        for field in ["documentId", "runId", "operationId"] {
            let value = line["span"][field].as_str().unwrap_or_default();
            assert!(!value.is_empty(), "{field} missing: {line}");
        }
    }
}
