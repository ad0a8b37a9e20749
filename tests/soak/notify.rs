//! A lost OCR completion notification (issue 13): with SNS refusing every publish, Textract's
//! notification of the job's end never reaches ocr-notified; the run's OCR wait runs into its
//! deadline (`ocrWaitSeconds`: 60 s in the tests' deploy) and the workflow polls the job by the
//! id the ledger holds. The run completes, with its one job and one OCR completion.

use docket_core::ids::{sha256_hex, RunId};
use docket_core::model::step::Step;
use docket_e2e::reviewers::wait_for_status;
use docket_e2e::util;
use serde_json::json;

use crate::faults::{assert_each_fired, FaultsOn};
use crate::{drop_invoices, duplicates, patient_stack, settle, Read, RUN_DEADLINE};

#[tokio::test]
async fn a_run_whose_ocr_notification_is_lost_polls_its_job_after_the_wait_and_completes() {
    // given SNS refusing every publish (Textract's completion notifications included)
    let stack = patient_stack().await;
    let rules = json!([
        {"service": "sns", "operation": "Publish", "region": "us-east-1", "probability": 1.0,
         "error": {"statusCode": 400, "code": "KMSThrottlingException"}}
    ]);
    let on = FaultsOn::on(&stack, rules, None).await;

    // when a document is dropped, and its run completes
    let (_, documents) = drop_invoices(&stack, 1, Read::AsJobs).await;
    let document = &documents[0];
    let run = wait_for_status(&stack, document, "completed").await;
    let fired = on.chaos_fired();
    on.off().await;

    // then the notification was refused, and the run got its OCR by the poll after the wait
    assert_each_fired("Chaos-API", &["sns KMSThrottlingException".into()], &fired);
    assert_eq!(stack.wait_for_execution(&run).await, "SUCCEEDED");
    let entered: Vec<String> = stack
        .history(&run)
        .await
        .iter()
        .filter_map(|e| e.state_entered_event_details())
        .map(|d| d.name().to_string())
        .collect();
    assert_eq!(
        entered[..3],
        ["StartOcr", "OcrNotNotified", "PollOcr"],
        "{entered:?}"
    );
    assert!(
        entered.ends_with(&["Validate", "Route"].map(String::from)),
        "{entered:?}"
    );
    // with one Textract job, and every effect once
    let op = Step::Ocr.operation(&RunId::parse(&run).unwrap());
    let subject = sha256_hex(op.as_str().as_bytes());
    let starts = util::wire_requests("textract", "StartDocumentTextDetection", &subject).await;
    assert_eq!(starts.len(), 1, "one Textract job: {starts:#?}");
    let outcomes = settle(&stack, &documents, RUN_DEADLINE).await;
    let problems = duplicates(&stack, &outcomes[0]).await;
    assert!(problems.is_empty(), "{problems:#?}");
}
