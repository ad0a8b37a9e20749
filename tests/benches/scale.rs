//! `make bench-scale` (issue 13; figures, not pass/fail): `BENCH_SCALE_DOCS` one-page invoices
//! (1,000 by default) dropped into the inbox at once, against our local Textract with its quotas
//! lowered so that they bind on this machine, and docket's recorded to match (`docket ops
//! quotas`, as an operator would): `BENCH_SCALE_TPS` calls a second (1) of the synchronous read
//! that one-page documents take (`DetectDocumentText`) and of job starts, `BENCH_SCALE_JOBS`
//! jobs at once (5; a one-page document holds none), `BENCH_SCALE_JITTER_MS` of arrival jitter
//! (50, AWS's default). OCR is served from the local Textract's content-hash cache with
//! `BENCH_SCALE_SECONDS_PER_PAGE` (2) of simulated read time, so the run measures the orchestration
//! and the quotas, not Tesseract on two cores. Every document is a distinct invoice (the consumer
//! refuses an invoice number twice): each is read once with `DetectDocumentText` first, to fill the
//! cache (with `DOCKET_TEXTRACT_CACHE_DIR`, as `scripts/bench.sh scale` sets it, a later run finds
//! them on disk), and the cache's misses during the burst are printed (0 expected).
//!
//! It prints the documents failed (an execution that did not succeed, or none), the quota
//! errors the provider answered, the completion time against the quota-bound ideal (the time
//! the quotas alone force: reads at the rate, each its simulated duration), p50/p95 latency from
//! upload to the execution's end, state transitions, invocations and DynamoDB writes per document,
//! the Tasks' failures by state and error (each one retried a billed transition), when the OCR
//! step's Task began after its execution's start and how long it took, the Lambda GB-seconds a
//! document by function, the peak of concurrent Textract jobs, where the read slots went
//! (the reads' spacing against the pacer's interval, and how many came at the slot their
//! start booked: [`reads`]), the bill per 1,000 documents,
//! and the machine's CPU time over the burst (every process: LocalStack, the Lambdas, this
//! bench) with the time its cores alone need for it, so that a completion bound by the machine
//! is told from one bound by the quotas or the design ([`machine`]). The quotas stay lowered
//! afterwards: run it on a LocalStack of its own (`scripts/bench.sh scale` does).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_sdk_sfn::types::{ExecutionStatus, HistoryEventType};
use docket_core::admission::{Quotas, DETECT_TEXT, START_TEXT_DETECTION};
use docket_core::ids::RunId;
use docket_core::ports::RunStatus;
use docket_e2e::metering;
use docket_e2e::reviewers::record_quotas;
use docket_e2e::scale::machine;
use docket_e2e::scale::quota::quota_bound_seconds;
use docket_e2e::scale::reads;
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};
use docket_e2e::util::{self, percentile};
use reqwest::Method;
use serde_json::{json, Value};

/// The status of a run that waits for a person: left out of completion and latency.
const WAITING_FOR_A_PERSON: &str = RunStatus::AwaitingReview.as_str();

/// LocalStack's process id, as `scripts/localstack.sh` recorded it in the stack's local dir.
fn localstack_pid() -> Option<u32> {
    let dir = std::env::var("DOCKET_LOCAL_DIR").ok()?;
    let pid = std::fs::read_to_string(format!("{dir}/localstack.pid")).ok()?;
    pid.trim().parse().ok()
}

