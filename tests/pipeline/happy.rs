//! Generated invoices through the whole pipeline.

use std::time::{Duration, Instant};

use docket_core::ids::{DocumentId, RunId};
use docket_core::model::run::ExecutionInput;
use docket_core::saga::{EventId, EventKind, ReceiptId};
use docket_e2e::reviewers::{docket, Session};
use docket_e2e::stack::{
    invoice_lines, invoice_pdf, invoice_pdf_of_two_pages, s, tenant, text_job_starts_of,
    text_read_times, text_reads_of, Stack,
};
use serde_json::Value;

/// How Textract reads a document.
#[derive(Clone, Copy, PartialEq)]
enum Read {
    /// One page: one synchronous read, no job.
    AtOnce,
    /// A job, whose completion notification ends StartOcr's wait.
    AsJob,
}

/// Runs one upload to its result and checks that the result, the run record, the execution
/// history, the audit trail and Textract's calls at the wire agree.
async fn assert_processed(
    stack: &Stack,
    tenant: &str,
    name: &str,
    body: Vec<u8>,
    read: Read,
) -> DocumentId {
    // No zero-age sweep may publish this run's event again meanwhile (its puts are counted).
    let _quiet = crate::SWEEPS.read().await;
    let document = Stack::document_id(tenant, name);
    let version = stack.upload(&format!("inbox/{tenant}/{name}"), body).await;

    let runs = stack.wait_for_runs(&document, 1).await;

    let run = &runs[0];
    assert_eq!(s(run, "status"), "completed", "{run:?}");
    assert_eq!(s(run, "versionId"), version);
    let run_id = s(run, "runId");
    let result_ptr = run["outputs"].as_m().unwrap()["result"]
        .as_s()
        .unwrap()
        .clone();
    let result = stack.json(&result_ptr).await;
    let fields = &result["fields"];
    assert_eq!(
        fields["invoice_number"]["value"], "INV-2026-0042",
        "{result}"
    );
    assert_eq!(fields["total_amount"]["value"], "1234.50");
    assert_eq!(fields["currency"]["value"], "EUR");
    assert_eq!(fields["invoice_date"]["value"], "2026-11-02");
    assert_eq!(fields["issuer"]["value"], "Northwind Traders Ltd");
    assert_eq!(result["runId"], run_id.as_str());
    assert_eq!(result["source"]["versionId"], version.as_str());

    assert_eq!(stack.wait_for_execution(&run_id).await, "SUCCEEDED");
    let history = stack.history(&run_id).await;
    let entered: Vec<_> = history
        .iter()
        .filter_map(|e| e.state_entered_event_details())
        .map(|d| d.name().to_string())
        .collect();
    assert!(history
        .iter()
        .any(|e| e.r#type().as_str() == "ExecutionSucceeded"));
    // StartOcr's wait ended by its own invocation (one page) or by the job's notification
    // (Textract -> SNS -> ocr-notified): no poll state was entered; validate ended its own Task's wait (no Choice after it); Route
    // waited for the consumer's receipt itself; these three are the document's every
    // transition.
    assert_eq!(entered, ["StartOcr", "Validate", "Route"], "{entered:?}");

    let chain = stack.audit(&document).await;
    let actions: Vec<_> = chain.iter().map(|e| e.draft.action.as_str()).collect();
    let mut expected = vec!["document.accepted"];
    if read == Read::AsJob {
        expected.push("ocr.started");
    }
    expected.extend([
        "ocr.completed",
        "validation.completed",
        "run.completed",
        "event.published",
        "downstream.recorded",
    ]);
    assert_eq!(actions, expected);
    // Textract was asked once, at the wire: one synchronous read of the object, or one job
    // (by the run's OCR operation id) and no read; the completion names the job, if any.
    let key = format!("inbox/{tenant}/{name}");
    let (reads, starts) = (text_reads_of(&key).await, text_job_starts_of(&run_id).await);
    let job = &chain[actions.iter().position(|a| *a == "ocr.completed").unwrap()];
    let job = &job.draft.detail["jobId"];
    match read {
        Read::AtOnce => assert_eq!((reads, starts, job.is_null()), (1, 0, true), "{job}"),
        Read::AsJob => assert_eq!((reads, starts, job.is_string()), (0, 1, true), "{job}"),
    }
    // A one-page read's slot was booked by ingest when it started the execution (in its
    // input), and the read reached Textract no sooner than that slot; a job's start books none.
    let ended = stack
        .ended(&stack.execution_arn(&run_id), Duration::ZERO)
        .await;
    let input: ExecutionInput = serde_json::from_str(ended.input().unwrap_or("{}")).unwrap();
    match (read, input.run.read_at_ms) {
        (Read::AtOnce, Some(booked)) => {
            let at = text_read_times(&key).await;
            assert!(
                at.len() == 1 && at[0] >= booked,
                "read at {at:?}, slot {booked}"
            );
        }
        (Read::AtOnce, None) => panic!("no read slot booked for {run_id}"),
        (Read::AsJob, booked) => assert_eq!(booked, None),
    }
    assert!(chain
        .iter()
        .all(|e| e.draft.run_id.as_ref().map(|r| r.as_str()) == Some(run_id.as_str())));
    let completed = &chain[chain.len() - 3];
    assert_eq!(completed.draft.output_pointers["result"], result_ptr);

    // Route's saga: the result's event was put on the bus once, under its stable id, and the
    // accounts-payable consumer recorded it once.
    let event = EventId::new(&RunId::parse(&run_id).unwrap(), EventKind::Accepted);
    assert_eq!(
        chain.last().unwrap().draft.detail["eventId"],
        event.as_str()
    );
    assert_eq!(stack.event_puts("document.accepted", &event).await, 1);
    let deadline = Instant::now() + Duration::from_secs(60);
    while stack.event_puts("document.recorded", &event).await == 0 {
        assert!(Instant::now() < deadline, "{event} not recorded downstream");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(stack.event_puts("document.recorded", &event).await, 1);
    assert_eq!(stack.event_puts("document.refused", &event).await, 0);

    // `docket show` prints the run's saga journal: its three effects, confirmed with their ids
    // (the receipt the consumer answered ended the run's wait).
    let operator = Session { env: Vec::new() };
    let shown = docket(&operator, &["show", document.as_str()]).await;
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let saga = &shown["runs"][0]["saga"];
    let evidence: Vec<_> = saga["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("no journal shown: {shown}"))
        .iter()
        .map(|e| {
            (
                e["effect"].as_str().unwrap(),
                e["evidence"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        evidence,
        [
            ("result.promoted", "confirmed"),
            ("event.published", "confirmed"),
            ("downstream.recorded", "confirmed")
        ]
    );
    assert_eq!(saga["entries"][1]["ids"]["eventId"], event.as_str());
    assert!(saga["entries"][1]["ids"]["entryId"].is_string(), "{saga}");
    let receipt = ReceiptId::for_event(&event).to_string();
    assert_eq!(
        saga["entries"][2]["ids"]["receiptId"],
        receipt.as_str(),
        "{saga}"
    );
    // and the consumer's answer is the output of the Task that routed and waited for it
    let output = stack.execution_output(&run_id).await;
    assert_eq!(
        output["receipt"],
        serde_json::json!({"status": "recorded", "receiptId": receipt}),
        "{output}"
    );
    let outbox = stack.item("OutboxTable", "eventId", event.as_str()).await;
    assert_eq!(
        s(&outbox.into_iter().collect(), "delivery"),
        "confirmed-delivered"
    );
    document
}

#[tokio::test]
async fn a_generated_pdf_invoice_ends_as_result_json_with_its_fields() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let pdf = invoice_pdf(&invoice_lines("INV-2026-0042", "1,234.50"));

    assert_processed(&stack, &tenant, "2026/invoice-42.pdf", pdf, Read::AtOnce).await;
}

#[tokio::test]
async fn a_two_page_pdf_invoice_is_read_as_a_job_and_ends_as_result_json() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let pdf = invoice_pdf_of_two_pages(&invoice_lines("INV-2026-0042", "1,234.50"));

    assert_processed(
        &stack,
        &tenant,
        "2026/invoice-42-terms.pdf",
        pdf,
        Read::AsJob,
    )
    .await;
}

#[tokio::test]
async fn a_generated_png_invoice_ends_as_result_json_with_its_fields() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let png = docket_e2e::render::png_of(&invoice_pdf(&invoice_lines("INV-2026-0042", "1,234.50")));

    assert_processed(
        &stack,
        &tenant,
        "scans/invoice 42+copy é.png",
        png,
        Read::AtOnce,
    )
    .await;
}

#[tokio::test]
async fn a_new_upload_of_the_same_key_is_a_new_run_and_the_old_outputs_stay() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let document = assert_processed(
        &stack,
        &tenant,
        "inv.pdf",
        invoice_pdf(&invoice_lines("INV-2026-0042", "1,234.50")),
        Read::AtOnce,
    )
    .await;
    let first = stack.runs(&document).await;

    stack
        .upload(
            &format!("inbox/{tenant}/inv.pdf"),
            invoice_pdf(&invoice_lines("INV-2026-0043", "99.00")),
        )
        .await;
    let runs = stack.wait_for_runs(&document, 2).await;

    let first_id = s(&first[0], "runId");
    let second = runs
        .iter()
        .find(|r| s(r, "runId") != first_id)
        .expect("a second run");
    assert_eq!(s(second, "status"), "completed");
    let results = stack
        .keys(stack.out("DerivedBucket"), &format!("{tenant}/{document}/"))
        .await;
    let result_count = results
        .iter()
        .filter(|k| k.ends_with("/result.json"))
        .count();
    assert_eq!(result_count, 2, "both runs' results are kept: {results:?}");
    let current = stack
        .item("DocumentsTable", "documentId", document.as_str())
        .await;
    assert_eq!(current["currentRunId"].as_s().unwrap(), &s(second, "runId"));
}

#[tokio::test]
async fn the_state_machine_definition_is_valid_for_step_functions() {
    let stack = Stack::load().await;
    let definition = include_str!("../../statemachines/document-pipeline.asl.json")
        .replace("${OcrFunctionArn}", stack.out("OcrFunctionArn"))
        .replace("${ValidateFunctionArn}", stack.out("ValidateFunctionArn"))
        .replace("${RouteFunctionArn}", stack.out("RouteFunctionArn"));

    let out = stack
        .sfn
        .validate_state_machine_definition()
        .definition(definition)
        .send()
        .await
        .expect("ValidateStateMachineDefinition");

    assert_eq!(out.result().as_str(), "OK", "{:?}", out.diagnostics());
}

#[tokio::test]
async fn an_invalid_invoice_ends_its_execution_in_success_with_its_business_status() {
    // given an invoice without its total
    let stack = Stack::load().await;
    let tenant = tenant();
    let mut lines = invoice_lines("INV-2026-0043", "10.00");
    lines.retain(|l| !l.starts_with("Total"));
    let name = "no-total.pdf";
    let document = Stack::document_id(&tenant, name);
    stack
        .upload(&format!("inbox/{tenant}/{name}"), invoice_pdf(&lines))
        .await;

    // then the run is invalid, with the validation report that says why
    let runs = stack.wait_for_runs(&document, 1).await;
    let run = &runs[0];
    assert_eq!(
        (s(run, "status"), s(run, "error")),
        (
            "invalid".to_string(),
            "Business.DocumentInvalid".to_string()
        )
    );
    assert!(run["outputs"].as_m().unwrap().contains_key("validation"));

    // and its execution succeeded with that status: a business outcome, not a technical
    // failure (Step Functions counts no ExecutionsFailed; nothing to redrive)
    let run_id = s(run, "runId");
    assert_eq!(stack.wait_for_execution(&run_id).await, "SUCCEEDED");
    let output = stack.execution_output(&run_id).await;
    assert_eq!(output["status"], "invalid", "{output}");
    assert_eq!(output["error"], "Business.DocumentInvalid", "{output}");
    let actions: Vec<String> = stack
        .audit(&document)
        .await
        .iter()
        .map(|e| e.draft.action.clone())
        .collect();
    assert!(
        actions.contains(&"validation.completed".to_string()),
        "the chain is there: {actions:?}"
    );
    assert!(!actions.contains(&"run.failed".to_string()), "{actions:?}");
}
