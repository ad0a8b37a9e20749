//! `docket diff RUN_A RUN_B`: what differs between two runs' outputs, field by field (values,
//! confidences, the decision, the config): their results, or, when either has none (it went to
//! review, or was invalid), their validation reports. The run ids themselves are left out.

use anyhow::{bail, Context};
use docket_core::diff::{changes, FieldChange};
use docket_core::ids::RunId;
use docket_core::model::run::ObjectRef;
use docket_core::ports::{BlobStore, RunRecord, Store};
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Args)]
pub struct Args {
    /// The first run (as `docket show` prints it).
    from: String,
    /// The second run.
    to: String,
}

/// The outputs compared, in order of preference.
const OUTPUTS: [&str; 2] = ["result", "validation"];

/// Top-level keys that differ between any two runs and say nothing about the document.
const IDS: [&str; 1] = ["runId"];

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    let a = record(stack, &args.from).await?;
    let b = record(stack, &args.to).await?;
    let Some(name) = OUTPUTS
        .into_iter()
        .find(|o| a.outputs.contains_key(*o) && b.outputs.contains_key(*o))
    else {
        bail!(
            "{} and {} have no output in common to compare",
            a.run_id,
            b.run_id
        );
    };
    let (x, y) = (read(stack, &a, name).await?, read(stack, &b, name).await?);
    let diff: Vec<_> = changes(&x, &y)
        .into_iter()
        .filter(|c| !IDS.contains(&c.path.as_str()))
        .collect();
    let value = json!({"from": a.run_id, "to": b.run_id, "compared": name, "changes": diff});
    print(output, &value, || match diff.is_empty() {
        true => format!("the {name}s of {} and {} are the same", a.run_id, b.run_id),
        false => lines(&diff),
    });
    Ok(())
}

/// One line per changed field: `path: before -> after` (`(absent)` for a side without it).
pub fn lines(diff: &[FieldChange]) -> String {
    let show = |v: &Option<Value>| v.as_ref().map_or("(absent)".into(), Value::to_string);
    diff.iter()
        .map(|c| format!("{}: {} -> {}", c.path, show(&c.before), show(&c.after)))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn record(stack: &Stack, run: &str) -> anyhow::Result<RunRecord> {
    let run = RunId::parse(run)?;
    stack
        .store
        .run(&run)
        .await?
        .with_context(|| format!("no run {run}"))
}

async fn read(stack: &Stack, run: &RunRecord, name: &str) -> anyhow::Result<Value> {
    let pointer = ObjectRef::from_pointer(&run.outputs[name])
        .with_context(|| format!("{}: {name} is not an s3:// pointer", run.run_id))?;
    let bytes = stack.blobs.get(&pointer).await?;
    serde_json::from_slice(&bytes).with_context(|| format!("{}: {name} is not JSON", run.run_id))
}
