//! `docket show`: a document's runs and current result.

use docket_core::ids::DocumentId;
use docket_core::model::run::ObjectRef;
use docket_core::ports::{BlobStore, Store};
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Args)]
pub struct Args {
    /// The document.
    document: String,
}

fn pointer(s: &str) -> Option<ObjectRef> {
    let (bucket, key) = s.strip_prefix("s3://")?.split_once('/')?;
    Some(ObjectRef::new(bucket, key))
}

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    let document = DocumentId::parse(&args.document)?;
    let runs = stack.store.runs_of(&document).await?;
    let current = stack.store.document(&document).await?;
    let result: Option<Value> = match current
        .as_ref()
        .and_then(|c| runs.iter().find(|r| r.run_id == c.current_run_id))
        .and_then(|r| r.outputs.get("result"))
        .and_then(|p| pointer(p))
    {
        Some(ptr) => Some(serde_json::from_slice(&stack.blobs.get(&ptr).await?)?),
        None => None,
    };
    let value = json!({
        "documentId": document,
        "currentRunId": current.as_ref().map(|c| c.current_run_id.to_string()),
        "runs": runs.iter().map(|r| json!({
            "runId": r.run_id, "status": r.status.as_str(), "versionId": r.source.version_id,
            "key": r.raw.key, "createdAt": r.created_at, "error": r.error, "outputs": r.outputs,
        })).collect::<Vec<_>>(),
        "result": result,
    });
    print(output, &value, || {
        let mut out = format!("document {document}\n");
        for r in &runs {
            let mark = if current
                .as_ref()
                .is_some_and(|c| c.current_run_id == r.run_id)
            {
                "*"
            } else {
                " "
            };
            out.push_str(&format!(
                " {mark} run {}  {:<15} {}  {}\n",
                r.run_id,
                r.status.as_str(),
                r.raw.key,
                r.error.as_deref().unwrap_or("")
            ));
        }
        if let Some(fields) = result.as_ref().and_then(|r| r["fields"].as_object()) {
            out.push_str("   result:\n");
            for (name, field) in fields {
                out.push_str(&format!(
                    "     {name:<15} {:<28} confidence {:.2}\n",
                    field["value"].as_str().unwrap_or(""),
                    field["confidence"].as_f64().unwrap_or(0.0)
                ));
            }
        }
        out.trim_end().to_string()
    });
    Ok(())
}
