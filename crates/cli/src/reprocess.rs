//! `docket reprocess --tenant T [--prefix P] [--since DATE] [--config FINGERPRINT] [--reocr]
//! --reason TEXT`
//! runs a tenant's documents again, each as a new run of the next generation beside its old
//! runs; `docket reprocess status ID` re-attaches to one.
//!
//! The CLI plans (`docket_core::reprocess::plan`, from the documents table's current runs) and
//! writes the manifest to the derived bucket once per reprocess id; then it asks the review API
//! (`POST /reprocesses`, signed with the operator role session's credentials) to start the bulk
//! state machine. The API records the verified operator as the requester and names the
//! execution by the reprocess id: the same request made again attaches to the same reprocess
//! and starts no run twice. Progress counts the manifest's runs by their records: done (ended),
//! failed (failed, unresolved, or never started once the Map ended) and left.

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use aws_sdk_sfn::types::ExecutionStatus;
use docket_aws::config::DynamoConfigs;
use docket_core::ids::{ReprocessId, RunId, Tenant};
use docket_core::model::run::ObjectRef;
use docket_core::ports::{BlobStore, ConfigStore, RunStatus, Store};
use docket_core::reprocess::{self, Item, Request, MAX_BATCH_SIZE};
use docket_core::steps::Layout;
use serde_json::{json, Value};

use crate::review::api::{api_url, Api};
use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    status: Option<Sub>,
    #[command(flatten)]
    start: Start,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Where a reprocess stands (items done, failed and left); `--follow` waits for its end.
    Status {
        /// The reprocess id (`rp-…`, as `docket reprocess` printed it).
        id: String,
        /// Show progress until every item has ended.
        #[arg(long)]
        follow: bool,
        /// With `--follow`: give up (exit 1) after this many seconds.
        #[arg(long, default_value_t = 1800)]
        timeout_seconds: u64,
    },
}

#[derive(clap::Args)]
struct Start {
    /// Whose documents.
    #[arg(long)]
    tenant: Option<String>,
    /// Only documents whose inbox name starts with this.
    #[arg(long)]
    prefix: Option<String>,
    /// Only documents whose current run was accepted on or after this date (`2026-12-01`) or
    /// time (RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// The config the new runs run under (`docket config list`); the deployed one by default.
    #[arg(long)]
    config: Option<String>,
    /// Why (recorded in each document's audit chain).
    #[arg(long)]
    reason: Option<String>,
    /// Ask the OCR provider again, even for documents whose stored OCR the same engine produced
    /// (by default a new run reuses its source version's stored OCR: no second OCR charge).
    #[arg(long)]
    reocr: bool,
    /// Items per batch (each batch is one child execution of the bulk Map, and fails as a
    /// whole).
    #[arg(long, default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_BATCH_SIZE)))]
    batch_size: u32,
    /// The share of items (percent) that may fail before the reprocess fails (the failed ones
    /// are listed either way).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100))]
    tolerate: u32,
    /// Start and print the id without waiting for the runs.
    #[arg(long)]
    no_wait: bool,
    /// Give up waiting (exit 1) after this many seconds.
    #[arg(long, default_value_t = 1800)]
    timeout_seconds: u64,
}

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    match args.status {
        Some(Sub::Status {
            id,
            follow,
            timeout_seconds,
        }) => {
            let id = ReprocessId::parse(&id)?;
            let wait = follow.then(|| Duration::from_secs(timeout_seconds));
            report(stack, &id, wait, output).await
        }
        None => start(stack, args.start, output).await,
    }
}

