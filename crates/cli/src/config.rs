//! `docket config fingerprint|publish|list|show|diff`: the pipeline configs. A config is
//! published once under its fingerprint (the deploy publishes `config/pipeline.json` and
//! deploys its fingerprint as the one new runs start under); a run keeps the one it started
//! under for every step.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use docket_aws::config::DynamoConfigs;
use docket_core::config::PipelineConfig;
use docket_core::diff::changes;
use docket_core::ports::{ConfigStore, Published};
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

/// The config file a deploy publishes.
const DEFAULT_FILE: &str = "config/pipeline.json";

#[derive(clap::Subcommand)]
pub enum Command {
    /// Print a config file's fingerprint (checks the file; needs no stack).
    Fingerprint {
        /// The config file.
        #[arg(default_value = DEFAULT_FILE)]
        file: PathBuf,
    },
    /// Publish a config file under its fingerprint (once; publishing it again changes nothing).
    Publish {
        /// The config file.
        #[arg(default_value = DEFAULT_FILE)]
        file: PathBuf,
        /// Who publishes it, as recorded with it.
        #[arg(long, default_value = "docket/cli")]
        by: String,
    },
    /// List the published configs, newest first; the deployed one (new runs start under it)
    /// is marked.
    List,
    /// Print a published config.
    Show {
        /// Its fingerprint (`cfg-…`).
        fingerprint: String,
    },
    /// The fields that differ between two published configs.
    Diff {
        /// The first config's fingerprint.
        from: String,
        /// The second config's fingerprint.
        to: String,
    },
}

fn read(file: &Path) -> anyhow::Result<PipelineConfig> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    PipelineConfig::from_json(&text)
        .with_context(|| format!("{} is not a valid config", file.display()))
}

/// Runs `command`; only the commands that read or write the store load the stack at `outputs`.
pub async fn run(outputs: &Path, command: Command, output: Output) -> anyhow::Result<()> {
    if let Command::Fingerprint { file } = &command {
        let config = read(file)?;
        let fingerprint = config.fingerprint();
        let value = json!({"fingerprint": fingerprint, "version": config.version});
        print(output, &value, || fingerprint.clone());
        return Ok(());
    }
    let stack = Stack::load(outputs).await?;
    let configs = DynamoConfigs::new(stack.store.client().clone(), stack.out("ConfigTable")?);
    match command {
        Command::Fingerprint { .. } => unreachable!("answered above"),
        Command::Publish { file, by } => {
            let config = read(&file)?;
            let at = time::OffsetDateTime::now_utc()
                .format(&time::format_description::well_known::Rfc3339)?;
            let published = configs.publish(&config, &by, &at).await?;
            let fingerprint = config.fingerprint();
            let new = published == Published::New;
            let value = json!({"fingerprint": fingerprint, "version": config.version, "new": new});
            print(output, &value, || match new {
                true => format!("published {fingerprint} (version {})", config.version),
                false => format!("{fingerprint} was already published"),
            });
        }
        Command::List => {
            let deployed = stack.outputs.get("ConfigFingerprint");
            let listed = configs.list().await?;
            let rows: Vec<Value> = listed
                .iter()
                .map(|c| {
                    let mut row = serde_json::to_value(c).expect("serializes");
                    row["deployed"] = json!(deployed == Some(&c.fingerprint));
                    row
                })
                .collect();
            print(output, &json!(rows), || {
                let line = |c: &docket_core::ports::PublishedConfig| {
                    let mark = if deployed == Some(&c.fingerprint) {
                        "*"
                    } else {
                        " "
                    };
                    let (f, v, at, by) =
                        (&c.fingerprint, &c.version, &c.published_at, &c.published_by);
                    format!("{mark} {f}  version {v:<12} {at}  by {by}")
                };
                listed.iter().map(line).collect::<Vec<_>>().join("\n")
            });
        }
        Command::Show { fingerprint } => {
            let config = published(&configs, &fingerprint).await?;
            let value = serde_json::to_value(&config)?;
            print(output, &value, || {
                serde_json::to_string_pretty(&value).expect("JSON")
            });
        }
        Command::Diff { from, to } => {
            let a = serde_json::to_value(published(&configs, &from).await?)?;
            let b = serde_json::to_value(published(&configs, &to).await?)?;
            let diff = changes(&a, &b);
            print(output, &json!(diff), || match diff.is_empty() {
                true => format!("{from} and {to} are the same"),
                false => crate::diff::lines(&diff),
            });
        }
    }
    Ok(())
}

async fn published(configs: &DynamoConfigs, fingerprint: &str) -> anyhow::Result<PipelineConfig> {
    match configs.get(fingerprint).await? {
        Some(config) => Ok(config),
        None => bail!("no config {fingerprint} is published (docket config list)"),
    }
}
