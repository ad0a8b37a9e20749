//! Bulk reprocess benchmark (`make bench`; figures, not pass/fail). Against the stack deployed to
//! a LocalStack whose log is at `DOCKET_LOCALSTACK_LOG`: `BENCH_REPROCESS_DOCS` documents (1,000
//! by default) of a fresh tenant are uploaded and run once, at most `BENCH_SEED_WAVE` (100) at a
//! time (a burst of uploads is `make bench-scale`'s subject, not this one's), then reprocessed with
//! `docket reprocess` (their stored OCR reused). With `BENCH_REPROCESS_TENANT` (a tenant an
//! earlier run seeded, which it prints) it skips the seeding and reprocesses that tenant's
//! documents again, as their next generation. It prints the reprocess's wall time, the state
//! transitions and Lambda invocations per item (pipeline runs and the bulk machine's), the
//! Distributed Map's child executions (one per batch) and their peak concurrency against
//! `ReprocessConcurrency`, the peak of the new runs' executions at work against
//! `ReprocessConcurrency` × 20 (start to end, receipt waits included) and how they ended, and
//! the text detections started (0 expected: the OCR is reused).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_sfn::types::HistoryEvent;
use docket_e2e::reviewers::{docket, json_of};
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};
use docket_e2e::util;
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

/// What the reprocess function logged of one batch (its log lines name the batch by its first
/// run): when its first start attempt began, how many attempts and checks it took, and when a
/// check found it done (its child execution then ends), as seconds of the function's clock.
#[derive(Debug, Default)]
struct BatchLog {
    started: Option<f64>,
    attempts: usize,
    checks: usize,
    done: Option<f64>,
}

/// The batches the reprocess function ran (its log group `group`, since `since_ms`), by batch.
async fn batches(stack: &Stack, group: &str, since_ms: i64) -> BTreeMap<String, BatchLog> {
    let mut batches: BTreeMap<String, BatchLog> = BTreeMap::new();
    for message in stack.log_messages(group, Some(since_ms)).await {
        for line in message.lines() {
            let Ok(line) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let fields = &line["fields"];
            let at = fields["at"]
                .as_str()
                .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
                .map(|t| t.unix_timestamp_nanos() as f64 / 1e9);
            let (Some(batch), Some(at)) = (fields["batch"].as_str(), at) else {
                continue;
            };
            let log = batches.entry(batch.to_string()).or_default();
            match fields["message"].as_str() {
                Some("batch started") => {
                    log.attempts += 1;
                    log.started = Some(log.started.map_or(at, |t: f64| t.min(at)));
                }
                Some("batch checked") => {
                    log.checks += 1;
                    if fields["done"] == true {
                        log.done = Some(at);
                    }
                }
                _ => {}
            }
        }
    }
    batches
}

/// The most of `spans` (start, end) open at one instant.
fn peak(spans: impl IntoIterator<Item = (f64, f64)>) -> usize {
    let mut edges: Vec<(f64, i32)> = Vec::new();
    for (start, end) in spans {
        edges.push((start, 1));
        edges.push((end, -1));
    }
    edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let (mut open, mut most) = (0i32, 0i32);
    for (_, step) in edges {
        open += step;
        most = most.max(open);
    }
    most as usize
}

/// Each batch in flight: from its first start to the check that found it done; a batch never
/// found done counts as in flight to the end.
fn batch_spans(batches: &BTreeMap<String, BatchLog>) -> impl Iterator<Item = (f64, f64)> + '_ {
    batches
        .values()
        .filter_map(|log| Some((log.started?, log.done.unwrap_or(f64::INFINITY))))
}

/// How long one seeded document's first execution may take (a wave of them shares two cores).
const SEED_WAIT: Duration = Duration::from_secs(1800);

/// Uploads document `i` of `tenant` and waits for its first execution's end: whether it
/// succeeded.
async fn seed(stack: Arc<Stack>, tenant: String, i: usize) -> bool {
    let key = format!("inbox/{tenant}/re-{i}.pdf");
    let body = invoice_pdf(&invoice_lines(
        &format!("INV-2026-{}", 200_000 + i),
        "1,234.50",
    ));
    stack.upload(&key, body).await;
    let document = Stack::document_id(&tenant, &format!("re-{i}.pdf"));
    let runs = stack.wait_for_runs(&document, 1).await;
    let run = s(&runs[0], "runId");
    stack.wait_for_execution_within(&run, SEED_WAIT).await == "SUCCEEDED"
}

/// Uploads `docs` documents of `tenant` and runs each once (their OCR is what the reprocess
/// reuses), at most `BENCH_SEED_WAVE` (100) at a time: as one document's execution ends the
/// next is uploaded, so the machine stays busy without a burst (a burst of uploads is `make
/// bench-scale`'s subject, not this one's).
async fn seed_all(stack: Arc<Stack>, tenant: &str, docs: usize) {
    let wave: usize = std::env::var("BENCH_SEED_WAVE")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100)
        .max(1);
    let seeded = Instant::now();
    let (mut succeeded, mut ended, mut next) = (0, 0, 0);
    let mut in_flight = tokio::task::JoinSet::new();
    while ended < docs {
        while next < docs && in_flight.len() < wave {
            in_flight.spawn(seed(stack.clone(), tenant.to_string(), next));
            next += 1;
        }
        let Some(done) = in_flight.join_next().await else {
            break;
        };
        succeeded += usize::from(done.expect("seed task"));
        ended += 1;
        if ended % 10 == 0 || ended == docs {
            eprint!("\rbench: {ended} of {docs} first runs ended");
            std::io::stderr().flush().ok();
        }
    }
    eprintln!();
    println!(
        "bench: reprocess: {docs} documents of tenant {tenant} uploaded and run once in {:.0} s, \
         at most {wave} at a time ({succeeded} executions succeeded)",
        seeded.elapsed().as_secs_f64()
    );
}