async fn start(stack: &Stack, args: Start, output: Output) -> anyhow::Result<()> {
    let (Some(tenant), Some(reason)) = (args.tenant, args.reason) else {
        bail!("docket reprocess needs --tenant and --reason (or: docket reprocess status ID)");
    };
    let config_fingerprint = match args.config {
        Some(config) => config,
        None => stack.out("ConfigFingerprint")?.to_string(),
    };
    let request = Request {
        tenant: Tenant::parse(&tenant)?,
        prefix: args.prefix,
        since: args.since,
        config_fingerprint,
        reason,
        reocr: args.reocr,
    };
    request.check()?;
    let configs = DynamoConfigs::new(stack.store.client().clone(), stack.out("ConfigTable")?);
    if configs.get(&request.config_fingerprint).await?.is_none() {
        bail!(
            "no config {} is published (docket config publish FILE)",
            request.config_fingerprint
        );
    }
    let id = request.id();
    let manifest = manifest_ref(stack, &id)?;
    let items = match stack.blobs.head(&manifest).await? {
        Some(_) => {
            eprintln!("reprocess {id}: this request was made before; attaching to it");
            read_manifest(stack, &manifest).await?
        }
        None => {
            let items = plan(stack, &request).await?;
            if items.is_empty() {
                let value = json!({"reprocessId": id, "items": 0});
                print(output, &value, || {
                    format!("reprocess {id}: no document of {tenant} is selected; nothing to do")
                });
                return Ok(());
            }
            let body = reprocess::to_jsonl(&items).into_bytes();
            stack
                .blobs
                .put(&manifest, body, "application/jsonl")
                .await?;
            items
        }
    };
    let start = reprocess::Start {
        request,
        batch_size: args.batch_size,
        tolerated_failure_percentage: args.tolerate,
    };
    let answer = ask_to_start(stack, &start, output).await?;
    eprintln!(
        "reprocess {id}: {} documents, {} (requested by {})",
        items.len(),
        if answer["started"] == true {
            "started"
        } else {
            "already started"
        },
        answer["requestedBy"]["operator"].as_str().unwrap_or("?")
    );
    let wait = (!args.no_wait).then(|| Duration::from_secs(args.timeout_seconds));
    report(stack, &id, wait, output).await
}

/// The items of `request`: each selected document's current run again, as the next generation.
async fn plan(stack: &Stack, request: &Request) -> anyhow::Result<Vec<Item>> {
    let documents = stack.store.documents_of(&request.tenant).await?;
    let mut runs = Vec::with_capacity(documents.len());
    for (n, document) in documents.iter().enumerate() {
        runs.push((
            document.current_run_id.clone(),
            stack.store.runs_of(&document.document_id).await?,
        ));
        if (n + 1) % 100 == 0 {
            eprintln!("planning: read {} of {} documents", n + 1, documents.len());
        }
    }
    let layout = Layout {
        raw_bucket: stack.out("RawBucket")?.to_string(),
        normalized_bucket: stack.out("NormalizedBucket")?.to_string(),
        derived_bucket: stack.out("DerivedBucket")?.to_string(),
    };
    Ok(reprocess::plan(
        request,
        |run| layout.ocr(&run.tenant, &run.document_id, &run.run_id),
        runs.iter()
            .map(|(current, runs)| (current, runs.as_slice())),
    ))
}

/// Asks the review API to start the bulk execution of `start` (its manifest written): its
/// answer, `started` false when the same request was started before.
async fn ask_to_start(
    stack: &Stack,
    start: &reprocess::Start,
    output: Output,
) -> anyhow::Result<Value> {
    let api = Api::connect(stack.out("ReviewApiUrl")?).await?;
    let url = api_url(&api.base, "reprocesses", &[])?;
    match api
        .call("POST", url, Some(&serde_json::to_value(start)?))
        .await?
    {
        Ok(answer) => Ok(answer),
        Err(refusal) => {
            if output == Output::Json {
                print(output, &refusal.json(), String::new);
            }
            bail!(refusal.explain(None));
        }
    }
}

fn manifest_ref(stack: &Stack, id: &ReprocessId) -> anyhow::Result<ObjectRef> {
    Ok(ObjectRef::new(
        stack.out("DerivedBucket")?,
        reprocess::manifest_key(id),
    ))
}

async fn read_manifest(stack: &Stack, manifest: &ObjectRef) -> anyhow::Result<Vec<Item>> {
    let text =
        String::from_utf8(stack.blobs.get(manifest).await?).context("the manifest is not UTF-8")?;
    Ok(reprocess::from_jsonl(&text)?)
}

/// Where a reprocess stands.
struct Progress {
    execution: String,
    runs: Vec<(Item, RunId, Option<RunStatus>)>,
}

