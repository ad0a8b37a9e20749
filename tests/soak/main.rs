//! Faults through the deployed stack (issue "Exactly-once effects"): throttling bursts, and a
//! soak of 100 documents with every fault mixed in at low probability. These change the whole
//! local AWS (Chaos-API rules; the functions' SDK fault configuration), so they live in their own
//! binary, run one test at a time after the pipeline tests (`scripts/test-local.sh`).
//!
//! Each test counts what must hold for every document: one run, one execution, a final state,
//! exactly one of each step's audit entries for a completed run (at most one otherwise), a
//! verified chain, a result whose hash is the one the audit log records; every unresolved run has
//! an owner in the operator listing; and every fault rule fired (`faults`), so that the faults
//! the outcomes are excused by did happen. Transient faults lose no document: the 100-document
//! soak redrives what failed (`docket ops redrive`) and ends with none failed. `redrive.rs`: a
//! run failed past its retries completes on redrive, with one Textract job. `notify.rs`: a run
//! whose OCR notification is lost polls its job after the wait and completes. `throttling.rs`:
//! throttling bursts of DynamoDB and Lambda.

mod faults;
mod notify;
mod pinned;
mod redrive;
mod sweep;
mod throttling;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use aws_config::retry::RetryConfig;
use aws_sdk_dynamodb::types::AttributeValue;
use docket_core::ids::{sha256_hex, DocumentId, RunId};
use docket_e2e::reviewers;
use docket_e2e::stack::{
    invoice_lines, invoice_pdf, invoice_pdf_of_two_pages, s, tenant, Stack, COMPLETED_RUN_ACTIONS,
    RUN_DEADLINE,
};
use docket_e2e::util;
use faults::{assert_each_fired, FaultsOn};
use serde_json::json;

/// Clients for the test itself: under chaos its own reads are throttled too, so they retry more.
async fn patient_stack() -> Stack {
    let cfg = util::aws()
        .await
        .into_builder()
        .retry_config(
            RetryConfig::standard()
                .with_max_attempts(12)
                .with_max_backoff(Duration::from_secs(2)),
        )
        .build();
    Stack::load_with(cfg)
}

/// How Textract reads the dropped invoices.
#[derive(Clone, Copy)]
enum Read {
    /// Every one as a job (two pages): its completion notified, then polled.
    AsJobs,
    /// Every other one at once (one page, the synchronous read), the rest as jobs.
    Mixed,
}

/// Uploads `n` distinct invoices for a fresh tenant, one after another (the pipeline works on
/// them concurrently all the same), read as `read` says; returns their documents.
async fn drop_invoices(stack: &Stack, n: usize, read: Read) -> (String, Vec<DocumentId>) {
    let tenant = tenant();
    let mut documents = Vec::new();
    for i in 0..n {
        let name = format!("inv-{i:03}.pdf");
        let lines = invoice_lines(
            &format!("INV-2026-{:04}", 1000 + i),
            &format!("{}.50", 100 + i),
        );
        let body = match read {
            Read::Mixed if i % 2 == 0 => invoice_pdf(&lines),
            _ => invoice_pdf_of_two_pages(&lines),
        };
        stack.upload(&format!("inbox/{tenant}/{name}"), body).await;
        documents.push(Stack::document_id(&tenant, &name));
    }
    (tenant, documents)
}

/// How long a completed run's event may take to be published, or to be redelivered when its
/// delivery or the consumer's answer was lost (the bus's retries of a target run out): the
/// sweep schedule's period (60 s) plus the age at which it takes a record (120 s), with a margin.
const SWEEP_DEADLINE: Duration = Duration::from_secs(240);

/// What one document ended as.
#[derive(Debug)]
struct Outcome {
    document: DocumentId,
    runs: Vec<BTreeMap<String, AttributeValue>>,
}

