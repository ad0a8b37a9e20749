//! `docket ops`: what an operator does about runs that did not end well. `unresolved`
//! (`unresolved.rs`): every case that needs a person, with its owner and next action. `failed`
//! and `redrive` (`failed.rs`): the executions that failed for a technical reason, and their
//! redrive from the Task that failed. `sweep` (`sweep.rs`): uploads with no run and no
//! quarantine copy, and the queues of inbox events that were never ingested. `resolve`
//! (`resolve.rs`): an operator's decision on an unresolved operation, through the review API.
//! `quotas` (`quotas.rs`): the Textract quotas OCR admission keeps to, and the jobs held.

mod failed;
mod quotas;
mod resolve;
mod sweep;
mod unresolved;

use crate::stack::Stack;
use crate::Output;

#[derive(clap::Subcommand)]
pub enum Command {
    /// List unresolved operations and runs and failed compensations, with owner and next action
    /// (exit 0 even if some).
    Unresolved,
    /// List the pipeline executions that ended FAILED, TIMED_OUT or ABORTED, each with its run
    /// and what to do about it.
    Failed {
        /// Only those that stopped at or after this time (RFC 3339, or a date: 2026-12-01).
        #[arg(long)]
        since: Option<String>,
    },
    /// Redrive a failed run's execution from the Task that failed (its run moved back to where
    /// it failed first), or every failed run's since a time.
    Redrive {
        /// The run (its execution's name).
        #[arg(
            required_unless_present = "failed_since",
            conflicts_with = "failed_since"
        )]
        run: Option<String>,
        /// Redrive every run whose execution failed at or after this time.
        #[arg(long)]
        failed_since: Option<String>,
    },
    /// Record your decision on an unresolved operation (from `docket ops unresolved`): the
    /// operation and its run become `resolved`, with you (the operator role session that signs
    /// the request) and the note in the ledger and the audit chain. A second resolve is refused.
    Resolve {
        /// The operation (`op-` + 32 hex).
        operation: String,
        /// What you found and decided (1 to 2000 characters).
        #[arg(long)]
        note: String,
        /// Its run, when it is not an unresolved run (found from the operation otherwise).
        #[arg(long)]
        run: Option<String>,
    },
    /// List inbox uploads with no run and no quarantine copy (lost events), and the events queued
    /// in IngestDLQ and IngestFailureQueue; with --resubmit, hand each to ingest again and
    /// drain the queued events whose upload is then accounted for.
    Sweep {
        /// Only uploads made at or after this time (RFC 3339, or a date: 2026-12-01).
        #[arg(long)]
        since: Option<String>,
        /// Resubmit each lost upload to ingest, then drain the queues.
        #[arg(long)]
        resubmit: bool,
    },
    /// Show the Textract quotas OCR admission keeps to (recorded, or AWS's us-east-1 defaults)
    /// and the job slots held now; with --tps, --max-jobs or --arrival-jitter-ms, record new
    /// ones (no deploy needed).
    Quotas(quotas::Change),
}

pub async fn run(stack: &Stack, command: Command, output: Output) -> anyhow::Result<()> {
    match command {
        Command::Unresolved => unresolved::run(stack, output).await,
        Command::Failed { since } => failed::list(stack, since.as_deref(), output).await,
        Command::Redrive { run, failed_since } => {
            failed::redrive(stack, run.as_deref(), failed_since.as_deref(), output).await
        }
        Command::Resolve {
            operation,
            note,
            run,
        } => resolve::resolve(stack, &operation, run.as_deref(), &note, output).await,
        Command::Sweep { since, resubmit } => {
            sweep::sweep(stack, since.as_deref(), resubmit, output).await
        }
        Command::Quotas(change) => quotas::quotas(stack, &change, output).await,
    }
}
