//! Failures that redrive (issue "Recover and observe"): a run whose OCR poll keeps failing past
//! its retries fails its execution at that Task; Step Functions' status change event records the
//! run failed; with the fault gone, `docket ops redrive` restarts the execution at the Task that
//! failed and the run completes, with the one Textract job it had started.

use docket_core::ids::{sha256_hex, RunId};
use docket_core::model::step::Step;
use docket_e2e::reviewers::{docket, json_of, wait_for_status, Session};
use docket_e2e::stack::s;
use docket_e2e::util;
use serde_json::json;

use crate::faults::{assert_each_fired, FaultsOn};
use crate::{drop_invoices, duplicates, patient_stack, settle, Read, RUN_DEADLINE};

#[tokio::test]
async fn a_run_failed_past_its_retries_is_completed_by_a_redrive_with_one_textract_job() {
    // given an upload whose OCR job starts, but whose every poll is throttled
    let stack = patient_stack().await;
    let rules = json!([
        {"service": "textract", "operation": "GetDocumentTextDetection", "region": "us-east-1",
         "probability": 1.0, "error": {"statusCode": 400, "code": "ThrottlingException"}}
    ]);
    let on = FaultsOn::on(&stack, rules, None).await;
    let (_, documents) = drop_invoices(&stack, 1, Read::AsJobs).await;
    let document = &documents[0];

    // when its retries run out, the execution fails at PollOcr and the run is recorded failed
    let run = wait_for_status(&stack, document, "failed").await;
    let fired = on.chaos_fired();
    on.off().await;
    assert_each_fired(
        "Chaos-API",
        &["textract ThrottlingException".into()],
        &fired,
    );
    assert_eq!(stack.wait_for_execution(&run).await, "FAILED");
    let runs = stack.runs(document).await;
    let error = s(&runs[0], "error");
    assert!(error.starts_with("Transient."), "recorded error {error}");
    let history = stack.history(&run).await;
    let last_state = history.iter().rev().find_map(|e| {
        e.state_entered_event_details()
            .map(|d| d.name().to_string())
    });
    assert_eq!(last_state.as_deref(), Some("PollOcr"), "failed at its Task");
    // and route counted one technical failure (the metric of TechnicalFailuresAlarm), by its
    // error's name
    let failures = stack
        .wait_for_emf("RouteFunctionName", "TechnicalFailures", &run)
        .await;
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["error"], error.as_str());

    // and the operator's list names it, with the redrive as its next action
    let operator = Session { env: Vec::new() };
    let listed = json_of(&docket(&operator, &["ops", "failed"]).await);
    let case = listed["failed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["runId"] == run.as_str())
        .unwrap_or_else(|| panic!("{run} not listed: {listed:#}"))
        .clone();
    assert_eq!(
        (case["runStatus"].as_str(), case["nextAction"].as_str()),
        (
            Some("failed"),
            Some(format!("docket ops redrive {run}").as_str())
        )
    );

    // and its status shows the technical state beside the business one: failed in PollOcr,
    // every attempt of it failed, the OCR operation still open (accepted, its job running)
    let status = json_of(&docket(&operator, &["status", &run]).await);
    let one = &status["runs"][0];
    assert_eq!(
        (one["status"].as_str(), one["execution"]["status"].as_str()),
        (Some("failed"), Some("FAILED"))
    );
    assert_eq!(one["execution"]["state"], "PollOcr", "{one:#}");
    let polled = one["steps"].as_array().unwrap().last().unwrap();
    assert!(
        polled["attempts"].as_u64() > Some(1) && polled["attempts"] == polled["failures"],
        "{polled}"
    );
    assert_eq!(one["obligations"][0]["status"], "accepted", "{one:#}");

    // when the operator redrives it, and then asks again
    let redriven = docket(&operator, &["ops", "redrive", &run]).await;
    let answer = json_of(&redriven);
    assert!(redriven.status.success(), "{answer:#}");
    assert_eq!(answer["redriven"][0]["reopened"], true, "{answer:#}");

    // then it completes: one run, one execution (redriven once), one Textract job, one result
    let outcomes = settle(&stack, &documents, RUN_DEADLINE).await;
    let statuses: Vec<String> = outcomes[0].runs.iter().map(|r| s(r, "status")).collect();
    assert_eq!(statuses, ["completed"]);
    assert_eq!(stack.wait_for_execution(&run).await, "SUCCEEDED");
    let problems = duplicates(&stack, &outcomes[0]).await;
    assert!(problems.is_empty(), "{problems:#?}");
    let again = docket(&operator, &["ops", "redrive", &run]).await;
    assert!(
        !again.status.success(),
        "a completed run is not redriven again"
    );
    let op = Step::Ocr.operation(&RunId::parse(&run).unwrap());
    let subject = sha256_hex(op.as_str().as_bytes());
    let starts = util::wire_requests("textract", "StartDocumentTextDetection", &subject).await;
    assert_eq!(starts.len(), 1, "one Textract job: {starts:#?}");
    let redrives = stack
        .history(&run)
        .await
        .iter()
        .filter(|e| e.r#type().as_str() == "ExecutionRedriven")
        .count();
    assert_eq!(redrives, 1);
    let status = json_of(&docket(&operator, &["status", &run]).await);
    let one = &status["runs"][0];
    assert_eq!(
        (one["status"].as_str(), one["execution"]["status"].as_str()),
        (Some("completed"), Some("SUCCEEDED"))
    );
    assert_eq!(one["execution"]["redriveCount"], 1);
    assert_eq!(one["obligations"], json!([]), "{one:#}");

    // and the audit chain shows the failure, then the redrive, then the completion
    let actions: Vec<String> = stack
        .audit(document)
        .await
        .iter()
        .map(|e| e.draft.action.clone())
        .collect();
    let at = |a: &str| actions.iter().position(|x| x == a);
    let order = (at("run.failed"), at("run.redriven"), at("run.completed"));
    assert!(
        matches!(order, (Some(f), Some(r), Some(c)) if f < r && r < c),
        "{actions:?}"
    );
}
