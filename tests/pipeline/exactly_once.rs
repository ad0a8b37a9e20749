//! The OCR operation under the operation ledger, against the deployed stack's tables, Textract and
//! OCR function: a lost answer to the ledger's completion, two concurrent runs of the same step,
//! a crash after the side effect, and the same operation with changed parameters. Each test counts
//! ledger claims, Textract jobs and audit entries.

use docket_aws::dynamodb::DynamoStore;
use docket_aws::faults::{Faults, Rule};
use docket_aws::ledger::DynamoLedger;
use docket_aws::s3::S3Blobs;
use docket_aws::textract::TextractOcr;
use docket_core::ids::sha256_hex;
use docket_core::ledger::{LedgerStatus, OperationRecord, CLAIM_NOTE};
use docket_core::model::run::ObjectRef;
use docket_core::model::run::RunInput;
use docket_core::model::step::Step;
use docket_core::ports::Ledger;
use docket_core::ports::Ocr;
use docket_core::steps::{ocr, Clock, Context};
use docket_e2e::stack::Stack;
use docket_e2e::util;
use serde_json::{json, Value};

use crate::lost_ack::{count_actions, ctx, ledger, one, prepared_run, store, Picked};

fn claims(rec: &OperationRecord) -> usize {
    rec.attempts.iter().filter(|a| a.note == CLAIM_NOTE).count()
}

fn completions(rec: &OperationRecord) -> usize {
    rec.attempts
        .iter()
        .filter(|a| a.note.starts_with("completed"))
        .count()
}

