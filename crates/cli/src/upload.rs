//! `docket upload`: put a file in a tenant's inbox.

use std::path::PathBuf;

use anyhow::Context;
use docket_core::ids::{DocumentId, Tenant};
use docket_core::model::run::ObjectRef;
use docket_core::ports::BlobStore;
use serde_json::json;

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Args)]
pub struct Args {
    /// The file to upload.
    file: PathBuf,
    /// The tenant (first path segment under inbox/).
    #[arg(long)]
    tenant: String,
    /// The name under the tenant's inbox (default: the file name).
    #[arg(long)]
    name: Option<String>,
}

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    let tenant = Tenant::parse(&args.tenant)?;
    let name = match args.name {
        Some(n) => n,
        None => args
            .file
            .file_name()
            .context("the file has no name")?
            .to_string_lossy()
            .into_owned(),
    };
    let body =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let key = format!("inbox/{tenant}/{name}");
    let target = ObjectRef::new(stack.out("RawBucket")?, key.clone());
    let version = stack
        .blobs
        .put(&target, body, "application/octet-stream")
        .await?;
    let document = DocumentId::new(&tenant, &name);
    let value = json!({"documentId": document, "key": key, "versionId": version});
    print(output, &value, || {
        format!("{document}  {key}  version {}", version.unwrap_or_default())
    });
    Ok(())
}
