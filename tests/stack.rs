//! The deployed stack under test: its outputs (written by `scripts/deploy.sh --local`), clients,
//! and the waits and reads the tests share.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::AttributeValue;
use docket_aws::dynamodb::Tables;
use docket_aws::saga::SagaTables;
use docket_core::audit::{verify, AuditEntry};
use docket_core::ids::{sha256_hex, DocumentId, RunId, Tenant};
use docket_core::saga::EventId;
use serde_json::Value;

use crate::{render, util};

/// The audit actions of a run that completed without review, each exactly once (a document read
/// as a job has `ocr.started` too; a one-page one is read at once, without).
pub const COMPLETED_RUN_ACTIONS: &[&str] = &[
    "document.accepted",
    "ocr.completed",
    "validation.completed",
    "run.completed",
    "event.published",
];

/// How long a document may take through the pipeline before a test gives up.
pub const RUN_DEADLINE: Duration = Duration::from_secs(180);

/// The deployed stack: its outputs and clients for it.
pub struct Stack {
    /// The stack's outputs by name (`RawBucket`, `RunsTable`, ...).
    pub outputs: BTreeMap<String, String>,
    pub s3: aws_sdk_s3::Client,
    pub sfn: aws_sdk_sfn::Client,
    pub dynamodb: aws_sdk_dynamodb::Client,
    pub lambda: aws_sdk_lambda::Client,
    pub logs: aws_sdk_cloudwatchlogs::Client,
}

impl Stack {
    /// Invokes the function named by output `function` (e.g. `RouteFunctionName`) with
    /// `payload`: its answer, or the `errorType` it failed with.
    pub async fn invoke(&self, function: &str, payload: &Value) -> Result<Value, String> {
        let out = self
            .lambda
            .invoke()
            .function_name(self.out(function))
            .payload(aws_sdk_lambda::primitives::Blob::new(payload.to_string()))
            .send()
            .await
            .unwrap_or_else(|e| panic!("invoke {function}: {e}"));
        let body: Value = serde_json::from_slice(out.payload().expect("an answer").as_ref())
            .expect("a JSON answer");
        match out.function_error() {
            None => Ok(body),
            Some(_) => Err(body["errorType"].as_str().unwrap_or("?").to_string()),
        }
    }

    /// Every message of log group `group` (since `since_ms`, unix milliseconds, if given), from
    /// all pages.
    pub async fn log_messages(&self, group: &str, since_ms: Option<i64>) -> Vec<String> {
        let mut lines = Vec::new();
        let mut next = None;
        loop {
            let out = self
                .logs
                .filter_log_events()
                .log_group_name(group)
                .set_start_time(since_ms)
                .set_next_token(next)
                .send()
                .await
                .unwrap_or_else(|e| panic!("read {group}: {e:?}"));
            lines.extend(
                out.events()
                    .iter()
                    .filter_map(|e| e.message().map(str::to_string)),
            );
            next = out.next_token().map(str::to_string);
            if next.is_none() {
                return lines;
            }
        }
    }

    /// The CloudWatch embedded-metric lines of `metric` that the function of stack output
    /// `function` (e.g. `RouteFunctionName`) logged for run `run_id`.
    pub async fn emf_lines(&self, function: &str, metric: &str, run_id: &str) -> Vec<Value> {
        let group = format!("/aws/lambda/{}", self.out(function));
        self.log_messages(&group, None)
            .await
            .iter()
            .filter_map(|m| serde_json::from_str::<Value>(m).ok())
            .filter(|l| l.get("_aws").is_some() && l.get(metric).is_some())
            .filter(|l| l["runId"] == run_id)
            .collect()
    }