impl Progress {
    fn map_ended(&self) -> bool {
        self.execution != ExecutionStatus::Running.as_str()
    }

    /// `done`, `failed` or `left` for one item's run.
    fn state(&self, status: Option<RunStatus>) -> &'static str {
        match status {
            None if self.map_ended() => "failed",
            None | Some(RunStatus::Started) | Some(RunStatus::AwaitingReview) => "left",
            Some(RunStatus::Failed | RunStatus::Unresolved | RunStatus::CompensationFailed) => {
                "failed"
            }
            Some(_) => "done",
        }
    }

    fn count(&self, state: &str) -> usize {
        self.runs
            .iter()
            .filter(|(_, _, s)| self.state(*s) == state)
            .count()
    }

    fn line(&self, id: &ReprocessId) -> String {
        format!(
            "reprocess {id}: {} done, {} failed, {} left of {} (bulk execution {})",
            self.count("done"),
            self.count("failed"),
            self.count("left"),
            self.runs.len(),
            self.execution
        )
    }

    fn json(&self, id: &ReprocessId) -> Value {
        json!({
            "reprocessId": id,
            "execution": self.execution,
            "items": self.runs.len(),
            "done": self.count("done"),
            "failed": self.count("failed"),
            "left": self.count("left"),
            "runs": self.runs.iter().map(|(item, run, status)| json!({
                "documentId": item.document_id,
                "fromRunId": item.from_run_id,
                "runId": run,
                "generation": item.generation,
                "status": status.map(RunStatus::as_str),
                "state": self.state(*status),
            })).collect::<Vec<_>>(),
        })
    }
}

async fn progress(stack: &Stack, id: &ReprocessId, items: &[Item]) -> anyhow::Result<Progress> {
    let sdk = docket_aws::load_config().await;
    let execution_arn = stack.execution_arn("BulkReprocessStateMachineArn", id.as_str())?;
    let described = aws_sdk_sfn::Client::new(&sdk)
        .describe_execution()
        .execution_arn(&execution_arn)
        .send()
        .await
        .with_context(|| format!("no bulk execution {id}"))?;
    let fingerprint = serde_json::from_str::<Value>(described.input().unwrap_or("{}"))?
        ["configFingerprint"]
        .as_str()
        .context("the bulk execution's input has no configFingerprint")?
        .to_string();
    let mut runs = Vec::with_capacity(items.len());
    for item in items {
        let run_id = item.run_id(&fingerprint);
        let status = stack.store.run(&run_id).await?.map(|r| r.status);
        runs.push((item.clone(), run_id, status));
    }
    Ok(Progress {
        execution: described.status().as_str().to_string(),
        runs,
    })
}

/// Prints where `id` stands; with `wait`, a progress line until every item has ended.
async fn report(
    stack: &Stack,
    id: &ReprocessId,
    wait: Option<Duration>,
    output: Output,
) -> anyhow::Result<()> {
    let items = read_manifest(stack, &manifest_ref(stack, id)?).await?;
    let deadline = wait.map(|w| Instant::now() + w);
    let mut now = progress(stack, id, &items).await?;
    if let Some(deadline) = deadline {
        while !(now.map_ended() && now.count("left") == 0) {
            eprint!("\r{}", now.line(id));
            std::io::stderr().flush().ok();
            if Instant::now() > deadline {
                eprintln!();
                bail!(
                    "reprocess {id}: gave up waiting; `docket reprocess status {id}` re-attaches"
                );
            }
            tokio::time::sleep(Duration::from_secs(3)).await;
            now = progress(stack, id, &items).await?;
        }
        eprintln!("\r{}", now.line(id));
    }
    print(output, &now.json(id), || {
        let mut out = now.line(id);
        for (item, run, status) in &now.runs {
            if now.state(*status) == "failed" {
                let status = status.map_or("not started", RunStatus::as_str);
                out.push_str(&format!(
                    "\n  failed: {} run {run} ({status})",
                    item.document_id
                ));
            }
        }
        out
    });
    if now.map_ended() && now.execution != ExecutionStatus::Succeeded.as_str() {
        bail!("reprocess {id}: the bulk execution ended {}", now.execution);
    }
    Ok(())
}
