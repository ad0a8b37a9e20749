//! `docket`: the operator CLI. Every command has `--help` and `--output json`.

mod audit;
mod config;
mod diff;
mod ops;
mod reprocess;
mod retract;
mod review;
mod show;
mod stack;
mod status;
mod upload;
mod versions;
mod wait;

use clap::{Parser, Subcommand, ValueEnum};

/// Operate a docket deployment: upload documents, follow their runs, read and verify the audit log.
#[derive(Parser)]
#[command(name = "docket", version)]
struct Cli {
    /// The stack's outputs (JSON written by scripts/deploy.sh).
    #[arg(
        long,
        global = true,
        env = "DOCKET_STACK_OUTPUTS",
        default_value = ".localstack/stack-outputs.json"
    )]
    outputs: std::path::PathBuf,
    /// How to print results.
    #[arg(long, global = true, value_enum, default_value_t = Output::Text)]
    output: Output,
    #[command(subcommand)]
    command: Command,
}

/// Output format.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// For people.
    Text,
    /// One JSON document on stdout.
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Upload a file to the inbox of a tenant.
    Upload(upload::Args),
    /// Wait until documents' runs have finished, showing progress.
    Wait(wait::Args),
    /// Show a document: its runs, each with its saga journal, and its current result.
    Show(show::Args),
    /// Where a run (or each run of a document) stands: its execution, state and attempts beside
    /// its business status, its steps with their timings, its open obligations.
    Status(status::Args),
    /// Read and verify audit chains.
    #[command(subcommand)]
    Audit(audit::Command),
    /// The pipeline configs: fingerprint, publish, list, show, diff.
    #[command(subcommand)]
    Config(config::Command),
    /// What needs an operator: unresolved operations and runs with owners, failed executions
    /// and their redrive.
    #[command(subcommand)]
    Ops(ops::Command),
    /// Human review: list, show, approve and reject review tasks (through the review API).
    #[command(subcommand)]
    Review(review::Command),
    /// Withdraw a document's accepted result: the downstream record voided, the retraction
    /// published, the previous version current again.
    Retract(retract::Args),
    /// Run a tenant's documents again as new runs of the next generation (a bulk reprocess),
    /// or follow one (`status ID`).
    Reprocess(reprocess::Args),
    /// What differs between two runs' results, field by field.
    Diff(diff::Args),
    /// The state machine and Lambda versions deploys left behind: list, prune.
    #[command(subcommand)]
    Versions(versions::Command),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Command::Config(command) = cli.command {
        return config::run(&cli.outputs, command, cli.output).await;
    }
    let stack = stack::Stack::load(&cli.outputs).await?;
    match cli.command {
        Command::Upload(args) => upload::run(&stack, args, cli.output).await,
        Command::Wait(args) => wait::run(&stack, args, cli.output).await,
        Command::Show(args) => show::run(&stack, args, cli.output).await,
        Command::Status(args) => status::run(&stack, args, cli.output).await,
        Command::Audit(command) => audit::run(&stack, command, cli.output).await,
        Command::Ops(command) => ops::run(&stack, command, cli.output).await,
        Command::Review(command) => review::run(&stack, command, cli.output).await,
        Command::Retract(args) => retract::run(&stack, args, cli.output).await,
        Command::Versions(command) => versions::run(&stack, command, cli.output).await,
        Command::Reprocess(args) => reprocess::run(&stack, args, cli.output).await,
        Command::Diff(args) => diff::run(&stack, args, cli.output).await,
        Command::Config(_) => unreachable!("answered above"),
    }
}