    /// [`Self::emf_lines`], waiting up to 30 s for at least one (logs arrive after the answer).
    pub async fn wait_for_emf(&self, function: &str, metric: &str, run_id: &str) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let lines = self.emf_lines(function, metric, run_id).await;
            if !lines.is_empty() || Instant::now() > deadline {
                return lines;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Reads the outputs of the deployed stack (from [`outputs_path`]).
    pub async fn load() -> Stack {
        Self::load_with(util::aws().await)
    }

    /// [`Stack::load`] with clients built from `cfg` (e.g. with more retries, under chaos).
    pub fn load_with(cfg: aws_config::SdkConfig) -> Stack {
        let path = outputs_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e}; deploy first (make deploy-local)"));
        let outputs = serde_json::from_str(&text).expect("outputs JSON");
        Stack {
            outputs,
            s3: util::s3(&cfg),
            sfn: aws_sdk_sfn::Client::new(&cfg),
            dynamodb: aws_sdk_dynamodb::Client::new(&cfg),
            lambda: aws_sdk_lambda::Client::new(&cfg),
            logs: aws_sdk_cloudwatchlogs::Client::new(&cfg),
        }
    }

    /// The stack output `name`.
    pub fn out(&self, name: &str) -> &str {
        self.outputs
            .get(name)
            .unwrap_or_else(|| panic!("stack output {name} missing"))
    }

    /// The stack in CloudFormation: the one with this stack's alias ARN among its outputs (the
    /// outputs file names no stack).
    pub async fn describe(&self) -> aws_sdk_cloudformation::types::Stack {
        let cfn = aws_sdk_cloudformation::Client::new(&util::aws().await);
        let alias = self.out("StateMachineAliasArn");
        let stacks = cfn.describe_stacks().send().await.expect("describe stacks");
        stacks
            .stacks()
            .iter()
            .find(|s| s.outputs().iter().any(|o| o.output_value() == Some(alias)))
            .unwrap_or_else(|| panic!("no stack has the output {alias}"))
            .clone()
    }

    /// The deployed stack's current value of parameter `name`.
    pub async fn parameter(&self, name: &str) -> String {
        let stack = self.describe().await;
        stack
            .parameters()
            .iter()
            .find(|p| p.parameter_key() == Some(name))
            .and_then(|p| p.parameter_value())
            .unwrap_or_else(|| panic!("stack {:?} has no parameter {name}", stack.stack_name()))
            .to_string()
    }

    /// The stack's tables, as the adapters name them.
    pub fn tables(&self) -> Tables {
        Tables {
            runs: self.out("RunsTable").into(),
            documents: self.out("DocumentsTable").into(),
            audit: self.out("AuditTable").into(),
            checkpoints: self.out("AuditCheckpointsTable").into(),
            ledger: self.out("LedgerTable").into(),
        }
    }

    /// How many PutEvents of `detail_type` for `event` LocalStack accepted (its wire log names
    /// each PutEvents by its detail type and `detail.eventId`).
    pub async fn event_puts(&self, detail_type: &str, event: &EventId) -> usize {
        let subject = sha256_hex(format!("{detail_type}\n{event}").as_bytes());
        util::wire_requests("events", "PutEvents", &subject)
            .await
            .iter()
            .filter(|r| r["status"] == 200)
            .count()
    }

    /// The saga's table names (route's journal and outbox).
    pub fn saga_tables(&self) -> SagaTables {
        SagaTables {
            journal: self.out("SagaJournalTable").into(),
            outbox: self.out("OutboxTable").into(),
        }
    }

    /// The item of the table named by stack output `table` whose key `key` is `value` (a
    /// consistent read; it must exist).
    pub async fn item(
        &self,
        table: &str,
        key: &str,
        value: &str,
    ) -> HashMap<String, AttributeValue> {
        util::get_item(&self.dynamodb, self.out(table), key, value)
            .await
            .unwrap_or_else(|| panic!("no item {key}={value} in {table}"))
    }

    /// Uploads to the raw bucket; returns the version id.
    pub async fn upload(&self, key: &str, body: Vec<u8>) -> String {
        let out = self
            .s3
            .put_object()
            .bucket(self.out("RawBucket"))
            .key(key)
            .body(body.into())
            .send()
            .await
            .expect("upload");
        out.version_id()
            .expect("raw bucket is versioned")
            .to_string()
    }

    /// The document id the pipeline derives for `inbox/<tenant>/<logical>`.
    pub fn document_id(tenant: &str, logical: &str) -> DocumentId {
        DocumentId::new(&Tenant::parse(tenant).unwrap(), logical)
    }