/// Polls until the job is done, as the state machine's loop does.
async fn poll_to_end(
    textract: &TextractOcr,
    store: &DynamoStore,
    ledger: &DynamoLedger,
    ctx: &Context,
    input: &RunInput,
    started: &ocr::OcrStarted,
) -> Result<ObjectRef, docket_core::Error> {
    let blobs = S3Blobs::new(&util::aws().await);
    let ports = Picked {
        blobs: &blobs,
        store,
        ocr: textract,
        ledger,
        workflow: (),
        saga: (),
    };
    for _ in 0..240 {
        let polled = ocr::poll(&ports, ctx, input, started).await?;
        if let Some(n) = polled.normalized {
            return Ok(n);
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    panic!("OCR job {} did not finish", started.job_id);
}

#[tokio::test]
async fn a_lost_answer_to_the_ledger_completion_is_reconciled_and_completes_once() {
    let stack = Stack::load().await;
    let sdk = util::aws().await;
    let clean = store(&stack, &Faults::none()).await;
    let input = prepared_run(&stack, &clean).await;
    let ctx = ctx(&stack, "docket/test");
    let textract = TextractOcr::new(&sdk);
    // Past admission: not while the quota test holds the provider.
    let _direct = crate::TEXTRACT.read().await;
    // The start commits TransactWriteItems #1 (accepted + ocr.started); the completion is #2.
    let faults = one(Rule::lose_response("dynamodb", "TransactWriteItems").nth(2));
    let lossy = store(&stack, &faults).await;
    let ledger = ledger(&clean);

    let blobs = S3Blobs::new(&util::aws().await);

    let ports = Picked::ocr(&blobs, &lossy, &textract, &ledger);
    let started = ocr::start(&ports, &ctx, &input).await.unwrap();
    let normalized = poll_to_end(&textract, &lossy, &ledger, &ctx, &input, &started)
        .await
        .unwrap();
    // The state machine retries the poll too (its own answer may have been lost).
    let again = poll_to_end(&textract, &lossy, &ledger, &ctx, &input, &started)
        .await
        .unwrap();

    assert_eq!(
        faults.injected(),
        1,
        "the completion's answer was lost once"
    );
    assert_eq!(again, normalized);
    let rec = ledger
        .get(&Step::Ocr.operation(&input.run_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rec.status, LedgerStatus::Completed);
    assert_eq!(rec.result_pointer, Some(normalized.to_string()));
    assert_eq!((claims(&rec), completions(&rec)), (1, 1));
    let chain = stack.audit(&input.document_id).await;
    assert_eq!(count_actions(&chain, "ocr.started"), 1);
    assert_eq!(count_actions(&chain, "ocr.completed"), 1);
}

async fn invoke_ocr(stack: &Stack, payload: &Value) -> Result<Value, String> {
    stack.invoke("OcrFunctionName", payload).await
}

/// The token of a direct start: well-formed, but no Task waits on it (the callback that ends
/// its wait is refused, as for a Task that timed out).
const NO_TASK: &str = "AQCEAAAAKgAAAAMAAAAAAAAAAZdirectinvokenotask==";

#[tokio::test]
async fn two_concurrent_runs_of_the_ocr_start_make_one_claim_and_one_job() {
    // Invokes ocr itself, whose answers it counts: not while the quota test holds Textract.
    let _direct = crate::TEXTRACT.read().await;
    let stack = Stack::load().await;
    let clean = store(&stack, &Faults::none()).await;
    let input = prepared_run(&stack, &clean).await;
    let ledger = ledger(&clean);
    let payload = json!({"action": "start", "run": input, "token": NO_TASK});

    let (a, b) = tokio::join!(invoke_ocr(&stack, &payload), invoke_ocr(&stack, &payload));
    let later = invoke_ocr(&stack, &payload).await;

    let answers = [a, b, later];
    let waits: Vec<&str> = answers
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|v| v["wait"].as_str().unwrap())
        .collect();
    let refusals: Vec<&String> = answers.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(waits.len() >= 2, "{answers:?}");
    assert!(
        refusals.iter().all(|e| *e == "Transient.InProgress"),
        "a concurrent duplicate backs off: {refusals:?}"
    );
    let rec = ledger
        .get(&Step::Ocr.operation(&input.run_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claims(&rec), 1);
    // accepted, or completed by the job's notification since (its callback refused: no Task)
    let status = rec.status;
    assert!(
        matches!(status, LedgerStatus::Accepted | LedgerStatus::Completed),
        "{status:?}"
    );
    assert!(rec.provider_job_id.is_some(), "{rec:?}");
    // one claim, so one start asked Textract (the others found the job in the ledger)
    let op = Step::Ocr.operation(&input.run_id);
    let subject = sha256_hex(op.as_str().as_bytes());
    let starts = util::wire_requests("textract", "StartDocumentTextDetection", &subject).await;
    assert_eq!(starts.len(), 1, "one Textract start: {starts:#?}");
    let chain = stack.audit(&input.document_id).await;
    assert_eq!(count_actions(&chain, "ocr.started"), 1);
}

#[tokio::test]
async fn a_crash_after_the_side_effect_is_recovered_by_the_retry_without_a_second_effect() {
    let stack = Stack::load().await;
    let sdk = util::aws().await;
    let clean = store(&stack, &Faults::none()).await;
    let input = prepared_run(&stack, &clean).await;
    let ctx = ctx(&stack, "docket/test");
    let textract = TextractOcr::new(&sdk);
    // Past admission: not while the quota test holds the provider.
    let _direct = crate::TEXTRACT.read().await;
    let ledger = ledger(&clean);
    let op = Step::Ocr.operation(&input.run_id);
    let rules = ctx.config.ledger.lease_rules();

    // A holder claims the operation, Textract accepts its job, and it crashes before recording.
    let now = ctx.clock.now();
    ledger
        .claim(&op, &ocr::fingerprint(&input), now.unix_timestamp(), &rules)
        .await
        .unwrap();
    let crashed_job = textract
        .start(&op, &input.raw, input.run_id.as_str())
        .await
        .unwrap();
    // The retry, after the lease: it takes over and records the existing job.
    let after_lease = Context {
        clock: Clock::Fixed(now + time::Duration::seconds(rules.lease_seconds + 1)),
        ..ctx.clone()
    };
    let blobs = S3Blobs::new(&util::aws().await);
    let ports = Picked::ocr(&blobs, &clean, &textract, &ledger);
    let started = ocr::start(&ports, &after_lease, &input).await.unwrap();
    // The poll writes the normalized OCR, then crashes before the completion commits (every
    // TransactWriteItems of this store fails before it is sent); the retried poll records it.
    let broken = store(
        &stack,
        &one(
            Rule::fail_before_send("dynamodb", "TransactWriteItems", "InternalServerError")
                .probability(1.0),
        ),
    )
    .await;
    let crashed_poll = poll_to_end(&textract, &broken, &ledger, &ctx, &input, &started).await;
    let normalized = poll_to_end(&textract, &clean, &ledger, &ctx, &input, &started)
        .await
        .unwrap();

    assert_eq!(
        (started.job_id.as_str(), started.fence),
        (crashed_job.as_str(), 2)
    );
    assert_eq!(
        crashed_poll.map_err(|e| e.name()),
        Err("Transient.Dependency")
    );
    let rec = ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.status, LedgerStatus::Completed);
    assert_eq!((claims(&rec), completions(&rec)), (2, 1));
    assert_eq!(rec.provider_job_id.as_deref(), Some(crashed_job.as_str()));
    let chain = stack.audit(&input.document_id).await;
    assert_eq!(count_actions(&chain, "ocr.started"), 1);
    assert_eq!(count_actions(&chain, "ocr.completed"), 1);
    let body = stack.object(&normalized.bucket, &normalized.key).await;
    let recorded = chain
        .iter()
        .find(|e| e.draft.action == "ocr.completed")
        .unwrap();
    assert_eq!(
        recorded.draft.detail["sha256"].as_str(),
        Some(sha256_hex(&body).as_str()),
        "the normalized OCR is the one the completion recorded"
    );
}

#[tokio::test]
async fn the_same_operation_with_changed_parameters_is_a_conflict_and_overwrites_nothing() {
    // Invokes ocr itself, whose answers it counts: not while the quota test holds Textract.
    let _direct = crate::TEXTRACT.read().await;
    let stack = Stack::load().await;
    let clean = store(&stack, &Faults::none()).await;
    let input = prepared_run(&stack, &clean).await;
    let ledger = ledger(&clean);
    let started = invoke_ocr(
        &stack,
        &json!({"action": "start", "run": input, "token": NO_TASK}),
    )
    .await
    .unwrap();
    // waiting (or, if the job's notification came first, its callback refused: no Task waits)
    assert!(
        ["waiting", "already-ended"].contains(&started["wait"].as_str().unwrap()),
        "{started}"
    );
    let before = ledger
        .get(&Step::Ocr.operation(&input.run_id))
        .await
        .unwrap()
        .unwrap();

    // The same run id (so the same operation id) for another version of the raw object.
    let mut changed = input.clone();
    let other = stack
        .upload(&changed.raw.key, b"%PDF-1.4 another version".to_vec())
        .await;
    changed.raw.version_id = Some(other);
    changed.sha256 = "0".repeat(64);
    let refused = invoke_ocr(
        &stack,
        &json!({"action": "start", "run": changed, "token": NO_TASK}),
    )
    .await;

    assert_eq!(refused, Err("Conflict.ParametersChanged".to_string()));
    let after = ledger
        .get(&Step::Ocr.operation(&input.run_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after, before, "the record is untouched");
    assert!(after.provider_job_id.is_some(), "{after:?}");
}

/// Pages of an appendix that make a document's OCR take long; no field labels on them.
const SLOW_PAGES: usize = 12;

#[tokio::test]
async fn a_newer_upload_during_ocr_makes_the_older_run_stale_and_the_newer_one_current() {
    let stack = Stack::load().await;
    let tenant = docket_e2e::stack::tenant();
    let key = format!("inbox/{tenant}/inv.pdf");
    let document = Stack::document_id(&tenant, "inv.pdf");
    // The first version is long, so that its OCR is still running when the second is done.
    let invoice = docket_e2e::stack::invoice_lines("INV-2026-0100", "100.00");
    let appendix: Vec<Vec<String>> = (2..=SLOW_PAGES)
        .map(|p| {
            (1..=20)
                .map(|l| format!("Appendix {p} delivery note line {l} pallet reference {p}{l:02}"))
                .collect()
        })
        .collect();
    let mut pages: Vec<Vec<&str>> = vec![invoice.iter().map(String::as_str).collect()];
    pages.extend(
        appendix
            .iter()
            .map(|page| page.iter().map(String::as_str).collect()),
    );
    let pages: Vec<&[&str]> = pages.iter().map(Vec::as_slice).collect();
    let v1 = stack.upload(&key, docket_e2e::render::pdf(&pages)).await;
    stack.wait_for_action(&document, "ocr.started").await;
    let v2 = stack
        .upload(
            &key,
            docket_e2e::stack::invoice_pdf(&docket_e2e::stack::invoice_lines(
                "INV-2026-0101",
                "200.00",
            )),
        )
        .await;
    let runs = stack.wait_for_runs(&document, 2).await;

    let run_of = |version: &str| {
        runs.iter()
            .find(|r| docket_e2e::stack::s(r, "versionId") == version)
            .unwrap_or_else(|| panic!("no run of version {version}"))
    };
    let (older, newer) = (run_of(&v1), run_of(&v2));
    assert_eq!(docket_e2e::stack::s(older, "status"), "stale");
    assert_eq!(docket_e2e::stack::s(newer, "status"), "completed");
    let current = stack
        .item("DocumentsTable", "documentId", document.as_str())
        .await;
    assert_eq!(
        current["currentRunId"].as_s().unwrap(),
        &docket_e2e::stack::s(newer, "runId")
    );
    let chain = stack.audit(&document).await;
    assert_eq!(
        count_actions(&chain, "run.stale"),
        1,
        "the older run is kept, as stale"
    );
    assert_eq!(count_actions(&chain, "run.completed"), 1);
    let result = stack
        .json(&format!(
            "s3://{}/{tenant}/{document}/{}/result.json",
            stack.out("DerivedBucket"),
            docket_e2e::stack::s(newer, "runId")
        ))
        .await;
    assert_eq!(result["fields"]["total_amount"]["value"], "200.00");
}

#[tokio::test]
async fn an_ocr_start_whose_outcome_stays_unknown_is_unresolved_and_listed_with_its_owner() {
    let stack = Stack::load().await;
    let sdk = util::aws().await;
    let clean = store(&stack, &Faults::none()).await;
    let input = prepared_run(&stack, &clean).await;
    let ctx = ctx(&stack, "docket/test");
    let ledger = ledger(&clean);
    // Every answer of Textract's start is lost: the job may or may not exist.
    let faults =
        one(Rule::lose_response("textract", "StartDocumentTextDetection").probability(1.0));
    let textract = TextractOcr::with_faults(&sdk, &faults);
    // Past admission: not while the quota test holds the provider.
    let _direct = crate::TEXTRACT.read().await;
    let limit = ctx.config.ledger.max_ambiguous_attempts;

    // The state machine's attempts (StartOcr's Ambiguous.OutcomeUnknown retries), and one more.
    let mut errors = Vec::new();
    for _ in 0..=limit {
        let blobs = S3Blobs::new(&util::aws().await);
        let ports = Picked::ocr(&blobs, &clean, &textract, &ledger);
        let err = ocr::start(&ports, &ctx, &input).await.unwrap_err();
        errors.push(err.name());
    }
    let operator = docket_e2e::reviewers::Session { env: Vec::new() };
    let listed = docket_e2e::reviewers::json_of(
        &docket_e2e::reviewers::docket(&operator, &["ops", "unresolved"]).await,
    );

    let mut expected = vec!["Ambiguous.OutcomeUnknown"; limit - 1];
    expected.extend(["Ambiguous.Unresolved", "Ambiguous.Unresolved"]);
    assert_eq!(errors, expected);
    assert_eq!(
        faults.injected() as usize,
        limit,
        "the last attempt did not ask Textract"
    );
    let rec = ledger
        .get(&Step::Ocr.operation(&input.run_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rec.status, LedgerStatus::Unresolved);
    assert_eq!(
        rec.fence as usize, limit,
        "each attempt took the released claim over"
    );
    let case = listed["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["runId"] == input.run_id.as_str())
        .unwrap_or_else(|| panic!("run {} not listed: {listed}", input.run_id));
    assert_eq!(case["owner"], "docket-operations");
    assert!(case["operations"][0]["nextAction"]
        .as_str()
        .unwrap()
        .contains(Step::Ocr.operation(&input.run_id).as_str()));
    let chain = stack.audit(&input.document_id).await;
    assert_eq!(count_actions(&chain, "ocr.unresolved"), 1);

    resolved_by_an_operator_once(&stack, &input, &clean, &ledger).await;
}

/// `docket ops resolve` on the unresolved operation of `input`: refused to a reviewer and to
/// the account's admin credentials, recorded once for the operator (ledger, run, chain), the
/// run gone from the unresolved list, a second resolve refused.
async fn resolved_by_an_operator_once(
    stack: &Stack,
    input: &RunInput,
    store: &DynamoStore,
    ledger: &DynamoLedger,
) {
    use docket_core::ports::{RunStatus, Store};
    use docket_e2e::reviewers::{docket, json_of, operator, reviewer, Session};
    let op = Step::Ocr.operation(&input.run_id);
    let args = [
        "ops",
        "resolve",
        op.as_str(),
        "--note",
        "no Textract job; re-uploaded",
    ];
    let as_reviewer = docket(&reviewer("acme", "alice").await, &args).await;
    let as_admin = docket(&Session { env: Vec::new() }, &args).await;
    let olivia = operator("olivia").await;
    let first = docket(&olivia, &args).await;
    let second = docket(&olivia, &args).await;
    let listed = json_of(&docket(&Session { env: Vec::new() }, &["ops", "unresolved"]).await);

    for refused in [&as_reviewer, &as_admin] {
        assert!(!refused.status.success());
        assert_eq!(json_of(refused)["error"], "Forbidden", "{refused:?}");
    }
    assert!(first.status.success(), "{first:?}");
    assert_eq!(json_of(&first)["resolvedBy"], "olivia");
    assert!(!second.status.success());
    assert_eq!(json_of(&second)["error"], "Conflict.AlreadyDecided");
    let rec = ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.status, LedgerStatus::Resolved);
    assert_eq!(rec.resolved_by.as_deref(), Some("olivia"));
    let run = store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Resolved);
    let chain = stack.audit(&input.document_id).await;
    let resolved: Vec<_> = chain
        .iter()
        .filter(|e| e.draft.action == "operation.resolved")
        .collect();
    assert_eq!(resolved.len(), 1, "one decision in the chain");
    assert_eq!(resolved[0].draft.detail["operator"], "olivia");
    assert!(resolved[0].draft.detail["principal"]
        .as_str()
        .unwrap()
        .ends_with("/olivia"));
    let cases = listed["unresolved"].as_array().unwrap();
    assert!(
        !cases.iter().any(|c| c["runId"] == input.run_id.as_str()),
        "the resolved run is still listed: {listed}"
    );
}
