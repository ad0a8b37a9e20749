//! Route's saga through the deployed stack: the consumer's answer ends the run's receipt wait,
//! and a refusal (a second document with the same invoice) is compensated in reverse order,
//! once — counted at the wire (PutEvents per detail type and event id) and in the audit chain.

use docket_aws::saga::DynamoJournal;
use docket_core::ids::{DocumentId, RunId};
use docket_core::ports::SagaJournal;
use docket_core::saga::{CompensationStatus, Effect, EventId, EventKind, Evidence, SagaEnd};
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