/// Waits until every document has a run and no run is `started` (bounded); a document with no
/// run by then is lost.
async fn settle(stack: &Stack, documents: &[DocumentId], deadline: Duration) -> Vec<Outcome> {
    let until = Instant::now() + deadline;
    let mut pending: Vec<DocumentId> = documents.to_vec();
    let mut done = Vec::new();
    while !pending.is_empty() {
        let mut still = Vec::new();
        for d in pending {
            let runs = stack.runs(&d).await;
            if !runs.is_empty() && runs.iter().all(|r| s(r, "status") != "started") {
                done.push(Outcome { document: d, runs });
            } else {
                still.push(d);
            }
        }
        pending = still;
        if pending.is_empty() {
            break;
        }
        if Instant::now() >= until {
            let mut where_ = Vec::new();
            for d in &pending[..pending.len().min(5)] {
                where_.push(whereabouts(stack, d).await);
            }
            panic!(
                "{} of {} documents not final after {deadline:?}:\n{}",
                pending.len(),
                documents.len(),
                where_.join("\n")
            );
        }
        eprintln!("settling: {}/{} final", done.len(), documents.len());
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    done
}

/// Where a document that is not final stands: each run's status, its execution's status, and
/// the last state entered and failure of its history.
async fn whereabouts(stack: &Stack, d: &DocumentId) -> String {
    let mut out = format!("{d}:");
    let executions = stack.executions_of(d).await;
    for run in stack.runs(d).await {
        let run_id = s(&run, "runId");
        if !executions.contains(&run_id) {
            out += &format!(" run {run_id} {}, no execution;", s(&run, "status"));
            continue;
        }
        let history = stack.history(&run_id).await;
        let entered = history
            .iter()
            .filter_map(|e| e.state_entered_event_details())
            .map(|e| e.name().to_string())
            .next_back();
        let failed = history
            .iter()
            .filter_map(|e| e.task_failed_event_details())
            .map(|e| e.error().unwrap_or_default().to_string())
            .next_back();
        let execution = stack
            .sfn
            .describe_execution()
            .execution_arn(stack.execution_arn(&run_id))
            .send()
            .await
            .map(|o| o.status().as_str().to_string())
            .unwrap_or_else(|e| format!("{e}"));
        out += &format!(
            " run {run_id} {}, execution {execution}, last state {entered:?}, last failure {failed:?};",
            s(&run, "status")
        );
    }
    out
}

/// Counts duplicates of every effect of one document; returns the problems found.
async fn duplicates(stack: &Stack, outcome: &Outcome) -> Vec<String> {
    let mut problems = Vec::new();
    let d = &outcome.document;
    if outcome.runs.len() != 1 {
        problems.push(format!("{d}: {} runs", outcome.runs.len()));
    }
    // A completed run's event is published after its completion, by the same route call: the
    // chain is read once the execution ended. A route that stopped in between (its Lambda timed
    // out on every retry) leaves the event to the outbox sweeper, which relays it within its
    // schedule's period plus the age it waits for: the publication is waited for that long. Its
    // execution ends when the consumer's answer ends the receipt wait; a delivery or an answer
    // that was lost is redelivered by the same sweeper, so the execution may take that long more.
    for run in outcome
        .runs
        .iter()
        .filter(|r| s(r, "status") == "completed")
    {
        let run = s(run, "runId");
        stack
            .wait_for_execution_within(&run, RUN_DEADLINE + SWEEP_DEADLINE)
            .await;
    }
    let completed = outcome.runs.iter().any(|r| s(r, "status") == "completed");
    let until = Instant::now() + SWEEP_DEADLINE;
    let chain = loop {
        let chain = stack.audit(d).await; // verifies the chain
        let published = chain.iter().any(|e| e.draft.action == "event.published");
        if !completed || published || Instant::now() >= until {
            break chain;
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    };
    for run in &outcome.runs {
        let run_id = s(run, "runId");
        let executions = stack.executions_of(d).await;
        if executions != [run_id.as_str()] {
            problems.push(format!("{d}: executions {executions:?} for run {run_id}"));
        }
        // A completed run went through every step once; any other may have stopped early.
        let completed = s(run, "status") == "completed";
        for action in COMPLETED_RUN_ACTIONS {
            let n = chain
                .iter()
                .filter(|e| {
                    e.draft.action == *action
                        && e.draft.run_id.as_ref().map(RunId::as_str) == Some(run_id.as_str())
                })
                .count();
            if n > 1 || (completed && n != 1) {
                problems.push(format!("{d}: {n} {action} entries for {run_id}"));
            }
        }
        if completed {
            let recorded = chain
                .iter()
                .find(|e| e.draft.action == "run.completed")
                .and_then(|e| e.draft.detail["sha256"].as_str().map(str::to_string));
            let pointer = match run.get("outputs") {
                Some(AttributeValue::M(m)) => m.get("result").and_then(|v| v.as_s().ok()).cloned(),
                _ => None,
            };
            let Some(pointer) = pointer else {
                problems.push(format!("{d}: completed without a result pointer"));
                continue;
            };
            let body = stack.object_at(&pointer).await;
            if recorded.as_deref() != Some(sha256_hex(&body).as_str()) {
                problems.push(format!("{d}: result content differs from the audited one"));
            }
        }
    }
    problems
}

/// The operator listing, `docket ops unresolved`: run id → owner, for every unresolved run.
async fn unresolved_owners() -> BTreeMap<String, Option<String>> {
    let operator = reviewers::Session { env: Vec::new() };
    let out = reviewers::docket(&operator, &["ops", "unresolved"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    reviewers::json_of(&out)["unresolved"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|case| {
            let run = case["runId"].as_str()?;
            Some((run.to_string(), case["owner"].as_str().map(str::to_string)))
        })
        .collect()
}

/// How long every Lambda Invoke is refused in the outage test: long enough for the queue's
/// poller to take the upload and be refused.
const INVOKE_OUTAGE: Duration = Duration::from_secs(25);

#[tokio::test]
async fn an_upload_whose_ingest_invoke_is_throttled_waits_in_its_queue_and_is_ingested_once() {
    let stack = patient_stack().await;
    let ingest = stack.out("IngestFunctionArn").to_string();
    let subject = sha256_hex(ingest.as_bytes());
    let throttled =
        |requests: &[serde_json::Value]| requests.iter().filter(|r| r["status"] == 429).count();
    let before = throttled(&util::wire_requests("lambda", "Invoke", &subject).await);
    let rules = json!([
        {"service": "lambda", "operation": "Invoke", "region": "us-east-1", "probability": 1.0,
         "error": {"statusCode": 429, "code": "TooManyRequestsException"}}
    ]);
    let on = FaultsOn::on(&stack, rules, None).await;
    let (_, documents) = drop_invoices(&stack, 1, Read::AsJobs).await;
    tokio::time::sleep(INVOKE_OUTAGE).await;
    let refused = throttled(&util::wire_requests("lambda", "Invoke", &subject).await) - before;
    on.off().await;
    // The queue's poller took the upload and was refused: the message stays in the queue,
    // hidden for the visibility timeout, and comes back.
    assert!(
        refused >= 1,
        "the queue's poller never invoked ingest during the outage"
    );
    assert!(
        stack.runs(&documents[0]).await.is_empty(),
        "no run during the outage"
    );

    // (the visibility timeout, 180 s, passes before the message is delivered again)
    let outcomes = settle(&stack, &documents, RUN_DEADLINE * 2).await;
    let statuses: Vec<String> = outcomes[0].runs.iter().map(|r| s(r, "status")).collect();
    assert_eq!(statuses, ["completed"]);
    let problems = duplicates(&stack, &outcomes[0]).await;
    assert!(problems.is_empty(), "{problems:#?}");
}

/// How many documents the mixed-fault soak drops: `SOAK_DOCUMENTS`, 100 by default (`make
/// test`); `make bench` runs 500.
fn soak_documents() -> usize {
    std::env::var("SOAK_DOCUMENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100)
}

#[tokio::test]
async fn a_soak_with_mixed_faults_ends_each_document_in_a_final_state_without_duplicates() {
    let stack = patient_stack().await;
    let n = soak_documents();
    let chaos_rules = json!([
        {"service": "dynamodb", "region": "us-east-1", "probability": 0.03,
         "error": {"statusCode": 400, "code": "ProvisionedThroughputExceededException"}},
        {"service": "lambda", "operation": "Invoke", "region": "us-east-1", "probability": 0.03,
         "error": {"statusCode": 429, "code": "TooManyRequestsException"}},
        {"service": "textract", "region": "us-east-1", "probability": 0.05,
         "error": {"statusCode": 400, "code": "ThrottlingException"}}
    ]);
    // Lost answers inside the functions: the request commits, the answer is dropped. No seed:
    // each function process draws from its own clock seed, not all the same sequence. Each
    // rule's odds give it five or more expected firings over the soak's calls of its operation
    // (about 120 UpdateItem: 0.03 left it silent in one run in about 40; 100 StartExecution at
    // 0.05, five, left it silent once: 0.6% odds, 0.003% at 0.1; half the documents are read
    // at once and half as jobs, so each Textract call is made about 50 times: 0.2, ten, 0.001%),
    // and each must fire.
    let sdk_rules = json!({"rules": [
        {"service": "dynamodb", "operation": "TransactWriteItems", "mode": "lose_response", "probability": 0.03},
        {"service": "dynamodb", "operation": "UpdateItem", "mode": "lose_response", "probability": 0.05},
        {"service": "textract", "operation": "StartDocumentTextDetection", "mode": "lose_response", "probability": 0.2},
        {"service": "textract", "operation": "DetectDocumentText", "mode": "lose_response", "probability": 0.2},
        {"service": "s3", "operation": "PutObject", "mode": "lose_response", "probability": 0.03},
        {"service": "sfn", "operation": "StartExecution", "mode": "lose_response", "probability": 0.1}
    ]});
    let on = FaultsOn::on(&stack, chaos_rules, Some(&sdk_rules)).await;
    let soak_start = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let started = Instant::now();
    let (_, documents) = drop_invoices(&stack, n, Read::Mixed).await;
    // 900 s for 100 (about 3 s each on these machines, with room), proportionally more for more.
    let deadline = Duration::from_secs(900.max(9 * n as u64));
    let outcomes = settle(&stack, &documents, deadline).await;
    let elapsed = started.elapsed();
    let chaos_fired = on.chaos_fired();
    let sdk_fired = on.sdk_fired(&stack).await;
    on.off().await;
    eprintln!("soak: faults fired: chaos {chaos_fired:?}, sdk {sdk_fired:?}");
    assert_each_fired(
        "Chaos-API",
        &[
            "dynamodb ProvisionedThroughputExceededException".into(),
            "lambda TooManyRequestsException".into(),
            "textract ThrottlingException".into(),
        ],
        &chaos_fired,
    );
    let sdk_names: Vec<String> = sdk_rules["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {}:",
                r["service"].as_str().unwrap(),
                r["operation"].as_str().unwrap()
            )
        })
        .collect();
    assert_each_fired("SDK", &sdk_names, &sdk_fired);

    // A run that failed for a technical reason is redriven, as an operator would (its steps
    // still run on the versions with the faults, so a round may leave one failed again).
    let mut outcomes = outcomes;
    let mut redriven = 0;
    for round in 1..=REDRIVE_ROUNDS {
        let failed: Vec<String> = outcomes
            .iter()
            .flat_map(|o| o.runs.iter())
            .filter(|r| s(r, "status") == "failed")
            .map(|r| format!("{} ({})", s(r, "runId"), s(r, "error")))
            .collect();
        if failed.is_empty() {
            break;
        }
        eprintln!("soak: redrive round {round}: {failed:?}");
        let operator = reviewers::Session { env: Vec::new() };
        let since = soak_start.clone();
        let out = reviewers::docket(&operator, &["ops", "redrive", "--failed-since", &since]).await;
        let answer = reviewers::json_of(&out);
        redriven += answer["redriven"].as_array().map_or(0, |r| r.len());
        outcomes = settle(&stack, &documents, RUN_DEADLINE * 2).await;
    }

    let mut problems = Vec::new();
    let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for o in &outcomes {
        problems.extend(duplicates(&stack, o).await);
        for r in &o.runs {
            *by_status.entry(s(r, "status")).or_default() += 1;
            if s(r, "status") != "completed" {
                *errors.entry(s(r, "error")).or_default() += 1;
            }
        }
    }
    let owners = unresolved_owners().await;
    let ours: Vec<_> = outcomes
        .iter()
        .flat_map(|o| o.runs.iter())
        .filter(|r| s(r, "status") == "unresolved")
        .map(|r| s(r, "runId"))
        .collect();
    for run in &ours {
        match owners.get(run) {
            Some(Some(_)) => {}
            other => problems.push(format!("unresolved run {run} listed as {other:?}")),
        }
    }
    eprintln!(
        "soak: {n} documents in {elapsed:?}: {by_status:?} (errors {errors:?}), {} unresolved, \
         {redriven} redriven",
        ours.len()
    );
    assert_eq!(outcomes.len(), documents.len(), "no document lost");
    assert!(problems.is_empty(), "{problems:#?}");
    // Transient faults lose nothing: every document completes, or waits unresolved with an
    // owner (an OCR start whose outcome stayed unknown); none is left failed.
    let allowed = ["completed", "unresolved"];
    assert!(
        by_status.keys().all(|k| allowed.contains(&k.as_str())),
        "{by_status:?}, errors {errors:?}"
    );
}

/// How many times the soak redrives what failed before it calls a failed run lost.
const REDRIVE_ROUNDS: usize = 3;
