//! Pipeline benchmark (`make bench`; figures, not pass/fail). Against the stack deployed to a
//! LocalStack whose log is at `DOCKET_LOCALSTACK_LOG`:
//!
//! 1. one auto-approved one-page document (read by Textract's synchronous API): state
//!    transitions (and the polls of the OCR poll loop, entered only when nothing ended the OCR
//!    wait before its deadline), Lambda
//!    invocations (the Tasks', ingest's and ocr-notified's, counted at the wire), DynamoDB write
//!    requests and S3 puts, the last two counted from LocalStack's request log; and its bill per
//!    1,000 such documents, orchestration and OCR apart (`docket_e2e::cost`, applied to what
//!    `docket_e2e::metering` read);
//! 2. the operation ledger's cost for the OCR step, in DynamoDB requests: on the first run (from
//!    the same document's request log), and for a replay of the step after completion (the OCR
//!    function invoked again with the run's input), next to Powertools' published behaviour;
//! 3. a reviewer's decision: time from `docket review approve` starting to the execution
//!    resuming (the review Task's `TaskSucceeded` event), and the CLI's round trip;
//! 4. twenty documents dropped at once: wall time until the last execution ends, and the share
//!    of execution time spent in OCR (StartOcr entered → Validate entered).

use std::time::Instant;

use aws_sdk_sfn::types::HistoryEvent;
use docket_core::ids::sha256_hex;
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};
use docket_e2e::{metering, reviewers, util};

fn log_len(path: &str) -> usize {
    std::fs::metadata(path).map_or(0, |m| m.len() as usize)
}

/// Every request logged since `offset`, as "service.Operation => status".
fn all_requests_since(path: &str, offset: usize) -> Vec<String> {
    let bytes = std::fs::read(path).expect("LocalStack log");
    String::from_utf8_lossy(&bytes[offset.min(bytes.len())..])
        .lines()
        .filter_map(|l| l.split("AWS ").nth(1))
        .map(|l| l.trim().to_string())
        .collect()
}

/// Successful requests logged since `offset`, by "service.Operation".
fn requests_since(path: &str, offset: usize) -> Vec<String> {
    let bytes = std::fs::read(path).expect("LocalStack log");
    String::from_utf8_lossy(&bytes[offset.min(bytes.len())..])
        .lines()
        .filter_map(|l| l.split("AWS ").nth(1))
        .filter(|l| l.contains("=> 200"))
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .collect()
}

fn entered(history: &[HistoryEvent]) -> Vec<(String, f64)> {
    history
        .iter()
        .filter_map(|e| {
            let d = e.state_entered_event_details()?;
            Some((d.name().to_string(), e.timestamp().as_secs_f64()))
        })
        .collect()
}

/// Invocations of ocr-notified run so far: SNS invokes it by ARN, asynchronously (the `Event`
/// invoke is accepted, 202), and the local executor then runs it (200): the runs are counted.
async fn notified_invocations(stack: &Stack) -> usize {
    let subject = sha256_hex(stack.out("OcrNotifiedFunctionArn").as_bytes());
    let invokes = util::wire_requests("lambda", "Invoke", &subject).await;
    invokes.iter().filter(|r| r["status"] == 200).count()
}

/// route's invocations by the bus's receipt rule that settled `run_id`'s consumer answers since
/// `since_ms`, from route's log (one "the consumer answered" line an invocation).
async fn receipt_invocations(stack: &Stack, run_id: &str, since_ms: i64) -> usize {
    let group = format!("/aws/lambda/{}", stack.out("RouteFunctionName"));
    let lines = stack.log_messages(&group, Some(since_ms)).await;
    lines
        .iter()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["fields"]["message"] == "the consumer answered")
        .filter(|line| line["span"]["runId"] == run_id)
        .count()
}

