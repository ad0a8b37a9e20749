//! Route's saga through the deployed stack: the consumer's answer ends the run's receipt wait,
//! and a refusal (a second document with the same invoice) is compensated in reverse order,
//! once — counted at the wire (PutEvents per detail type and event id) and in the audit chain.

use docket_aws::saga::DynamoJournal;
use docket_core::ids::{DocumentId, RunId};
use docket_core::ports::SagaJournal;
use docket_core::saga::{
    CompensationStatus, Effect, EventId, EventKind, Evidence, ReceiptId, SagaEnd,
};
use docket_e2e::reviewers::{docket, json_of, Session};
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};

use crate::lost_ack::count_actions;

/// Uploads `name` (invoice `number`) and waits for its one run's execution to end; the
/// document, the run and the execution's status.
pub(crate) async fn processed(
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

/// The receipt id `run`'s journal holds (the consumer recorded its event).
async fn receipt_of(stack: &Stack, run: &RunId) -> ReceiptId {
    let journal = journal(stack).journal(run).await.unwrap().unwrap();
    let recorded = journal.entry(Effect::DownstreamRecorded);
    let receipt = recorded.ids.receipt_id.clone();
    receipt.unwrap_or_else(|| panic!("{run} was not recorded downstream: {journal:?}"))
}

/// The deployed compensate invoked as the state machine's Catch invokes it, for `run` after
/// `error` (what the Catch caught); its answer.
async fn compensate(
    stack: &Stack,
    run: &serde_json::Value,
    error: &serde_json::Value,
) -> serde_json::Value {
    let payload = serde_json::json!({"action": "compensate", "run": run, "error": error});
    let answer = stack.invoke("CompensateFunctionName", &payload).await;
    answer.unwrap_or_else(|e| panic!("compensate failed: {e}"))
}

/// The states the execution of `run` entered, in order.
pub(crate) async fn entered(stack: &Stack, run: &RunId) -> Vec<String> {
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
    // No zero-age sweep may publish this run's event again meanwhile.
    let _quiet = crate::SWEEPS.read().await;
    // given an invoice recorded downstream under one document
    let stack = Stack::load().await;
    let tenant = tenant();
    let (_, first, status) = processed(&stack, &tenant, "inv.pdf", "INV-2026-0500").await;
    assert_eq!(status, "SUCCEEDED");
    let receipt = receipt_of(&stack, &first).await;

    // when the same invoice arrives as another document
    let (copy, run, status) = processed(&stack, &tenant, "copy.pdf", "INV-2026-0500").await;

    // then the consumer refused it, and the run was compensated and ended compensated
    assert_eq!(status, "FAILED");
    let states = entered(&stack, &run).await;
    assert!(
        states.ends_with(&[
            "Route".into(),
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
    // No zero-age sweep may publish this run's event again meanwhile.
    let _quiet = crate::SWEEPS.read().await;
    // given two accepted versions of a document, the newer recorded downstream
    let stack = Stack::load().await;
    let (document, v1, v2) = two_versions(&stack, "INV-2026-0601").await;
    let receipt = receipt_of(&stack, &v2).await;
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
    // No zero-age sweep may publish this run's event again meanwhile.
    let _quiet = crate::SWEEPS.read().await;
    let stack = Stack::load().await;
    let (document, v1, v2) = two_versions(&stack, "INV-2026-0602").await;
    let retraction = EventId::new(&v2, EventKind::Retracted);

    // Four at once: a loser may find its planned compensation already settled by another.
    let (a, b, c, d) = tokio::join!(
        retract(&document, "duplicate"),
        retract(&document, "duplicate"),
        retract(&document, "duplicate"),
        retract(&document, "duplicate")
    );
    let all = [&a, &b, &c, &d];
    let answered: Vec<_> = all.into_iter().filter_map(|r| r.as_ref().ok()).collect();
    assert!(!answered.is_empty(), "{all:?}");
    for refused in all.into_iter().filter_map(|r| r.as_ref().err()) {
        assert!(refused.contains("Transient.InProgress"), "{refused}");
    }
    let chain = stack.audit(&document).await;
    let actions: Vec<_> = chain.iter().map(|e| e.draft.action.as_str()).collect();
    // Each compensation is made once (at the wire, in the journal, the audit chain and the
    // consumer): an overlapping caller makes no attempt while another's is in flight.
    let puts = stack.event_puts("document.retracted", &retraction).await;
    assert_eq!(puts, 1, "{all:?} {actions:?}");
    assert_eq!(count_actions(&chain, "event.retracted"), 1, "{actions:?}");
    assert_eq!(count_actions(&chain, "result.restored"), 1);
    assert_eq!(count_actions(&chain, "downstream.voided"), 1);
    let current = stack
        .item("DocumentsTable", "documentId", document.as_str())
        .await;
    assert_eq!(current["currentRunId"].as_s().unwrap(), v1.as_str());
    let receipt = receipt_of(&stack, &v2).await;
    let entry = stack
        .item("AccountsPayableTable", "pk", &format!("receipt#{receipt}"))
        .await;
    assert_eq!(
        s(&entry.into_iter().collect(), "voided"),
        "retracted: duplicate"
    );
}

#[tokio::test]
async fn a_compensation_that_fails_for_good_is_an_obligation_with_an_owner_and_an_alarm_metric() {
    // No zero-age sweep may publish this run's event again meanwhile.
    let _quiet = crate::SWEEPS.read().await;
    // given an accepted version whose record the consumer has lost
    let stack = Stack::load().await;
    let (document, _, v2) = two_versions(&stack, "INV-2026-0603").await;
    let key = format!("receipt#{}", receipt_of(&stack, &v2).await);
    stack.item("AccountsPayableTable", "pk", &key).await;
    stack
        .dynamodb
        .delete_item()
        .table_name(stack.out("AccountsPayableTable"))
        .key("pk", aws_sdk_dynamodb::types::AttributeValue::S(key))
        .send()
        .await
        .unwrap();

    // when the document is retracted, twice
    let first = retract(&document, "withdrawn").await.unwrap();
    let second = retract(&document, "withdrawn").await.unwrap();

    // then the void failed for good and stopped the plan: nothing earlier was undone
    assert_eq!(first["end"], "compensation_failed", "{first}");
    assert_eq!(second["alreadyEnded"], true, "{second}");
    let journal = journal(&stack).journal(&v2).await.unwrap().unwrap();
    let void = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(void.compensation, CompensationStatus::FailedManualReview);
    assert_eq!(void.last_error.as_deref(), Some("Conflict.UnknownReceipt"));
    assert_eq!(void.owner.as_deref(), Some("docket-operations"));
    let pending = journal.entry(Effect::EventPublished).compensation;
    assert_eq!(pending, CompensationStatus::Pending, "left for the owner");
    let retraction = EventId::new(&v2, EventKind::Retracted);
    assert_eq!(stack.event_puts("document.retracted", &retraction).await, 0);
    let current = stack
        .item("DocumentsTable", "documentId", document.as_str())
        .await;
    assert_eq!(current["currentRunId"].as_s().unwrap(), v2.as_str());
    let runs = stack.runs(&document).await;
    let run = runs.iter().find(|r| s(r, "runId") == v2.as_str()).unwrap();
    assert_eq!(s(run, "status"), "compensation_failed");

    // and the operator's list names it with its owner
    let listed = docket(&Session { env: Vec::new() }, &["ops", "unresolved"]).await;
    let listed = json_of(&listed);
    let ours: Vec<_> = listed["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["runId"] == v2.as_str())
        .collect();
    assert_eq!(ours.len(), 1, "{listed}");
    assert_eq!(ours[0]["owner"], "docket-operations");
    assert_eq!(ours[0]["operations"][0]["effect"], "downstream.recorded");

    // and compensate logged the one line the alarm's metric filter counts, once
    let group = stack.out("CompensateLogGroup");
    let lines: Vec<serde_json::Value> = stack
        .log_messages(group, None)
        .await
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|l: &serde_json::Value| l["span"]["documentId"] == document.as_str())
        .collect();
    assert!(
        !lines.is_empty(),
        "compensate's log lines for {document} are read"
    );
    // LocalStack's CloudFormation deploys AWS::Logs::MetricFilter as a no-op: the pattern is
    // read from the template, and matched against the line compensate really wrote.
    let (pattern, metric) = metric_filter("CompensationFailedMetric");
    assert_eq!(metric, "CompensationFailed");
    let (field, value) = json_equality(&pattern);
    let counted = lines
        .iter()
        .filter(|l| l.pointer(&field) == Some(&value.clone().into()));
    assert_eq!(counted.count(), 1, "{pattern} over {lines:?}");
}

/// The `FilterPattern` and `MetricName` of the template's metric filter `resource`.
fn metric_filter(resource: &str) -> (String, String) {
    let template = include_str!("../../infra/template.yaml");
    let block = template
        .split_once(&format!("\n  {resource}:\n"))
        .expect("the resource")
        .1;
    let field = |name: &str| {
        let line = block
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap();
        let value = line.split_once(':').unwrap().1.trim();
        value.trim_matches('\'').trim_matches('"').to_string()
    };
    (field("FilterPattern:"), field("MetricName:"))
}

/// The JSON pointer and value of a CloudWatch Logs filter pattern of the form
/// `{ $.a.b = "v" }` (the only form the stack's filters use).
fn json_equality(pattern: &str) -> (String, String) {
    let inner = pattern.trim().trim_start_matches('{').trim_end_matches('}');
    let (path, value) = inner.split_once('=').expect("an equality");
    let path = path.trim().strip_prefix("$.").expect("a $. selector");
    let value = value.trim().trim_matches('"');
    (format!("/{}", path.replace('.', "/")), value.to_string())
}

#[tokio::test]
async fn a_run_whose_first_effect_never_happened_needs_no_compensation() {
    // No zero-age sweep may publish this run's event again meanwhile.
    let _quiet = crate::SWEEPS.read().await;
    // given a run that was ingested but never routed (its promotion never happened)
    let stack = Stack::load().await;
    let faults = docket_aws::faults::Faults::none();
    let store = crate::lost_ack::store(&stack, &faults).await;
    let input = crate::lost_ack::prepared_run(&stack, &store).await;

    // when the deployed compensate runs for it, twice
    let error = serde_json::json!({"Error": "Transient.Dependency", "Cause": "route failed"});
    let first = compensate(&stack, &serde_json::json!(input), &error).await;
    let second = compensate(&stack, &serde_json::json!(input), &error).await;

    // then nothing was compensated: the saga ended not-required, once, with nothing published
    assert_eq!(first["end"], "not-required", "{first}");
    assert_eq!(first["alreadyEnded"], false);
    assert_eq!(second["alreadyEnded"], true, "{second}");
    let journal = journal(&stack)
        .journal(&input.run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(journal.end, Some(SagaEnd::NotRequired));
    assert!(journal
        .entries
        .iter()
        .all(|e| e.compensation == CompensationStatus::NotRequired && e.attempts == 0));
    let retraction = EventId::new(&input.run_id, EventKind::Retracted);
    assert_eq!(stack.event_puts("document.retracted", &retraction).await, 0);
    let chain = stack.audit(&input.document_id).await;
    assert_eq!(count_actions(&chain, "saga.not-required"), 1);
}

#[tokio::test]
async fn a_publication_whose_answer_was_lost_is_reconciled_by_event_id_and_compensated_once() {
    // No zero-age sweep may publish this run's event again meanwhile.
    let _quiet = crate::SWEEPS.read().await;
    use crate::lost_ack::{one, validated_run, Picked, SagaPorts, ValidatedRun};
    use docket_aws::faults::Rule;
    use docket_core::steps::route;

    // given a run routed in this process whose PutEvents committed and whose answer was lost
    let stack = Stack::load().await;
    let ValidatedRun {
        store,
        blobs,
        ctx,
        input,
        validated,
    } = validated_run(&stack).await;
    let lost = one(Rule::lose_response("eventbridge", "PutEvents").limit(1));
    let saga = SagaPorts::with_bus_faults(&stack, &store, &lost).await;
    let routed = route::run(
        &Picked::route(&blobs, &store, &saga),
        &ctx,
        &input,
        &validated.report,
        None,
    )
    .await;
    // PutEvents is classified as a read (a republication under the same id is safe): the
    // error is transient, and the journal's claim says the publication is uncertain.
    assert!(routed.is_err(), "{routed:?}");
    assert_eq!(lost.injected(), 1, "the fault fired");
    let accepted = EventId::new(&input.run_id, EventKind::Accepted);
    assert_eq!(
        stack.event_puts("document.accepted", &accepted).await,
        1,
        "it committed"
    );
    let uncertain = journal(&stack)
        .journal(&input.run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        uncertain.entry(Effect::EventPublished).evidence,
        Evidence::Uncertain
    );

    // when the deployed compensate runs for it (as the Catch would), twice
    let error = serde_json::json!({"Error": "Ambiguous.OutcomeUnknown"});
    let first = compensate(&stack, &serde_json::json!(input), &error).await;
    let second = compensate(&stack, &serde_json::json!(input), &error).await;

    // then the publication was reconciled by its event id (EventBridge cannot be asked for an
    // event, so it went out again under the same id, and the consumer applied it once), then
    // compensated once, in reverse order
    assert_eq!(first["end"], "compensated", "{first}");
    assert_eq!(second["alreadyEnded"], true, "{second}");
    assert_eq!(stack.event_puts("document.accepted", &accepted).await, 2);
    let retraction = EventId::new(&input.run_id, EventKind::Retracted);
    assert_eq!(stack.event_puts("document.retracted", &retraction).await, 1);
    let chain = stack.audit(&input.document_id).await;
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
            "event.retracted",
            "result.restored",
            "saga.compensated",
            "run.compensated"
        ],
        "{actions:?}"
    );
    let reconciled = chain
        .iter()
        .find(|e| e.draft.action == "event.published")
        .unwrap();
    assert_eq!(reconciled.draft.detail["reconciled"], true);
    // The consumer recorded the event once and voids that one receipt on the retraction.
    let receipt = ReceiptId::for_event(&accepted);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(150);
    loop {
        let entry = docket_e2e::util::get_item(
            &stack.dynamodb,
            stack.out("AccountsPayableTable"),
            "pk",
            &format!("receipt#{receipt}"),
        )
        .await;
        if entry.as_ref().is_some_and(|e| e.contains_key("voided")) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "receipt {receipt}: {entry:?}"
        );
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
    // Each delivery is answered with the one receipt (a redelivery answers what the first did).
    while stack.event_puts("document.recorded", &accepted).await < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the second delivery was not answered"
        );
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
    assert_eq!(stack.event_puts("document.refused", &accepted).await, 0);
}

#[tokio::test]
async fn a_retract_that_raced_a_newer_version_never_undoes_the_newer_result() {
    // No zero-age sweep may publish this run's event again meanwhile.
    let _quiet = crate::SWEEPS.read().await;
    // given v2 current and recorded, then v3 accepted after a retract read v2 as current
    let stack = Stack::load().await;
    let number = "INV-2026-0604";
    let (document, v1, v2) = two_versions(&stack, number).await;
    let body = invoice_pdf(&invoice_lines(number, "1,234.50"));
    let runs = stack.runs(&document).await;
    stack.upload(&s(&runs[0], "rawKey"), body).await;
    let runs = stack.wait_for_runs(&document, 3).await;
    let v3 = runs
        .iter()
        .map(|r| s(r, "runId"))
        .find(|r| r != v1.as_str() && r != v2.as_str())
        .expect("a third run");
    assert_eq!(stack.wait_for_execution(&v3).await, "SUCCEEDED");
    let current = stack
        .item("DocumentsTable", "documentId", document.as_str())
        .await;
    assert_eq!(
        current["currentRunId"].as_s().unwrap(),
        &v3,
        "v3 is current"
    );
    let v3_receipt = receipt_of(&stack, &RunId::parse(&v3).unwrap()).await;

    // when the retract's compensation of v2 runs (what `retract` does after its read)
    let run = execution_run(&stack, &v2).await;
    let error = serde_json::json!({"Error": "retracted: raced a newer upload"});
    let done = compensate(&stack, &run, &error).await;

    // then v2's effects were taken back but its restore was not made: v3 stays current and
    // recorded downstream
    assert_eq!(done["end"], "compensated", "{done}");
    let journal = journal(&stack).journal(&v2).await.unwrap().unwrap();
    let promoted = journal.entry(Effect::ResultPromoted);
    assert_eq!(promoted.compensation, CompensationStatus::NotRequired);
    let note = promoted.note.as_deref().unwrap_or_default();
    assert!(note.contains("a newer result is never undone"), "{note}");
    let current = stack
        .item("DocumentsTable", "documentId", document.as_str())
        .await;
    assert_eq!(current["currentRunId"].as_s().unwrap(), &v3);
    assert!(!current.contains_key("retractedRunId"), "{current:?}");
    let v3_entry = stack
        .item(
            "AccountsPayableTable",
            "pk",
            &format!("receipt#{v3_receipt}"),
        )
        .await;
    assert!(!v3_entry.contains_key("voided"), "{v3_entry:?}");
    let retraction = EventId::new(&v2, EventKind::Retracted);
    assert_eq!(stack.event_puts("document.retracted", &retraction).await, 1);
}

/// The run input `run`'s execution started with (its `run` field).
async fn execution_run(stack: &Stack, run: &RunId) -> serde_json::Value {
    let history = stack.history(run.as_str()).await;
    let started = history
        .iter()
        .find_map(|e| e.execution_started_event_details())
        .expect("an ExecutionStarted event");
    let input: serde_json::Value = serde_json::from_str(started.input().unwrap()).unwrap();
    input["run"].clone()
}
