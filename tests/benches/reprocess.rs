//! Bulk reprocess benchmark (`make bench`; figures, not pass/fail). Against the stack deployed to
//! a LocalStack whose log is at `DOCKET_LOCALSTACK_LOG`: `BENCH_REPROCESS_DOCS` documents (1,000
//! by default) of a fresh tenant are uploaded and run once, then reprocessed with
//! `docket reprocess` (their stored OCR reused). It prints the reprocess's wall time, the state
//! transitions and Lambda invocations per item (pipeline runs and the bulk machine's), the
//! Distributed Map's child executions (one per batch) and their peak concurrency against
//! `ReprocessConcurrency`, and the text detections started (0 expected: the OCR is reused).

use std::io::Write;
use std::time::{Duration, Instant};

use docket_e2e::reviewers::{docket, json_of, Session};
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};

/// Requests LocalStack logged since `offset` (bytes), as "service.Operation".
fn requests_since(path: &str, offset: usize) -> Vec<String> {
    let bytes = std::fs::read(path).expect("LocalStack log");
    String::from_utf8_lossy(&bytes[offset.min(bytes.len())..])
        .lines()
        .filter_map(|l| l.split("AWS ").nth(1))
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .collect()
}

/// Each invocation of the function logging to `group` since `since_ms`, as (start, end) in
/// milliseconds: its REPORT line's Duration before the line's timestamp.
async fn invocations(stack: &Stack, group: &str, since_ms: i64) -> Vec<(f64, f64)> {
    let mut spans = Vec::new();
    let mut next = None;
    loop {
        let out = stack
            .logs
            .filter_log_events()
            .log_group_name(group)
            .start_time(since_ms)
            .set_next_token(next)
            .send()
            .await
            .expect("reprocess log events");
        for event in out.events() {
            let (Some(message), Some(at)) = (event.message(), event.timestamp()) else {
                continue;
            };
            for line in message
                .lines()
                .filter(|l| l.starts_with("REPORT RequestId:"))
            {
                let duration = line
                    .split('\t')
                    .find_map(|f| f.trim().strip_prefix("Duration: "))
                    .and_then(|d| d.trim_end_matches(" ms").parse::<f64>().ok())
                    .unwrap_or(0.0);
                spans.push((at as f64 - duration, at as f64));
            }
        }
        next = out.next_token().map(str::to_string);
        if next.is_none() {
            return spans;
        }
    }
}

/// The most spans open at one instant.
fn peak(spans: &[(f64, f64)]) -> usize {
    let mut edges: Vec<(f64, i32)> = spans
        .iter()
        .flat_map(|(a, b)| [(*a, 1), (*b, -1)])
        .collect();
    edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let (mut open, mut most) = (0i32, 0i32);
    for (_, step) in edges {
        open += step;
        most = most.max(open);
    }
    most as usize
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
    let offset = std::fs::metadata(&log).map_or(0, |m| m.len() as usize);
    let since_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let started = Instant::now();
    let operator = Session { env: Vec::new() };
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
    let mut transitions = 0;
    for run in report["runs"].as_array().into_iter().flatten() {
        let run_id = run["runId"].as_str().unwrap();
        transitions += stack
            .history(run_id)
            .await
            .iter()
            .filter(|e| e.state_entered_event_details().is_some())
            .count();
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

    // Invocations and text detections, from LocalStack's request log.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let requests = requests_since(&log, offset);
    let count = |op: &str| requests.iter().filter(|r| *r == op).count();
    println!(
        "bench:   lambda invocations per item: {:.2} ({} in all); text detections started: {}",
        count("lambda.Invoke") as f64 / items.max(1) as f64,
        count("lambda.Invoke"),
        count("textract.StartDocumentTextDetection")
    );

    // The Map's children: one invocation of the reprocess function per batch attempt.
    let group = format!("/aws/lambda/{}", stack.out("ReprocessFunctionName"));
    let spans = invocations(&stack, &group, since_ms).await;
    let concurrency = stack.parameter("ReprocessConcurrency").await;
    println!(
        "bench:   map child executions (batches of 20): {} (expected {}); peak concurrency {} \
         (MaxConcurrency {concurrency})",
        spans.len(),
        items.div_ceil(20),
        peak(&spans)
    );
}
