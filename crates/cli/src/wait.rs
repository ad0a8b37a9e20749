//! `docket wait`: follow documents until each has a finished run, with a progress line.

use std::io::Write;
use std::time::{Duration, Instant};

use docket_core::ids::{DocumentId, OperationId};
use docket_core::ports::RunStatus;
use serde_json::json;

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Args)]
pub struct Args {
    /// The documents to wait for, as `DOCUMENT` or `DOCUMENT@VERSION` (the S3 version id
    /// `docket upload` prints): with a version, only that upload's run counts, not an earlier
    /// version's finished run. A quarantined upload counts as finished: it never gets a run, its
    /// audit log says why.
    #[arg(required = true)]
    documents: Vec<String>,
    /// Give up (exit 1) after this many seconds.
    #[arg(long, default_value_t = 180)]
    timeout_seconds: u64,
}

/// A document to wait for, and the upload (S3 version) whose run counts, if one is named.
#[derive(Debug, Clone, PartialEq)]
struct Awaited {
    document: DocumentId,
    version: Option<String>,
}

impl Awaited {
    /// `DOCUMENT` or `DOCUMENT@VERSION`.
    fn parse(s: &str) -> anyhow::Result<Awaited> {
        let (document, version) = match s.split_once('@') {
            Some((d, v)) if !v.is_empty() => (d, Some(v.to_string())),
            Some(_) => anyhow::bail!("{s}: a version must follow '@'"),
            None => (s, None),
        };
        Ok(Awaited {
            document: DocumentId::parse(document)?,
            version,
        })
    }
}

/// Where a document stands: the status of its latest run (of the named version, if any), or
/// `quarantined`, or nothing yet.
async fn state(stack: &Stack, awaited: &Awaited) -> anyhow::Result<Option<String>> {
    let Awaited { document, version } = awaited;
    let runs = stack.store.runs_of(document).await?;
    let latest = runs
        .iter()
        .filter(|r| version.as_ref().is_none_or(|v| &r.source.version_id == v))
        .max_by(|a, b| a.created_at.cmp(&b.created_at));
    if let Some(run) = latest {
        return Ok((run.status != RunStatus::Started).then(|| run.status.as_str().to_string()));
    }
    let quarantine = version
        .as_ref()
        .map(|v| OperationId::quarantine(document, v));
    let chain = docket_core::ports::Store::audit_entries(&stack.store, document).await?;
    Ok(chain
        .iter()
        .filter(|e| quarantine.is_none() || e.draft.operation_id == quarantine)
        .any(|e| e.draft.action == "document.quarantined")
        .then(|| "quarantined".to_string()))
}

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    let documents = args
        .documents
        .iter()
        .map(|d| Awaited::parse(d))
        .collect::<anyhow::Result<Vec<_>>>()?;
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
                .map(|(a, s)| json!({"documentId": a.document, "versionId": a.version, "state": s.clone().unwrap_or_else(|| "unfinished".into())}))
                .collect::<Vec<_>>());
            print(output, &value, || {
                documents
                    .iter()
                    .zip(&states)
                    .map(|(a, s)| {
                        format!("{}  {}", a.document, s.as_deref().unwrap_or("unfinished"))
                    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_may_name_the_upload_whose_run_counts() {
        let id = "d0123456789abcdef01234567";
        assert_eq!(Awaited::parse(id).unwrap().version, None);
        let with = Awaited::parse(&format!("{id}@3HL4kqtJvjVBH40Nrjfkd")).unwrap();
        assert_eq!(with.document.as_str(), id);
        assert_eq!(with.version.as_deref(), Some("3HL4kqtJvjVBH40Nrjfkd"));
        assert!(Awaited::parse(&format!("{id}@")).is_err());
        assert!(Awaited::parse("not-a-document@v1").is_err());
    }
}
