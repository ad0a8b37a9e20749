//! Route's saga through the deployed stack: the consumer's answer ends the run's receipt wait,
//! and a refusal (a second document with the same invoice) is compensated in reverse order,
//! once — counted at the wire (PutEvents per detail type and event id) and in the audit chain.

use docket_aws::saga::DynamoJournal;
use docket_core::ids::{DocumentId, RunId};
use docket_core::ports::SagaJournal;
use docket_core::saga::{CompensationStatus, Effect, EventId, EventKind, Evidence, SagaEnd};
use docket_e2e::reviewers::{docket, json_of, Session};
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};

use crate::lost_ack::count_actions;

/// Uploads `name` (invoice `number`) and waits for its one run's execution to end; the
/// document, the run and the execution's status.
async fn processed(
    stack: &Stack,
    tenant: &str,
    name: &str,
    number: &str,
) -> (DocumentId, RunId, String) {
    let document = Stack::document_id(tenant, name);
    let body = invoice_pdf(&invoice_lines(number, "1,234.50"));
    stack.upload(&format!("inbox/{tenant}/{name}"), body).await;
    let runs = stack.wait_for_runs(&document, 1).await;
    let run = s(&runs[0], "runId");
    let status = stack.wait_for_execution(&run).await;
    (document, RunId::parse(&run).unwrap(), status)
}

fn journal(stack: &Stack) -> DynamoJournal {
    DynamoJournal::new(stack.dynamodb.clone(), stack.out("SagaJournalTable"))
}

/// The states the execution of `run` entered, in order.
async fn entered(stack: &Stack, run: &RunId) -> Vec<String> {
    let history = stack.history(run.as_str()).await;
    history
        .iter()
        .filter_map(|e| e.state_entered_event_details())
        .map(|d| d.name().to_string())
        .collect()
}

#[tokio::test]
async fn a_second_document_with_the_same_invoice_is_refused_and_compensated_once_in_reverse_order()
{
    // given an invoice recorded downstream under one document
    let stack = Stack::load().await;
    let tenant = tenant();
    let (_, first, status) = processed(&stack, &tenant, "inv.pdf", "INV-2026-0500").await;
    assert_eq!(status, "SUCCEEDED");
    let first_journal = journal(&stack).journal(&first).await.unwrap().unwrap();
    let recorded = first_journal.entry(Effect::DownstreamRecorded);
    assert_eq!(recorded.evidence, Evidence::Confirmed, "{first_journal:?}");
    let receipt = recorded.ids.receipt_id.clone().expect("a receipt id");

    // when the same invoice arrives as another document
    let (copy, run, status) = processed(&stack, &tenant, "copy.pdf", "INV-2026-0500").await;

    // then the consumer refused it, and the run was compensated and ended compensated
    assert_eq!(status, "FAILED");
    let states = entered(&stack, &run).await;
    assert!(
        states.ends_with(&[
            "Route".into(),
            "AwaitReceipt".into(),
            "Compensate".into(),
            "CompensationEnded?".into(),
            "Compensated".into()
        ]),
        "{states:?}"
    );
    let runs = stack.runs(&copy).await;
    assert_eq!(s(&runs[0], "status"), "compensated", "{runs:?}");
    assert_eq!(s(&runs[0], "error"), "Business.DuplicateInvoice");

    // in reverse order, with the ids of what committed, each once
    let chain = stack.audit(&copy).await;
    let actions: Vec<_> = chain.iter().map(|e| e.draft.action.as_str()).collect();
    let tail: Vec<_> = actions
        .iter()
        .skip_while(|a| **a != "event.published")
        .copied()
        .collect();
    assert_eq!(
        tail,
        [
            "event.published",
            "downstream.refused",
            "event.retracted",
            "result.restored",
            "saga.compensated",
            "run.compensated"
        ],
        "{actions:?}"
    );
    let accepted = EventId::new(&run, EventKind::Accepted);
    let retraction = EventId::new(&run, EventKind::Retracted);
    let retracted = chain
        .iter()
        .find(|e| e.draft.action == "event.retracted")
        .unwrap();
    assert_eq!(retracted.draft.detail["retracts"], accepted.as_str());
    assert_eq!(stack.event_puts("document.accepted", &accepted).await, 1);
    assert_eq!(stack.event_puts("document.refused", &accepted).await, 1);
    assert_eq!(stack.event_puts("document.retracted", &retraction).await, 1);
    assert_eq!(count_actions(&chain, "run.completed"), 1);

    let journal = journal(&stack).journal(&run).await.unwrap().unwrap();
    let status = |e: Effect| journal.entry(e).compensation;
    assert_eq!(journal.end, Some(SagaEnd::Compensated));
    assert_eq!(
        status(Effect::ResultPromoted),
        CompensationStatus::Committed
    );
    assert_eq!(
        status(Effect::EventPublished),
        CompensationStatus::Committed
    );
    let refused = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(refused.evidence, Evidence::NotAttempted);
    assert_eq!(
        refused.note.as_deref(),
        Some("refused: Business.DuplicateInvoice")
    );
    // Nothing was current for the copy before: the restore removed its current result.
    let current = docket_e2e::util::get_item(
        &stack.dynamodb,
        stack.out("DocumentsTable"),
        "documentId",
        copy.as_str(),
    )
    .await;
    assert!(current.is_none(), "{current:?}");

    // and the first document's invoice stays recorded downstream
    let entry = stack
        .item("AccountsPayableTable", "pk", &format!("receipt#{receipt}"))
        .await;
    assert!(!entry.contains_key("voided"), "{entry:?}");
}

