//! What a stretch of pipeline work used, read at the wire and from the functions' logs, as the
//! cost model's [`Usage`]: the requests LocalStack served (our wire log, `/_docket/requests`,
//! with DynamoDB's item counts), the state transitions of the runs' histories and the
//! functions' REPORT lines (billed duration and memory). The caller makes the stretch its own
//! (nothing else runs against the stack meanwhile) and names what it did itself.

use serde_json::Value;

use crate::cost::Usage;
use crate::stack::Stack;
use crate::util;

/// Where a metered stretch starts: the wire log's length and the time (unix ms).
pub struct Mark {
    wire: usize,
    since_ms: i64,
}

impl Mark {
    /// When the stretch began (unix ms).
    pub fn since_ms(&self) -> i64 {
        self.since_ms
    }
}

/// Marks the start of a stretch.
pub async fn mark() -> Mark {
    Mark {
        wire: util::wire_requests("", "", "").await.len(),
        since_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64,
    }
}

/// Every request since `mark`, served or refused.
async fn requests_after(mark: &Mark) -> Vec<Value> {
    let all = util::wire_requests("", "", "").await;
    all.into_iter().skip(mark.wire).collect()
}

/// Whether `request` answered 2xx.
fn served(request: &Value) -> bool {
    request["status"]
        .as_u64()
        .is_some_and(|s| (200..300).contains(&s))
}

/// Requests served since `mark` that answered 2xx.
async fn served_since(mark: &Mark) -> Vec<Value> {
    requests_after(mark)
        .await
        .into_iter()
        .filter(served)
        .collect()
}

/// The refusal DynamoDB bills like the write it refused: a single-item write whose condition
/// failed consumes write units all the same (the developer guide's "Condition expressions").
/// A cancelled transaction is counted by the caller, not billed here: what AWS charges for it
/// is not in the model.
pub const BILLED_REFUSAL: &str = "ConditionalCheckFailedException";

/// DynamoDB capacity units of one request (the cost model's: one unit an item, two for a
/// transaction's item), as (write, read).
fn dynamodb_units(request: &Value) -> (f64, f64) {
    let items = request["items"].as_f64().unwrap_or(1.0);
    match request["operation"].as_str().unwrap_or_default() {
        "PutItem" | "UpdateItem" | "DeleteItem" | "BatchWriteItem" => (items, 0.0),
        "TransactWriteItems" => (2.0 * items, 0.0),
        "GetItem" | "BatchGetItem" | "Query" | "Scan" => (0.0, items),
        "TransactGetItems" => (0.0, 2.0 * items),
        _ => (0.0, 0.0),
    }
}

