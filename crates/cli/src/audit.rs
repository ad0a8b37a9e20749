//! `docket audit show|verify`: read a document's hash chain; recompute it and name the first bad
//! entry.

use docket_core::audit::{verify, ChainError};
use docket_core::ids::DocumentId;
use docket_core::ports::Store;
use serde_json::json;

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Print a document's audit trail.
    Show {
        /// The document.
        document: String,
    },
    /// Recompute chains and report the first bad entry of each (exit 1 if any is bad).
    Verify {
        /// The document (or --all).
        #[arg(required_unless_present = "all")]
        document: Option<String>,
        /// Every document in the audit table.
        #[arg(long)]
        all: bool,
    },
}

pub async fn run(stack: &Stack, command: Command, output: Output) -> anyhow::Result<()> {
    match command {
        Command::Show { document } => show(stack, &DocumentId::parse(&document)?, output).await,
        Command::Verify { document, all } => {
            let documents = match document {
                Some(d) if !all => vec![DocumentId::parse(&d)?],
                _ => stack.store.audited_documents().await?,
            };
            let mut reports = Vec::new();
            for d in &documents {
                let entries = stack.store.audit_entries(d).await?;
                let checkpoint = stack.store.audit_checkpoint(d).await?;
                let error = verify(d, &entries, checkpoint.as_ref()).err();
                reports.push(json!({
                    "documentId": d,
                    "entries": entries.len(),
                    "problem": error.as_ref().map(|e| e.to_string()),
                    "firstBadSeq": error.as_ref().map(ChainError::seq),
                }));
            }
            let bad = reports.iter().filter(|r| !r["problem"].is_null()).count();
            print(output, &json!({"documents": reports, "bad": bad}), || {
                let mut lines: Vec<String> = reports
                    .iter()
                    .map(|r| {
                        let verdict = r["problem"].as_str().unwrap_or("ok");
                        format!(
                            "{}  {} entries  {verdict}",
                            r["documentId"].as_str().unwrap(),
                            r["entries"]
                        )
                    })
                    .collect();
                lines.push(format!("{} chains, {bad} bad", reports.len()));
                lines.join("\n")
            });
            anyhow::ensure!(bad == 0, "{bad} audit chain(s) failed verification");
            Ok(())
        }
    }
}

async fn show(stack: &Stack, document: &DocumentId, output: Output) -> anyhow::Result<()> {
    let entries = stack.store.audit_entries(document).await?;
    let verdict = verify(document, &entries, None)
        .err()
        .map(|e| e.to_string());
    print(
        output,
        &json!({"entries": entries, "problem": verdict}),
        || {
            let mut lines: Vec<String> = entries
                .iter()
                .map(|e| {
                    let outputs: Vec<String> = e
                        .draft
                        .output_pointers
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    format!(
                        "{:>3} {}  {:<22} {:<16} {} {}",
                        e.seq,
                        e.time,
                        e.draft.action,
                        e.draft.actor,
                        &e.hash[..12],
                        outputs.join(" ")
                    )
                })
                .collect();
            lines.push(format!(
                "chain: {}",
                verdict.as_deref().unwrap_or("verified")
            ));
            lines.join("\n")
        },
    );
    Ok(())
}