/// `docket retract DOC --reason …` as an operator runs it; its JSON answer, or its stderr.
async fn retract(document: &DocumentId, reason: &str) -> Result<serde_json::Value, String> {
    let operator = Session { env: Vec::new() };
    let args = ["retract", document.as_str(), "--reason", reason];
    let out = docket(&operator, &args).await;
    match out.status.success() {
        true => Ok(json_of(&out)),
        false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

/// Two versions of one document, each recorded downstream (the newer amends the older's
/// entry); the document, the older run and the newer one.
async fn two_versions(stack: &Stack, number: &str) -> (DocumentId, RunId, RunId) {
    let tenant = tenant();
    let (document, v1, status) = processed(stack, &tenant, "inv.pdf", number).await;
    assert_eq!(status, "SUCCEEDED");
    let body = invoice_pdf(&invoice_lines(number, "1,234.50"));
    stack.upload(&format!("inbox/{tenant}/inv.pdf"), body).await;
    let runs = stack.wait_for_runs(&document, 2).await;
    let v2 = runs
        .iter()
        .map(|r| s(r, "runId"))
        .find(|r| r != v1.as_str())
        .expect("a second run");
    assert_eq!(stack.wait_for_execution(&v2).await, "SUCCEEDED");
    (document, v1, RunId::parse(&v2).unwrap())
}

#[tokio::test]
async fn a_retract_voids_the_downstream_record_publishes_the_retraction_and_restores_the_previous_version(
) {
    // given two accepted versions of a document, the newer recorded downstream
    let stack = Stack::load().await;
    let (document, v1, v2) = two_versions(&stack, "INV-2026-0601").await;
    let recorded = journal(&stack).journal(&v2).await.unwrap().unwrap();
    let receipt = recorded
        .entry(Effect::DownstreamRecorded)
        .ids
        .receipt_id
        .clone();
    let receipt = receipt.expect("v2 was recorded downstream");
    let retraction = EventId::new(&v2, EventKind::Retracted);

    // when an operator retracts the document, twice
    let first = retract(&document, "sent to the wrong customer")
        .await
        .unwrap();
    let second = retract(&document, "sent to the wrong customer")
        .await
        .unwrap();

    // then the newer version's record is voided by its receipt id, the retraction is published
    // once, and the older version is current again
    assert_eq!(first["status"], "retracted", "{first}");
    assert_eq!(first["runId"], v2.as_str());
    assert_eq!(first["currentRunId"], v1.as_str());
    assert_eq!(first["end"], "compensated");
    let entry = stack
        .item("AccountsPayableTable", "pk", &format!("receipt#{receipt}"))
        .await;
    assert_eq!(
        s(&entry.into_iter().collect(), "voided"),
        "retracted: sent to the wrong customer"
    );
    assert_eq!(stack.event_puts("document.retracted", &retraction).await, 1);
    let current = stack
        .item("DocumentsTable", "documentId", document.as_str())
        .await;
    assert_eq!(current["currentRunId"].as_s().unwrap(), v1.as_str());
    assert_eq!(current["retractedRunId"].as_s().unwrap(), v2.as_str());
    let runs = stack.runs(&document).await;
    let status = |run: &RunId| {
        let r = runs.iter().find(|r| s(r, "runId") == run.as_str()).unwrap();
        s(r, "status")
    };
    assert_eq!(status(&v2), "retracted");
    assert_eq!(status(&v1), "completed");
    let chain = stack.audit(&document).await;
    let undone: Vec<_> = chain
        .iter()
        .filter(|e| e.draft.run_id.as_ref() == Some(&v2))
        .map(|e| e.draft.action.as_str())
        .skip_while(|a| *a != "downstream.recorded")
        .collect();
    assert_eq!(
        undone,
        [
            "downstream.recorded",
            "downstream.voided",
            "event.retracted",
            "result.restored",
            "saga.compensated",
            "run.retracted"
        ]
    );

    // and the second retract did nothing, and said so
    assert_eq!(second["status"], "already-retracted", "{second}");
    let message = second["message"].as_str().unwrap();
    assert!(message.contains("nothing more to retract"), "{message}");
    assert_eq!(stack.event_puts("document.retracted", &retraction).await, 1);
    assert_eq!(
        stack.audit(&document).await.len(),
        chain.len(),
        "no entry added"
    );
}

#[tokio::test]
async fn concurrent_retracts_compensate_once() {
    let stack = Stack::load().await;
    let (document, v1, v2) = two_versions(&stack, "INV-2026-0602").await;
    let retraction = EventId::new(&v2, EventKind::Retracted);

    let (a, b) = tokio::join!(
        retract(&document, "duplicate"),
        retract(&document, "duplicate")
    );

    let answered: Vec<_> = [&a, &b]
        .into_iter()
        .filter_map(|r| r.as_ref().ok())
        .collect();
    assert!(!answered.is_empty(), "{a:?} {b:?}");
    for refused in [&a, &b].into_iter().filter_map(|r| r.as_ref().err()) {
        assert!(refused.contains("Transient.InProgress"), "{refused}");
    }
    assert_eq!(stack.event_puts("document.retracted", &retraction).await, 1);
    let chain = stack.audit(&document).await;
    assert_eq!(count_actions(&chain, "result.restored"), 1);
    assert_eq!(count_actions(&chain, "downstream.voided"), 1);
    let current = stack
        .item("DocumentsTable", "documentId", document.as_str())
        .await;
    assert_eq!(current["currentRunId"].as_s().unwrap(), v1.as_str());
}