fn log_len(path: &str) -> usize {
    std::fs::metadata(path).map_or(0, |m| m.len() as usize)
}

#[tokio::main]
async fn main() {
    let log = std::env::var("DOCKET_LOCALSTACK_LOG").expect("DOCKET_LOCALSTACK_LOG");
    let docs: usize = std::env::var("BENCH_REPROCESS_DOCS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let stack = Stack::load().await;
    // `BENCH_REPROCESS_TENANT`: a tenant an earlier run of this bench seeded (its documents are
    // reprocessed again, as the next generation, without seeding).
    let seeded_tenant = std::env::var("BENCH_REPROCESS_TENANT").ok();
    let tenant = seeded_tenant.clone().unwrap_or_else(tenant);

    let seed_offset = log_len(&log);
    let stack = Arc::new(stack);
    match seeded_tenant {
        Some(_) => {
            println!("bench: reprocess: the {docs} documents of tenant {tenant} were seeded before")
        }
        None => seed_all(stack.clone(), &tenant, docs).await,
    }

    // The reprocess, timed from the command's start to its last run's end.
    let offset = log_len(&log);
    let since_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let started = Instant::now();
    let operator = docket_e2e::reviewers::operator("bench").await;
    // A reason of its own: the same request again would attach to the earlier reprocess.
    let reason = util::unique("bench");
    let args = [
        "reprocess",
        "--tenant",
        &tenant,
        "--reason",
        &reason,
        "--timeout-seconds",
        "7200",
    ];
    let out = docket(&operator, &args).await;
    let wall = started.elapsed().as_secs_f64();
    let report = json_of(&out);
    // A failed reprocess is a figure too (which batches failed is in the Map's results): the
    // rest is measured all the same.
    let items = report["items"].as_u64().unwrap_or(0) as usize;
    println!(
        "bench: reprocess of {items} documents with stored OCR: {wall:.0} s wall time \
         ({} done, {} failed; bulk execution {}), {:.1} documents/s",
        report["done"],
        report["failed"],
        report["execution"],
        items as f64 / wall
    );

    // Transitions: every new run's, and the bulk execution's (its child executions' are not
    // in its history).
    // Each new run's execution, start to end (an execution still running ends "now").
    let (mut transitions, mut tasks, mut executions) = (0, 0, Vec::new());
    let mut ends: BTreeMap<String, usize> = BTreeMap::new();
    let runs = report["runs"].as_array().into_iter().flatten();
    // A run with no record was never started (its batch failed first): it has no execution.
    for run in runs.filter(|r| r["status"].is_string()) {
        let history = stack.history(run["runId"].as_str().unwrap()).await;
        let is = |e: &&HistoryEvent, kind: &str| e.r#type().as_str() == kind;
        transitions += history
            .iter()
            .filter(|e| e.state_entered_event_details().is_some())
            .count();
        tasks += history.iter().filter(|e| is(e, "TaskScheduled")).count();
        let (Some(first), Some(last)) = (history.first(), history.last()) else {
            continue;
        };
        let end = last.r#type().as_str();
        let ended = ["ExecutionSucceeded", "ExecutionFailed", "ExecutionTimedOut"].contains(&end);
        *ends
            .entry(if ended { end } else { "running" }.into())
            .or_default() += 1;
        let stop = if ended {
            last.timestamp().as_secs_f64()
        } else {
            f64::INFINITY
        };
        executions.push((first.timestamp().as_secs_f64(), stop));
    }
    let bulk = docket_aws::sfn::execution_arn(
        stack.out("BulkReprocessStateMachineArn"),
        report["reprocessId"].as_str().unwrap(),
    );
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

    // Text detections the functions asked for (a job's start, or a one-page read), from
    // LocalStack's request log: the first runs' (one per document) against the reprocess's.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let detections = |from: usize, to: usize| {
        requests_between(&log, from, to)
            .iter()
            .filter(|r| {
                *r == "textract.StartDocumentTextDetection" || *r == "textract.DetectDocumentText"
            })
            .count()
    };
    println!(
        "bench:   text detections started: {} by the reprocess ({} by the first runs)",
        detections(offset, usize::MAX),
        detections(seed_offset, offset)
    );

    // The Map's children: each batch's start attempts and checks are the reprocess function's
    // invocations.
    let group = format!("/aws/lambda/{}", stack.out("ReprocessFunctionName"));
    let logged = batches(&stack, &group, since_ms).await;
    let attempts: usize = logged.values().map(|b| b.attempts).sum();
    let checks: usize = logged.values().map(|b| b.checks).sum();
    println!(
        "bench:   lambda invocations per item: {:.2} ({tasks} by the pipeline runs, \
         {attempts} batch starts, {checks} batch checks)",
        (tasks + attempts + checks) as f64 / items.max(1) as f64,
    );
    let concurrency = stack.parameter("ReprocessConcurrency").await;
    let unended = logged.values().filter(|b| b.done.is_none()).count();
    println!(
        "bench:   map child executions (batches of 20): {} (expected {}; {unended} never found \
         done); peak batches in flight {} (MaxConcurrency {concurrency})",
        logged.len(),
        items.div_ceil(20),
        peak(batch_spans(&logged))
    );
    let bound = concurrency.parse::<usize>().unwrap_or(0) * 20;
    println!(
        "bench:   pipeline executions at work at once: peak {} (bound: MaxConcurrency x 20 = \
         {bound}); how they ended: {ends:?}",
        peak(executions)
    );
}