/// The number after `label` (e.g. `"Billed Duration: "`) in a Lambda REPORT log line, if any.
pub fn report_field(report: &str, label: &str) -> Option<f64> {
    report
        .split('\t')
        .find_map(|f| f.trim().strip_prefix(label))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The DynamoDB operations that write.
pub const DYNAMODB_WRITES: &[&str] = &[
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "TransactWriteItems",
    "BatchWriteItem",
];

/// DynamoDB write units since `mark` by table (each item's units to the table the wire log names
/// for it, a refused conditional write's as billed), most first.
pub async fn dynamodb_write_units_by_table(mark: &Mark) -> Vec<(String, f64)> {
    let mut by_table = std::collections::BTreeMap::<String, f64>::new();
    let billed = |r: &Value| served(r) || r["error"] == BILLED_REFUSAL;
    for request in requests_after(mark).await.iter().filter(|r| billed(r)) {
        let (units, _) = dynamodb_units(request);
        let tables = request["tables"].as_array().cloned().unwrap_or_default();
        if units == 0.0 || tables.is_empty() {
            continue;
        }
        let each = units / tables.len() as f64;
        for table in tables {
            *by_table
                .entry(table.as_str().unwrap_or("?").into())
                .or_default() += each;
        }
    }
    let mut units: Vec<_> = by_table.into_iter().collect();
    units.sort_by(|a, b| b.1.total_cmp(&a.1));
    units
}

/// Requests of `service` with one of `operations` served (2xx) since `mark`.
pub async fn requests_since(mark: &Mark, service: &str, operations: &[&str]) -> usize {
    served_since(mark)
        .await
        .iter()
        .filter(|r| r["service"] == service)
        .filter(|r| operations.contains(&r["operation"].as_str().unwrap_or_default()))
        .count()
}

/// Requests of `service` refused since `mark` with `error` (e.g. `TransactionCanceledException`).
pub async fn refused_since(mark: &Mark, service: &str, error: &str) -> usize {
    requests_after(mark)
        .await
        .iter()
        .filter(|r| r["service"] == service && r["error"] == error)
        .count()
}

/// Lambda invocations since `mark`: the REPORT lines every function logged (one an invocation,
/// whoever invoked it: a state machine, an event source mapping, SNS).
pub async fn invocations_since(stack: &Stack, mark: &Mark) -> usize {
    reports_since(stack, mark.since_ms).await.len()
}

/// The REPORT lines (after `REPORT `) every function logged since `since_ms`, each with its
/// function's log group.
async fn reports_since(stack: &Stack, since_ms: i64) -> Vec<(String, String)> {
    let groups = stack
        .logs
        .describe_log_groups()
        .log_group_name_prefix("/aws/lambda/")
        .send()
        .await
        .expect("log groups");
    let mut reports = Vec::new();
    for group in groups.log_groups() {
        let Some(name) = group.log_group_name() else {
            continue;
        };
        for message in stack.log_messages(name, Some(since_ms)).await {
            if let Some(report) = message.trim_start().strip_prefix("REPORT ") {
                reports.push((name.to_string(), report.to_string()));
            }
        }
    }
    reports
}

/// GB-seconds billed since `mark` by each function's REPORT lines, by function (its log
/// group's name after `/aws/lambda/`), largest first.
async fn gb_seconds_by_function(stack: &Stack, mark: &Mark) -> Vec<(String, f64)> {
    let mut by_function = std::collections::BTreeMap::<String, f64>::new();
    for (group, report) in reports_since(stack, mark.since_ms).await {
        let billed = report_field(&report, "Billed Duration: ");
        if let (Some(ms), Some(mb)) = (billed, report_field(&report, "Memory Size: ")) {
            let function = group.trim_start_matches("/aws/lambda/").to_string();
            *by_function.entry(function).or_default() += ms / 1000.0 * mb / 1024.0;
        }
    }
    let mut by_function: Vec<(String, f64)> = by_function.into_iter().collect();
    by_function.sort_by(|a, b| b.1.total_cmp(&a.1));
    by_function
}

/// What the stretch since `mark` used for `documents` documents, per document: `transitions`
/// and `lambda_requests` counted by the caller from the runs' histories, the rest read here.
/// `own_puts` are the caller's own S3 puts (its uploads), left out. Beside it, the Lambda
/// GB-seconds it sums, by function, largest first (in all, not a document).
pub async fn usage_since(
    stack: &Stack,
    mark: &Mark,
    documents: usize,
    transitions: usize,
    lambda_requests: usize,
    own_puts: usize,
) -> (Usage, Vec<(String, f64)>) {
    let requests = requests_after(mark).await;
    let refused_writes: f64 = requests
        .iter()
        .filter(|r| r["service"] == "dynamodb" && r["error"] == BILLED_REFUSAL)
        .map(|r| dynamodb_units(r).0)
        .sum();
    let served: Vec<Value> = requests.into_iter().filter(served).collect();
    let count = |service: &str, ops: &[&str]| {
        served
            .iter()
            .filter(|r| r["service"] == service)
            .filter(|r| ops.is_empty() || ops.contains(&r["operation"].as_str().unwrap_or("")))
            .count() as f64
    };
    let distinct_subjects = |service: &str, operation: &str| {
        let subjects: std::collections::BTreeSet<&str> = served
            .iter()
            .filter(|r| r["service"] == service && r["operation"] == operation)
            .filter_map(|r| r["subject"].as_str())
            .collect();
        subjects.len() as f64
    };
    let (writes, reads) = served
        .iter()
        .filter(|r| r["service"] == "dynamodb")
        .map(dynamodb_units)
        .fold((0.0, 0.0), |(w, r), (dw, dr)| (w + dw, r + dr));
    let by_function = gb_seconds_by_function(stack, mark).await;
    let gb_seconds: f64 = by_function.iter().map(|(_, gb_seconds)| gb_seconds).sum();
    let n = documents.max(1) as f64;
    let usage = Usage {
        transitions: transitions as f64 / n,
        lambda_requests: lambda_requests as f64 / n,
        lambda_gb_seconds: gb_seconds / n,
        dynamodb_write_units: (writes + refused_writes) / n,
        dynamodb_read_units: reads / n,
        s3_puts: (count(
            "s3",
            &["PutObject", "CopyObject", "ListObjectsV2", "ListObjects"],
        ) - own_puts as f64)
            / n,
        s3_gets: count("s3", &["GetObject", "HeadObject"]) / n,
        sns_publishes: count("sns", &["Publish"]) / n,
        // A queue's pollers (ingest's, the consumer's) also receive from an empty queue and read
        // its attributes: a standing cost of each mapping (AWS's long-polling pollers a few
        // requests a minute each, whatever the traffic; LocalStack's every second), not a
        // document's. A document's: its sends, its visibility changes, its deletes, and for
        // each delete the receive that returned what it deleted.
        sqs_requests: (count(
            "sqs",
            &[
                "SendMessage",
                "SendMessageBatch",
                "ChangeMessageVisibility",
                "ChangeMessageVisibilityBatch",
            ],
        ) + 2.0 * count("sqs", &["DeleteMessage", "DeleteMessageBatch"]))
            / n,
        events_published: count("events", &["PutEvents"]) / n,
        // One page a document (the benches' invoices are one page); a start repeated with its
        // token is the same job, charged once.
        textract_pages: (distinct_subjects("textract", "StartDocumentTextDetection")
            + count("textract", &["DetectDocumentText"]))
            / n,
    };
    (usage, by_function)
}
