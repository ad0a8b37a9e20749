//! Bulk reprocess benchmark (`make bench`; figures, not pass/fail). Against the stack deployed to
//! a LocalStack whose log is at `DOCKET_LOCALSTACK_LOG`: `BENCH_REPROCESS_DOCS` documents (1,000
//! by default) of a fresh tenant are uploaded and run once, then reprocessed with
//! `docket reprocess` (their stored OCR reused). It prints the reprocess's wall time, the state
//! transitions and Lambda invocations per item (pipeline runs and the bulk machine's), the
//! Distributed Map's child executions (one per batch) and their peak concurrency against
//! `ReprocessConcurrency`, and the text detections started (0 expected: the OCR is reused).

use std::io::Write;
use std::time::{Duration, Instant};

use aws_sdk_sfn::types::HistoryEvent;
use docket_e2e::reviewers::{docket, json_of};
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Requests LocalStack logged between the byte offsets `from` and `to`, as "service.Operation".
fn requests_between(path: &str, from: usize, to: usize) -> Vec<String> {
    let bytes = std::fs::read(path).expect("LocalStack log");
    let to = to.min(bytes.len());
    String::from_utf8_lossy(&bytes[from.min(to)..to])
        .lines()
        .filter_map(|l| l.split("AWS ").nth(1))
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .collect()
}

/// The batches the reprocess function ran (its log group `group`, since `since_ms`), as (start,
/// end) instants in seconds: each batch logs "batch started" and "batch ended" with the
/// function's clock (`at`), so no pairing is needed to count the batches in flight.
async fn batches(stack: &Stack, group: &str, since_ms: i64) -> (Vec<f64>, Vec<f64>) {
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    for message in stack.log_messages(group, Some(since_ms)).await {
        for line in message.lines() {
            let Ok(line) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let at = line["fields"]["at"]
                .as_str()
                .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
                .map(|t| t.unix_timestamp_nanos() as f64 / 1e9);
            match (line["fields"]["message"].as_str(), at) {
                (Some("batch started"), Some(at)) => starts.push(at),
                (Some("batch ended"), Some(at)) => ends.push(at),
                _ => {}
            }
        }
    }
    (starts, ends)
}

/// The most batches in flight at one instant.
fn peak(starts: &[f64], ends: &[f64]) -> usize {
    let mut edges: Vec<(f64, i32)> = starts.iter().map(|t| (*t, 1)).collect();
    edges.extend(ends.iter().map(|t| (*t, -1)));
    edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let (mut open, mut most) = (0i32, 0i32);
    for (_, step) in edges {
        open += step;
        most = most.max(open);
    }
    most as usize
}

fn log_len(path: &str) -> usize {
    std::fs::metadata(path).map_or(0, |m| m.len() as usize)
}

/// The reprocess function's batches since `since_ms`.
async fn count_batches(stack: &Stack, since_ms: i64) -> usize {
    let group = format!("/aws/lambda/{}", stack.out("ReprocessFunctionName"));
    batches(stack, &group, since_ms).await.0.len()
}

