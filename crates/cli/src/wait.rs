//! `docket wait`: follow documents until each has a finished run, with a progress line.

use std::io::Write;
use std::time::{Duration, Instant};

use docket_core::ids::DocumentId;
use docket_core::ports::RunStatus;
use serde_json::json;

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Args)]
pub struct Args {
    /// The documents to wait for (a quarantined upload counts as finished: it never gets a run,
    /// its audit log says why).
    #[arg(required = true)]
    documents: Vec<String>,
    /// Give up (exit 1) after this many seconds.
    #[arg(long, default_value_t = 180)]
    timeout_seconds: u64,
}

/// Where a document stands: its latest run's status, or `quarantined`, or nothing yet.
async fn state(stack: &Stack, document: &DocumentId) -> anyhow::Result<Option<String>> {
    let runs = stack.store.runs_of(document).await?;
    if let Some(run) = runs.iter().max_by(|a, b| a.created_at.cmp(&b.created_at)) {
        return Ok((run.status != RunStatus::Started).then(|| run.status.as_str().to_string()));
    }
    let chain = docket_core::ports::Store::audit_entries(&stack.store, document).await?;
    Ok(chain
        .iter()
        .any(|e| e.draft.action == "document.quarantined")
        .then(|| "quarantined".to_string()))
}

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    let documents = args
        .documents
        .iter()
        .map(|d| DocumentId::parse(d))
        .collect::<Result<Vec<_>, _>>()?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.timeout_seconds);
    loop {
        let mut states = Vec::new();
        for document in &documents {
            states.push(state(stack, document).await?);
        }
        let done = states.iter().filter(|s| s.is_some()).count();
        eprint!(
            "\rwaiting: {done}/{} documents finished ({:.0}s)   ",
            documents.len(),
            started.elapsed().as_secs_f64()
        );
        std::io::stderr().flush().ok();
        if done == documents.len() || Instant::now() > deadline {
            eprintln!();
            let value = json!(documents
                .iter()
                .zip(&states)
                .map(|(d, s)| json!({"documentId": d, "state": s.clone().unwrap_or_else(|| "unfinished".into())}))
                .collect::<Vec<_>>());
            print(output, &value, || {
                documents
                    .iter()
                    .zip(&states)
                    .map(|(d, s)| format!("{d}  {}", s.as_deref().unwrap_or("unfinished")))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            anyhow::ensure!(
                done == documents.len(),
                "timed out after {}s",
                args.timeout_seconds
            );
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
}