/// What the run is asked to do (environment, with defaults).
struct Settings {
    documents: usize,
    tps: usize,
    jobs: usize,
    jitter_ms: u32,
    seconds_per_page: f64,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

impl Settings {
    fn from_env() -> Settings {
        Settings {
            documents: env_or("BENCH_SCALE_DOCS", 1000).max(1),
            tps: env_or("BENCH_SCALE_TPS", 1).max(1),
            jobs: env_or("BENCH_SCALE_JOBS", 5).max(1),
            jitter_ms: env_or("BENCH_SCALE_JITTER_MS", 50),
            seconds_per_page: env_or("BENCH_SCALE_SECONDS_PER_PAGE", 2.0),
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Document `i`'s file name in the inbox.
fn file_name(i: usize) -> String {
    format!("scale-{i:05}.pdf")
}

/// Document `i`'s invoice (the same bytes every run: the cache keys on them).
fn invoice(i: usize) -> Vec<u8> {
    invoice_pdf(&invoice_lines(
        &format!("INV-2026-{}", 100_000 + i),
        "1,234.50",
    ))
}

/// Lowers the provider's quotas in the stack's region and records docket's to match.
async fn set_quotas(settings: &Settings, region: &str) {
    let tps = [
        (DETECT_TEXT, settings.tps),
        (START_TEXT_DETECTION, settings.tps),
    ];
    let change = json!({"region": region, "tps": BTreeMap::from(tps), "maxJobs": settings.jobs});
    util::textract_quotas(Method::POST, &change).await;
    record_quotas(&tps, settings.jobs, settings.jitter_ms).await;
}

/// Fills the OCR cache with the first `documents` invoices (two reads at a time, at most half
/// of DetectDocumentText's quota a second: reads the cache already holds answer at once, with
/// no simulated duration), then turns on the simulated duration for the burst.
async fn fill_cache(settings: &Settings) {
    util::textract_scale(
        Method::POST,
        &json!({"cache": true, "secondsPerPage": null}),
    )
    .await;
    let textract = aws_sdk_textract::Client::new(&util::aws().await);
    let clock = Instant::now();
    let per_second = Quotas::textract_defaults().tps[DETECT_TEXT];
    let apart = std::time::Duration::from_millis(2000 / u64::from(per_second.max(1)));
    let mut pace = tokio::time::interval(apart);
    let mut reads = tokio::task::JoinSet::new();
    for i in 0..settings.documents {
        pace.tick().await;
        if reads.len() >= 2 {
            reads.join_next().await.unwrap().unwrap();
        }
        if i % 100 == 0 {
            let read = clock.elapsed().as_secs_f64();
            println!(
                "bench-scale: filling the OCR cache: {i} of {} ({read:.0} s)",
                settings.documents
            );
        }
        let textract = textract.clone();
        reads.spawn(async move {
            let bytes = aws_sdk_textract::primitives::Blob::new(invoice(i));
            let document = aws_sdk_textract::types::Document::builder()
                .bytes(bytes)
                .build();
            textract
                .detect_document_text()
                .document(document)
                .send()
                .await
                .unwrap_or_else(|e| panic!("read invoice {i}: {e:?}"));
        });
    }
    while let Some(read) = reads.join_next().await {
        read.unwrap();
    }
    let cache = json!({"cache": true, "secondsPerPage": settings.seconds_per_page});
    util::textract_scale(Method::POST, &cache).await;
    println!(
        "bench-scale: OCR cache filled in {:.0} s",
        clock.elapsed().as_secs_f64()
    );
}

/// How one document's execution ended, by the engine's clock (unix ms).
#[derive(Debug, Clone)]
struct Ended {
    run: String,
    status: ExecutionStatus,
    stop_ms: i64,
}

/// The burst's documents' executions that have ended, by document index.
async fn ended(stack: &Stack, burst: &BTreeMap<String, usize>) -> BTreeMap<usize, Ended> {
    let mut found = BTreeMap::new();
    let mut pages = stack
        .sfn
        .list_executions()
        .state_machine_arn(stack.out("StateMachineArn"))
        .max_results(1000)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        for e in page.expect("list executions").executions() {
            let Some(stop) = e.stop_date() else { continue };
            let Ok(run) = RunId::parse(e.name()) else {
                continue;
            };
            if let Some(&i) = burst.get(run.document_id().as_str()) {
                let stop_ms = stop.secs() * 1000 + i64::from(stop.subsec_nanos() / 1_000_000);
                let run = e.name().to_string();
                let status = e.status().clone();
                found.insert(
                    i,
                    Ended {
                        run,
                        status,
                        stop_ms,
                    },
                );
            }
        }
    }
    found
}

/// How few documents may be left for the bench to ask whether they wait for a person.
const FEW: usize = 20;

/// How many of the burst's documents not in `done` wait for a person: their run is
/// `awaiting_review` (the OCR's reading was not confident enough). The orchestration is done
/// with them; they are left out of the completion time and the latencies.
async fn waiting_for_a_person(
    stack: &Stack,
    tenant: &str,
    n: usize,
    done: &BTreeMap<usize, Ended>,
) -> usize {
    let mut waiting = 0;
    for i in (0..n).filter(|i| !done.contains_key(i)) {
        let document = Stack::document_id(tenant, &file_name(i));
        let runs = stack.runs(&document).await;
        waiting += usize::from(runs.iter().any(|r| s(r, "status") == WAITING_FOR_A_PERSON));
    }
    waiting
}

/// What a run's history shows: what it bills, its state transitions (the states entered and
/// every retry of a Task) and its Tasks' failures by state and error (each one retried is one
/// transition); and where the OCR step's time went.
#[derive(Default)]
struct RunHistory {
    transitions: usize,
    failures: BTreeMap<String, usize>,
    /// From the execution's start to the OCR Task's first attempt (ms).
    ocr_began_ms: Option<i64>,
    /// From the OCR Task's last attempt to its end (ms): the OCR function's wait for its
    /// turn, the read and the callback.
    ocr_took_ms: Option<i64>,
    /// The read its start booked, if it did.
    booked: Option<reads::Booked>,
}

/// The state the OCR step's Task is.
const OCR_STATE: &str = "StartOcr";

async fn run_history(stack: &Stack, run: &str) -> RunHistory {
    let history = stack.history(run).await;
    let count = |kinds: &[HistoryEventType]| {
        history
            .iter()
            .filter(|e| kinds.contains(e.r#type()))
            .count()
    };
    let entered = history
        .iter()
        .filter(|e| e.state_entered_event_details().is_some())
        .count();
    let scheduled = count(&[
        HistoryEventType::TaskScheduled,
        HistoryEventType::LambdaFunctionScheduled,
    ]);
    let mut summary = RunHistory {
        transitions: entered
            + scheduled.saturating_sub(count(&[HistoryEventType::TaskStateEntered])),
        ..RunHistory::default()
    };
    let mut state = "?";
    let (mut started_ms, mut attempt_ms, mut booked, mut began_ms) = (None, None, None, None);
    for e in &history {
        if let Some(name) = e.state_entered_event_details().map(|d| d.name()) {
            state = name;
        }
        let at_ms = e.timestamp().to_millis().unwrap_or_default();
        match e.r#type() {
            HistoryEventType::ExecutionStarted => {
                started_ms = Some(at_ms);
                booked = e
                    .execution_started_event_details()
                    .and_then(|d| d.input())
                    .and_then(reads::booked_read);
            }
            HistoryEventType::TaskStarted if state == OCR_STATE => {
                if attempt_ms.is_none() {
                    summary.ocr_began_ms = started_ms.map(|started| at_ms - started);
                    began_ms = Some(at_ms);
                }
                attempt_ms = Some(at_ms);
            }
            HistoryEventType::TaskSucceeded if state == OCR_STATE => {
                summary.ocr_took_ms = attempt_ms.map(|attempt| at_ms - attempt);
            }
            _ => {}
        }
        let error = e
            .task_failed_event_details()
            .and_then(|d| d.error())
            .or_else(|| e.task_timed_out_event_details().and_then(|d| d.error()))
            .or_else(|| {
                e.lambda_function_failed_event_details()
                    .and_then(|d| d.error())
            });
        if let Some(error) = error {
            *summary
                .failures
                .entry(format!("{state} {error}"))
                .or_default() += 1;
        }
    }
    summary.booked = booked
        .zip(started_ms)
        .map(|((subject, slot_ms), started_ms)| reads::Booked {
            run: run.to_string(),
            subject,
            slot_ms,
            started_ms,
            ocr_began_ms: began_ms,
        });
    summary
}

#[tokio::main]
async fn main() {
    let settings = Settings::from_env();
    let stack = Arc::new(Stack::load().await);
    let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".into());
    fill_cache(&settings).await;
    set_quotas(&settings, &region).await;
    util::textract_quotas(Method::DELETE, &Value::Null).await;
    util::textract_scale(Method::DELETE, &Value::Null).await;

    let n = settings.documents;
    let tenant = tenant();
    let burst: BTreeMap<String, usize> = (0..n)
        .map(|i| (Stack::document_id(&tenant, &file_name(i)).to_string(), i))
        .collect();
    let mark = metering::mark().await;
    let cpu = machine::Mark::now(localstack_pid());
    let (first_ms, clock) = (now_ms(), Instant::now());
    let mut uploads = tokio::task::JoinSet::new();
    let mut uploaded_ms = vec![0i64; n];
    for i in 0..n {
        if uploads.len() >= 16 {
            let (i, at) = uploads.join_next().await.unwrap().unwrap();
            uploaded_ms[i] = at;
        }
        let (stack, tenant) = (stack.clone(), tenant.clone());
        uploads.spawn(async move {
            let key = format!("inbox/{tenant}/{}", file_name(i));
            stack.upload(&key, invoice(i)).await;
            (i, now_ms())
        });
    }
    while let Some(done) = uploads.join_next().await {
        let (i, at) = done.unwrap();
        uploaded_ms[i] = at;
    }
    // One read each, at the read quota, none holding a job: the job quota never binds.
    let ideal = quota_bound_seconds(n, settings.tps, n, settings.seconds_per_page);
    println!(
        "bench-scale: {n} documents uploaded in {:.1} s; the quotas alone need {ideal:.0} s",
        clock.elapsed().as_secs_f64()
    );
    let deadline = Duration::from_secs_f64((3.0 * ideal).max(600.0));
    let done = loop {
        let done = ended(&stack, &burst).await;
        let failed = done
            .values()
            .filter(|e| e.status != ExecutionStatus::Succeeded)
            .count();
        println!(
            "bench-scale: {} of {n} ended ({failed} not succeeded) after {:.0} s",
            done.len(),
            clock.elapsed().as_secs_f64()
        );
        if done.len() == n || clock.elapsed() > deadline {
            break done;
        }
        if n - done.len() <= FEW
            && waiting_for_a_person(&stack, &tenant, n, &done).await == n - done.len()
        {
            println!(
                "bench-scale: the {} not ended wait for a person",
                n - done.len()
            );
            break done;
        }
        tokio::time::sleep(Duration::from_secs(15)).await;
    };
    let cpu = cpu.usage();
    let burst = Burst {
        mark,
        first_ms,
        uploaded_ms,
        done,
        ideal,
        cpu,
    };
    report(&stack, &settings, &region, &burst, &tenant).await;
}

/// What the burst did, as the bench saw it.
struct Burst {
    /// Where metering starts (before the first upload).
    mark: metering::Mark,
    /// The first upload's start (unix ms).
    first_ms: i64,
    /// When each document's upload was done (unix ms), by index.
    uploaded_ms: Vec<i64>,
    /// The documents' ended executions, by index.
    done: BTreeMap<usize, Ended>,
    /// The quota-bound ideal (s).
    ideal: f64,
    /// The machine's CPU use from the first upload to the last poll, and LocalStack's own.
    cpu: Option<machine::Usage>,
}

/// Prints the run's figures (the module docs list them).
async fn report(stack: &Stack, settings: &Settings, region: &str, burst: &Burst, tenant: &str) {
    let (n, done) = (settings.documents, &burst.done);
    let view = util::textract_quotas(Method::GET, &Value::Null).await;
    let seen = &view["seen"][region];
    let refused: u64 = seen["refused"].as_object().map_or(0, |ops| {
        ops.values()
            .flat_map(|e| e.as_object())
            .flat_map(|e| e.values())
            .filter_map(Value::as_u64)
            .sum()
    });
    let cache = util::textract_scale(Method::GET, &Value::Null).await;
    let succeeded = done
        .values()
        .filter(|e| e.status == ExecutionStatus::Succeeded)
        .count();
    let last_ms = done.values().map(|e| e.stop_ms).max();
    let completion = (last_ms.unwrap_or(burst.first_ms) - burst.first_ms) as f64 / 1000.0;
    let mut latency: Vec<f64> = done
        .iter()
        .map(|(&i, e)| (e.stop_ms - burst.uploaded_ms[i]) as f64 / 1000.0)
        .collect();
    latency.sort_by(f64::total_cmp);
    let (mut transitions_total, mut failures) = (0, BTreeMap::<String, usize>::new());
    let (mut ocr_began, mut ocr_took, mut booked) = (vec![], vec![], vec![]);
    for e in done.values() {
        let run = run_history(stack, &e.run).await;
        booked.extend(run.booked);
        transitions_total += run.transitions;
        ocr_began.extend(run.ocr_began_ms.map(|ms| ms as f64 / 1000.0));
        ocr_took.extend(run.ocr_took_ms.map(|ms| ms as f64 / 1000.0));
        for (failure, times) in run.failures {
            *failures.entry(failure).or_default() += times;
        }
    }
    let mark = &burst.mark;
    let invocations = metering::invocations_since(stack, mark).await;
    let writes = metering::requests_since(mark, "dynamodb", metering::DYNAMODB_WRITES).await;
    let refused_by_dynamodb = |error| metering::refused_since(mark, "dynamodb", error);
    let failed_conditions = refused_by_dynamodb(metering::BILLED_REFUSAL).await;
    let cancelled = refused_by_dynamodb("TransactionCanceledException").await;
    let (usage, by_function) =
        metering::usage_since(stack, mark, n, transitions_total, invocations, n).await;
    // After metering: these reads are the bench's.
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..n {
        let document = Stack::document_id(tenant, &file_name(i));
        let runs = stack.runs(&document).await;
        let status = runs
            .first()
            .map_or("no run".to_string(), |r| s(r, "status"));
        *statuses.entry(status).or_default() += 1;
    }
    let per = |x: usize| x as f64 / n as f64;
    let per_f = |x: f64| x / n as f64;
    println!(
        "bench-scale: {n} one-page documents dropped at once; quotas {} reads (and starts) a \
         second, {} jobs at once, {} ms arrival jitter; {} s a page",
        settings.tps, settings.jobs, settings.jitter_ms, settings.seconds_per_page
    );
    println!(
        "bench-scale:   documents failed: {} (execution ended otherwise); not ended: {} \
         (waiting for a person: {}, left out of completion and latency); runs by status: \
         {statuses:?}",
        done.len() - succeeded,
        n - done.len(),
        statuses.get(WAITING_FOR_A_PERSON).copied().unwrap_or(0)
    );
    println!(
        "bench-scale:   quota errors answered by the provider: {refused} ({})",
        seen["refused"]
    );
    println!(
        "bench-scale:   completion: {completion:.0} s against the quota-bound ideal {:.0} s \
         ({:.3} x)",
        burst.ideal,
        completion / burst.ideal.max(1e-9)
    );
    if !latency.is_empty() {
        println!(
            "bench-scale:   latency upload -> end: p50 {:.0} s, p95 {:.0} s",
            percentile(&latency, 0.5),
            percentile(&latency, 0.95)
        );
    }
    println!(
        "bench-scale:   per document: {:.2} transitions, {:.2} invocations, {:.2} DynamoDB \
         writes served and {:.2} refused on their condition ({:.1} units, both billed), \
         {:.2} transactions cancelled (not in the bill)",
        per(transitions_total),
        per(invocations),
        per(writes),
        per(failed_conditions),
        usage.dynamodb_write_units,
        per(cancelled)
    );
    let failures: Vec<String> = failures
        .iter()
        .map(|(failure, &times)| format!("{failure} {times} ({:.2})", per(times)))
        .collect();
    println!(
        "bench-scale:   Task failures by state and error, in all (a document; each one retried \
         is a billed transition): {}",
        if failures.is_empty() {
            "none".to_string()
        } else {
            failures.join(", ")
        }
    );
    let by_function: Vec<String> = by_function
        .iter()
        .map(|(function, gb_seconds)| format!("{function} {:.2}", per_f(*gb_seconds)))
        .collect();
    for seconds in [&mut ocr_began, &mut ocr_took] {
        seconds.sort_by(f64::total_cmp);
    }
    let spread = |seconds: &[f64]| match seconds.last() {
        Some(max) => format!(
            "p50 {:.2} s, p95 {:.2} s, max {max:.2} s",
            percentile(seconds, 0.5),
            percentile(seconds, 0.95)
        ),
        None => "none".into(),
    };
    println!(
        "bench-scale:   {OCR_STATE}: first attempt after the execution's start {}; its last \
         attempt (the turn, the read, the callback) {}",
        spread(&ocr_began),
        spread(&ocr_took)
    );
    println!(
        "bench-scale:   Lambda GB-seconds a document by function: {}",
        by_function.join(", ")
    );
    println!(
        "bench-scale:   Textract calls admitted: {}; peak concurrent Textract jobs: {} (limit {})",
        seen["admitted"], seen["peakJobs"], settings.jobs
    );
    if let Some(machine::Usage {
        machine: cpu,
        process_seconds: localstack,
        cores,
    }) = burst.cpu
    {
        let ideal = burst.ideal.max(1e-9);
        let floor = machine::floor_seconds(cpu.busy_seconds, cores);
        println!(
            "bench-scale:   machine: {:.0} CPU s busy ({:.2} a document, {:.0} % of {cores} \
             cores); its cores alone need {floor:.0} s for that work ({:.3} x the quota-bound \
             ideal)",
            cpu.busy_seconds,
            per_f(cpu.busy_seconds),
            100.0 * cpu.utilisation,
            floor / ideal
        );
        if let Some(seconds) = localstack {
            println!(
                "bench-scale:   LocalStack's process: {seconds:.0} CPU s ({:.2} a document; \
                 one Python process, about one core at most: {:.3} x the quota-bound ideal)",
                per_f(seconds),
                seconds / ideal
            );
        }
    }
    reads::print(
        settings.tps,
        settings.jitter_ms,
        settings.seconds_per_page,
        &burst.mark,
        &booked,
    )
    .await;
    println!("bench-scale:   OCR cache: {cache}");
    usage.bill().print("documents of the burst");
}