#[tokio::main]
async fn main() {
    let log = std::env::var("DOCKET_LOCALSTACK_LOG").expect("DOCKET_LOCALSTACK_LOG");
    let docs: usize = std::env::var("BENCH_REPROCESS_DOCS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let stack = Stack::load().await;
    let tenant = tenant();

    // The documents, run once (their OCR is what the reprocess reuses).
    let seed_offset = log_len(&log);
    let seeded = Instant::now();
    for i in 0..docs {
        let key = format!("inbox/{tenant}/re-{i}.pdf");
        let body = invoice_pdf(&invoice_lines(&format!("INV-RE-{i:05}"), "1,234.50"));
        stack.upload(&key, body).await;
    }
    let mut completed = 0;
    for i in 0..docs {
        let document = Stack::document_id(&tenant, &format!("re-{i}.pdf"));
        let runs = stack.wait_for_runs(&document, 1).await;
        completed += usize::from(s(&runs[0], "status") == "completed");
        if (i + 1) % 50 == 0 {
            eprint!("\rbench: {} of {docs} uploads ended", i + 1);
            std::io::stderr().flush().ok();
        }
    }
    eprintln!();
    println!(
        "bench: reprocess: {docs} documents uploaded and run once in {:.0} s ({completed} completed)",
        seeded.elapsed().as_secs_f64()
    );

    // The reprocess, timed from the command's start to its last run's end.
    let offset = log_len(&log);
    let since_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let started = Instant::now();
    let operator = docket_e2e::reviewers::operator("bench").await;
    let args = [
        "reprocess",
        "--tenant",
        &tenant,
        "--reason",
        "bench",
        "--timeout-seconds",
        "7200",
    ];
    let out = docket(&operator, &args).await;
    let wall = started.elapsed().as_secs_f64();
    let report = json_of(&out);
    assert!(out.status.success(), "{report}");
    let items = report["items"].as_u64().unwrap_or(0) as usize;
    println!(
        "bench: reprocess of {items} documents with stored OCR: {wall:.0} s wall time \
         ({} done, {} failed), {:.1} documents/s",
        report["done"],
        report["failed"],
        items as f64 / wall
    );

    // Transitions: every new run's, and the bulk execution's (its child executions' are not
    // in its history).
    let (mut transitions, mut tasks) = (0, 0);
    for run in report["runs"].as_array().into_iter().flatten() {
        let history = stack.history(run["runId"].as_str().unwrap()).await;
        let is = |e: &&HistoryEvent, kind: &str| e.r#type().as_str() == kind;
        transitions += history
            .iter()
            .filter(|e| e.state_entered_event_details().is_some())
            .count();
        tasks += history.iter().filter(|e| is(e, "TaskScheduled")).count();
    }
    let bulk =
        stack
            .out("BulkReprocessStateMachineArn")
            .replacen(":stateMachine:", ":execution:", 1);
    let bulk = format!("{bulk}:{}", report["reprocessId"].as_str().unwrap());
    let bulk_history = stack
        .sfn
        .get_execution_history()
        .execution_arn(&bulk)
        .max_results(1000)
        .send()
        .await
        .expect("bulk history");
    let bulk_entered = bulk_history
        .events()
        .iter()
        .filter(|e| e.state_entered_event_details().is_some())
        .count();
    println!(
        "bench:   state transitions per item: {:.1} (pipeline runs) + {:.3} (bulk execution: {bulk_entered})",
        transitions as f64 / items.max(1) as f64,
        bulk_entered as f64 / items.max(1) as f64
    );

    // Text detections the functions asked for, from LocalStack's request log: the first runs'
    // (one per document) against the reprocess's.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let detections = |from: usize, to: usize| {
        requests_between(&log, from, to)
            .iter()
            .filter(|r| *r == "textract.StartDocumentTextDetection")
            .count()
    };
    println!(
        "bench:   text detections started: {} by the reprocess ({} by the first runs)",
        detections(offset, usize::MAX),
        detections(seed_offset, offset)
    );

    let batches_run = count_batches(&stack, since_ms).await;
    println!(
        "bench:   lambda invocations per item: {:.2} ({tasks} by the pipeline runs, \
         {batches_run} reprocess batches)",
        (tasks + batches_run) as f64 / items.max(1) as f64,
    );

    // The Map's children: one invocation of the reprocess function per batch attempt.
    let group = format!("/aws/lambda/{}", stack.out("ReprocessFunctionName"));
    let (starts, ends) = batches(&stack, &group, since_ms).await;
    let concurrency = stack.parameter("ReprocessConcurrency").await;
    println!(
        "bench:   map child executions (batches of 20): {} (expected {}); peak batches in \
         flight {} (MaxConcurrency {concurrency})",
        starts.len(),
        items.div_ceil(20),
        peak(&starts, &ends)
    );
}
