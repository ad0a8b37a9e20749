//! `docket-eval`: prints per-field accuracy, the auto-approve rate, silent errors and the
//! share of confident fields that are right, on the labelled invoices; fails on a silent error.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use docket_core::config::PipelineConfig;

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    Text,
    Json,
}

/// Measures docket's extraction and validation on the labelled invoices
/// (tests/fixtures/invoices). Exits 1 when an auto-approved invoice has a wrong field.
#[derive(Parser)]
#[command(name = "docket-eval")]
struct Args {
    /// The labelled set [default: the repository's tests/fixtures/invoices].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// A pipeline config to measure instead of config/pipeline.json.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Also a line per invoice with its decision and wrong fields (text output).
    #[arg(long)]
    each: bool,
    /// text, or json (the whole report, each invoice's fields included).
    #[arg(long, value_enum, default_value = "text")]
    output: Output,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let config = match &args.config {
        Some(path) => PipelineConfig::from_json(
            &std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?,
        )?,
        None => PipelineConfig::builtin(),
    };
    let dir = args.dir.unwrap_or_else(docket_eval::default_dir);
    let report = docket_eval::evaluate(&dir, &config)?;
    match args.output {
        Output::Text => print!("{}", report.text(args.each)),
        Output::Json => println!("{}", serde_json::to_string_pretty(&report)?),
    }
    if report.all.silent_errors > 0 {
        std::process::exit(1);
    }
    Ok(())
}