    /// The run records of a document (newest last by createdAt).
    pub async fn runs(&self, document: &DocumentId) -> Vec<BTreeMap<String, AttributeValue>> {
        let out = self
            .dynamodb
            .query()
            .table_name(self.out("RunsTable"))
            .index_name("by-document")
            .key_condition_expression("documentId = :d")
            .expression_attribute_values(":d", AttributeValue::S(document.to_string()))
            .send()
            .await
            .expect("query runs");
        out.items()
            .iter()
            .map(|i| i.clone().into_iter().collect())
            .collect()
    }

    /// Waits until the document has `count` runs, none of them `started` (bounded).
    pub async fn wait_for_runs(
        &self,
        document: &DocumentId,
        count: usize,
    ) -> Vec<BTreeMap<String, AttributeValue>> {
        let deadline = Instant::now() + RUN_DEADLINE;
        loop {
            let runs = self.runs(document).await;
            let finished = runs.iter().filter(|r| s(r, "status") != "started").count();
            if runs.len() >= count && finished == runs.len() {
                return runs;
            }
            assert!(
                Instant::now() < deadline,
                "document {document}: {} runs, {finished} finished after {RUN_DEADLINE:?}",
                runs.len()
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Waits until the document's audit chain has an entry with `action` (bounded).
    pub async fn wait_for_action(&self, document: &DocumentId, action: &str) -> Vec<AuditEntry> {
        let deadline = Instant::now() + RUN_DEADLINE;
        loop {
            let chain = self.audit(document).await;
            if chain.iter().any(|e| e.draft.action == action) {
                return chain;
            }
            assert!(
                Instant::now() < deadline,
                "document {document}: no {action} after {RUN_DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The document's audit chain, verified.
    pub async fn audit(&self, document: &DocumentId) -> Vec<AuditEntry> {
        let out = self
            .dynamodb
            .query()
            .table_name(self.out("AuditTable"))
            .key_condition_expression("documentId = :d")
            .expression_attribute_values(":d", AttributeValue::S(document.to_string()))
            .consistent_read(true)
            .send()
            .await
            .expect("query audit");
        let chain: Vec<AuditEntry> = out
            .items()
            .iter()
            .map(|i| serde_json::from_str(i["entry"].as_s().unwrap()).unwrap())
            .collect();
        verify(document, &chain, None).expect("the audit chain verifies");
        chain
    }

    /// The execution named `run_id` (started through the alias).
    pub fn execution_arn(&self, run_id: &str) -> String {
        docket_aws::sfn::execution_arn(self.out("StateMachineArn"), run_id)
    }

    /// Waits until the execution named `run_id` has ended (within [`RUN_DEADLINE`]); returns its
    /// status.
    pub async fn wait_for_execution(&self, run_id: &str) -> String {
        self.wait_for_execution_within(run_id, RUN_DEADLINE).await
    }

    /// The output of the execution named `run_id` (`null` while it runs or when it failed).
    pub async fn execution_output(&self, run_id: &str) -> Value {
        let described = self
            .sfn
            .describe_execution()
            .execution_arn(self.execution_arn(run_id))
            .send()
            .await
            .expect("describe the execution");
        let output = described.output().unwrap_or("null");
        serde_json::from_str(output).expect("an execution's output is JSON")
    }

    /// Waits until the execution named `run_id` has ended, at most `within`; returns its status.
    pub async fn wait_for_execution_within(&self, run_id: &str, within: Duration) -> String {
        let ended = self.ended(&self.execution_arn(run_id), within).await;
        ended.status().as_str().to_string()
    }

    /// Waits until the execution `arn` (of any state machine) has ended, at most `within`; how
    /// it ended.
    pub async fn ended(
        &self,
        arn: &str,
        within: Duration,
    ) -> aws_sdk_sfn::operation::describe_execution::DescribeExecutionOutput {
        let deadline = Instant::now() + within;
        loop {
            let out = self
                .sfn
                .describe_execution()
                .execution_arn(arn)
                .send()
                .await
                .expect("describe execution");
            if *out.status() != aws_sdk_sfn::types::ExecutionStatus::Running {
                return out;
            }
            assert!(Instant::now() < deadline, "execution {arn} still running");
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    /// How many executions of the state machine carry the name `run_id` (every page read).
    pub async fn executions_named(&self, run_id: &str) -> usize {
        self.execution_names()
            .await
            .iter()
            .filter(|name| *name == run_id)
            .count()
    }

    /// The names of every execution of `document`'s runs (a run id is `<document>-r<hash>`), from
    /// every page: a second execution under another name is counted too, which the name alone
    /// (Step Functions refuses a second execution of one name) could not show.
    pub async fn executions_of(&self, document: &DocumentId) -> Vec<String> {
        let prefix = RunId::prefix_of(document);
        let mut names = self.execution_names().await;
        names.retain(|name| name.starts_with(&prefix));
        names
    }

    /// The names of every execution of the pipeline, from every page.
    pub async fn execution_names(&self) -> Vec<String> {
        self.names_of_executions("StateMachineArn").await
    }

    /// The names of every execution of the bulk reprocess state machine (the reprocess ids).
    pub async fn bulk_execution_names(&self) -> Vec<String> {
        self.names_of_executions("BulkReprocessStateMachineArn")
            .await
    }

    async fn names_of_executions(&self, machine_output: &str) -> Vec<String> {
        let mut pages = self
            .sfn
            .list_executions()
            .state_machine_arn(self.out(machine_output))
            .max_results(1000)
            .into_paginator()
            .send();
        let mut names = Vec::new();
        while let Some(page) = pages.next().await {
            let page = page.expect("list executions");
            names.extend(page.executions().iter().map(|e| e.name().to_string()));
        }
        names
    }

    /// The versions of one object, newest first, as `(version id, sha256 of its bytes)`: in a
    /// versioned bucket every PutObject that landed is one of them. Panics if the bucket is not
    /// versioned, where one version would hide every overwrite.
    pub async fn versions(&self, bucket: &str, key: &str) -> Vec<(String, String)> {
        let versioning = self
            .s3
            .get_bucket_versioning()
            .bucket(bucket)
            .send()
            .await
            .expect("get bucket versioning");
        assert_eq!(
            versioning.status().map(|s| s.as_str()),
            Some("Enabled"),
            "{bucket} must be versioned for its overwrites to be counted"
        );
        let listed = self
            .s3
            .list_object_versions()
            .bucket(bucket)
            .prefix(key)
            .send()
            .await
            .expect("list object versions");
        let mut versions = Vec::new();
        for v in listed.versions().iter().filter(|v| v.key() == Some(key)) {
            let id = v.version_id().unwrap_or("null").to_string();
            let body = self
                .s3
                .get_object()
                .bucket(bucket)
                .key(key)
                .version_id(&id)
                .send()
                .await
                .expect("get object version");
            let bytes = body.body.collect().await.unwrap().into_bytes();
            versions.push((id, docket_core::ids::sha256_hex(&bytes)));
        }
        versions
    }

    /// The definition of `machine` (a state machine's or a version's ARN), as deployed
    /// (substituted).
    pub async fn definition(&self, machine: &str) -> String {
        let described = self
            .sfn
            .describe_state_machine()
            .state_machine_arn(machine)
            .send()
            .await;
        described
            .unwrap_or_else(|e| panic!("describe {machine}: {e:?}"))
            .definition()
            .to_string()
    }

    /// Every event of an execution's history, with execution data.
    pub async fn history(&self, run_id: &str) -> Vec<aws_sdk_sfn::types::HistoryEvent> {
        let mut events = Vec::new();
        let mut next = None;
        loop {
            let out = self
                .sfn
                .get_execution_history()
                .execution_arn(self.execution_arn(run_id))
                .include_execution_data(true)
                .set_next_token(next)
                .send()
                .await
                .expect("execution history");
            events.extend(out.events().iter().cloned());
            next = out.next_token().map(str::to_string);
            if next.is_none() {
                return events;
            }
        }
    }

    /// The JSON object at an `s3://bucket/key` pointer.
    pub async fn json(&self, pointer: &str) -> Value {
        serde_json::from_slice(&self.object_at(pointer).await).unwrap()
    }

    /// The bytes at an `s3://bucket/key` pointer.
    pub async fn object_at(&self, pointer: &str) -> Vec<u8> {
        let rest = pointer.strip_prefix("s3://").expect("s3 pointer");
        let (bucket, key) = rest.split_once('/').unwrap();
        self.object(bucket, key).await
    }

    /// The bytes of an object (its current version).
    pub async fn object(&self, bucket: &str, key: &str) -> Vec<u8> {
        let out = self
            .s3
            .get_object()
            .bucket(bucket)
            .key(key)
            .send()
            .await
            .unwrap_or_else(|e| panic!("s3://{bucket}/{key}: {e:?}"));
        out.body.collect().await.unwrap().into_bytes().to_vec()
    }

    /// Keys under a prefix of a bucket.
    pub async fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        let out = self
            .s3
            .list_objects_v2()
            .bucket(bucket)
            .prefix(prefix)
            .send()
            .await
            .expect("list");
        out.contents()
            .iter()
            .filter_map(|o| o.key().map(str::to_string))
            .collect()
    }
}

/// A string attribute of an item.
pub fn s(item: &BTreeMap<String, AttributeValue>, name: &str) -> String {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .cloned()
        .unwrap_or_default()
}

/// A fresh tenant for one test, so tests never see each other's documents.
pub fn tenant() -> String {
    util::unique("t").to_lowercase()
}

/// Where `scripts/deploy.sh --local` wrote the stack's outputs: `DOCKET_STACK_OUTPUTS`, else
/// `$DOCKET_LOCAL_DIR/stack-outputs.json`, else `.localstack/stack-outputs.json`.
pub fn outputs_path() -> String {
    std::env::var("DOCKET_STACK_OUTPUTS").unwrap_or_else(|_| {
        let dir = std::env::var("DOCKET_LOCAL_DIR").unwrap_or_else(|_| {
            util::workspace_root()
                .join(".localstack")
                .to_string_lossy()
                .into_owned()
        });
        format!("{dir}/stack-outputs.json")
    })
}

/// An invoice page with known fields.
pub fn invoice_lines(number: &str, total: &str) -> Vec<String> {
    vec![
        "Northwind Traders Ltd".into(),
        "INVOICE".into(),
        format!("Invoice No: {number}"),
        "Invoice Date: 2026-11-02".into(),
        "Widgets 10 x 12.50".into(),
        format!("Total: EUR {total}"),
    ]
}

/// The invoice as a one-page PDF (read by Textract's synchronous API).
pub fn invoice_pdf(lines: &[String]) -> Vec<u8> {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    render::pdf(&[&lines])
}

/// The invoice as a two-page PDF, its terms on the second page: read as a Textract job.
pub fn invoice_pdf_of_two_pages(lines: &[String]) -> Vec<u8> {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    render::pdf(&[&lines, &["Terms", "Payment within 30 days."]])
}

/// The synchronous Textract reads (`DetectDocumentText`) of the object `key` seen at the wire.
pub async fn text_reads_of(key: &str) -> usize {
    let subject = sha256_hex(key.as_bytes());
    util::wire_requests("textract", "DetectDocumentText", &subject)
        .await
        .len()
}

/// When each synchronous Textract read of the S3 object `key` reached the provider (unix ms).
pub async fn text_read_times(key: &str) -> Vec<i64> {
    let subject = sha256_hex(key.as_bytes());
    let reads = util::wire_requests("textract", "DetectDocumentText", &subject).await;
    reads.iter().filter_map(|r| r["atMs"].as_i64()).collect()
}

/// The Textract job starts seen at the wire for `run`'s OCR operation (its ClientRequestToken).
pub async fn text_job_starts_of(run: &str) -> usize {
    let op = docket_core::model::step::Step::Ocr.operation(&RunId::parse(run).unwrap());
    let subject = sha256_hex(op.as_str().as_bytes());
    util::wire_requests("textract", "StartDocumentTextDetection", &subject)
        .await
        .len()
}