async fn one_document(stack: &Stack, log: &str) {
    let tenant = tenant();
    let notified_before = notified_invocations(stack).await;
    let document = Stack::document_id(&tenant, "bench.pdf");
    let offset = log_len(log);
    let mark = metering::mark().await;
    stack
        .upload(
            &format!("inbox/{tenant}/bench.pdf"),
            invoice_pdf(&invoice_lines("INV-2026-0042", "1,234.50")),
        )
        .await;
    // Waits on Step Functions only: a read of the tables here would be billed to the document.
    let run_id = loop {
        if let Some(name) = stack.executions_of(&document).await.pop() {
            break name;
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    };
    stack.wait_for_execution(&run_id).await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let history = stack.history(&run_id).await;
    let states = entered(&history);
    let polls = states.iter().filter(|(n, _)| n == "PollOcr").count();
    let notified = notified_invocations(stack).await - notified_before;
    let receipts = receipt_invocations(stack, &run_id, mark.since_ms()).await;
    let invocations = history
        .iter()
        .filter(|e| {
            e.r#type().as_str() == "TaskScheduled"
                || e.r#type().as_str() == "LambdaFunctionScheduled"
        })
        .count()
        + 1 // ingest, invoked by EventBridge
        + notified // ocr-notified, invoked by SNS
        + receipts; // route, invoked by the receipt rule with the consumer's answer
    let requests = requests_since(log, offset);
    let count = |ops: &[&str]| {
        requests
            .iter()
            .filter(|r| ops.contains(&r.as_str()))
            .count()
    };
    let dynamodb_writes = count(&[
        "dynamodb.PutItem",
        "dynamodb.UpdateItem",
        "dynamodb.DeleteItem",
        "dynamodb.TransactWriteItems",
        "dynamodb.BatchWriteItem",
    ]);
    let s3_puts = count(&["s3.PutObject", "s3.CopyObject"]) - 1; // minus the upload itself
    println!("bench: one auto-approved one-page document (run {run_id})");
    let ended_by = match (polls, notified) {
        (0, 0) => "its own invocation: one page, read at once",
        (0, _) => "its notification",
        _ => "its deadline",
    };
    println!(
        "bench:   state transitions: {} ({polls} polls: the OCR wait ended by {ended_by})",
        states.len()
    );
    println!(
        "bench:   lambda invocations: {invocations} (ingest + {} task invocations + \
         {notified} ocr-notified + {receipts} receipt; the reference consumer's not counted)",
        invocations - 1 - notified - receipts
    );
    println!("bench:   dynamodb write requests: {dynamodb_writes}");
    println!("bench:   s3 puts by the pipeline: {s3_puts}");
    let (usage, _) = metering::usage_since(stack, &mark, 1, states.len(), invocations, 1).await;
    usage.bill().print("auto-approved one-page documents");
    let tables = metering::dynamodb_write_units_by_table(&mark).await;
    let tables: Vec<String> = tables.iter().map(|(t, u)| format!("{t} {u}")).collect();
    println!(
        "bench:   dynamodb write units by table: {}",
        tables.join(", ")
    );
    ledger_cost(stack, log, &run_id, count(&["dynamodb.UpdateItem"])).await;
}

/// The OCR step's ledger cost: the first run's claim (completed rides in the step's audit
/// transaction), and a replay of the step after completion.
async fn ledger_cost(stack: &Stack, log: &str, run_id: &str, first_run_updates: usize) {
    let execution = stack
        .sfn
        .describe_execution()
        .execution_arn(stack.execution_arn(run_id))
        .send()
        .await
        .unwrap();
    let input: serde_json::Value = serde_json::from_str(execution.input().unwrap()).unwrap();
    let token = "AQCEAAAAKgAAAAMAAAAAAAAAAZbenchreplaytoken==";
    let payload = serde_json::json!({"action": "start", "run": input["run"], "token": token});
    let offset = log_len(log);
    let out = stack
        .lambda
        .invoke()
        .function_name(stack.out("OcrFunctionName"))
        .payload(aws_sdk_lambda::primitives::Blob::new(payload.to_string()))
        .send()
        .await
        .unwrap();
    assert!(out.function_error().is_none(), "{:?}", out.payload());
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let replay: Vec<String> = all_requests_since(log, offset)
        .into_iter()
        .filter(|r| r.starts_with("dynamodb."))
        .collect();
    println!(
        "bench: ledger cost of the OCR step (Powertools: first run 2 writes, duplicate 1 failed \
         conditional put)"
    );
    println!(
        "bench:   first run: {first_run_updates} UpdateItem in the run (the OCR claim; the call \
         slots of the execution's start and of the one-page read: 2; the receipt wait's token \
         and answer: 2); completed is an item of the step's one audit transaction: 0 extra \
         requests (a job's: its wait's waiter and notice, and accepted in a second transaction)"
    );
    println!(
        "bench:   replay after completion: {replay:?} (no provider call; its callback, with a \
         token no Task waits on, is refused)"
    );
}

async fn twenty_at_once(stack: &Stack) {
    let tenant = tenant();
    let started = Instant::now();
    let uploads = (0..20).map(|i| {
        let key = format!("inbox/{tenant}/batch-{i}.pdf");
        let body = invoice_pdf(&invoice_lines(&format!("INV-2026-{i:04}"), "1,234.50"));
        async move { stack.upload(&key, body).await }
    });
    for upload in uploads {
        upload.await;
    }
    let mut ocr = 0.0;
    let mut total = 0.0;
    for i in 0..20 {
        let document = Stack::document_id(&tenant, &format!("batch-{i}.pdf"));
        let runs = stack.wait_for_runs(&document, 1).await;
        let run_id = s(&runs[0], "runId");
        stack.wait_for_execution(&run_id).await;
        let states = entered(&stack.history(&run_id).await);
        let at = |name: &str| states.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
        if let (Some(start), Some(validate), Some(end)) = (
            at("StartOcr"),
            at("Validate"),
            states.last().map(|(_, t)| *t),
        ) {
            ocr += validate - start;
            total += end - start;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    println!("bench: 20 documents dropped at once: all done in {wall:.1} s wall time");
    println!(
        "bench:   share of execution time in OCR (start -> validate): {:.0}%",
        100.0 * ocr / total.max(1e-9)
    );
}

#[tokio::main]
async fn main() {
    let log = std::env::var("DOCKET_LOCALSTACK_LOG").expect("DOCKET_LOCALSTACK_LOG");
    let stack = Stack::load().await;
    one_document(&stack, &log).await;
    review_resume(&stack).await;
    twenty_at_once(&stack).await;
}

async fn review_resume(stack: &Stack) {
    let tenant = tenant();
    let alice = reviewers::reviewer(&tenant, "alice").await;
    let mut resume = Vec::new();
    let mut round_trip = Vec::new();
    for _ in 0..5 {
        let (document, task) = reviewers::pending_task(stack, &tenant, &alice).await;
        let run_id = reviewers::wait_for_status(stack, &document, "awaiting_review").await;
        let sent = std::time::SystemTime::now();
        let started = Instant::now();
        let out = reviewers::docket(&alice, &["review", "approve", &task]).await;
        round_trip.push(started.elapsed().as_secs_f64() * 1000.0);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stack.wait_for_execution(&run_id).await;
        let history = stack.history(&run_id).await;
        // The Validate Task's state exited: its wait, the review's, ended (StartOcr waits for a
        // token too, before it).
        let resumed = history
            .iter()
            .find(|e| {
                e.state_exited_event_details()
                    .is_some_and(|d| d.name() == "Validate")
            })
            .map(|e| e.timestamp().as_secs_f64())
            .expect("the review Task ended");
        let sent = sent
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        resume.push((resumed - sent) * 1000.0);
    }
    resume.sort_by(f64::total_cmp);
    round_trip.sort_by(f64::total_cmp);
    println!("bench: review decision -> execution resumed (5 approvals via docket review approve)");
    println!(
        "bench:   decision sent -> review Task succeeded: median {:.0} ms (min {:.0}, max {:.0})",
        resume[2], resume[0], resume[4]
    );
    println!(
        "bench:   CLI round trip (sign, function URL, decide, callback): median {:.0} ms",
        round_trip[2]
    );
}
