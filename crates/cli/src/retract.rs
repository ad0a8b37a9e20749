//! `docket retract DOC --reason TEXT`: withdraw a document's accepted result. The stack's
//! compensate function does it (`action: retract`, invoked with the caller's credentials: IAM
//! decides who may): the consumer's record voided by its receipt id, `document.retracted`
//! published, the previous version's result current again. A second retract does nothing and
//! says why.

use anyhow::{bail, Context};
use aws_sdk_lambda::primitives::Blob;
use docket_core::ids::DocumentId;
use docket_core::steps::saga::Retraction;
use serde_json::json;

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Args)]
pub struct Args {
    /// The document (as `docket show` and `docket upload` print it).
    document: String,
    /// Why it is withdrawn (kept in the saga journal and the audit chain).
    #[arg(long)]
    reason: String,
}

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    let document = DocumentId::parse(&args.document)?;
    if args.reason.trim().is_empty() {
        bail!("--reason must say why the document is withdrawn");
    }
    let function = stack.out("CompensateFunctionName")?;
    let payload = json!({"action": "retract", "documentId": document, "reason": args.reason});
    let sdk = docket_aws::load_config().await;
    let out = aws_sdk_lambda::Client::new(&sdk)
        .invoke()
        .function_name(function)
        .payload(Blob::new(payload.to_string()))
        .send()
        .await
        .with_context(|| format!("invoking {function}"))?;
    let body = out
        .payload()
        .map(|b| b.as_ref().to_vec())
        .unwrap_or_default();
    let answer: serde_json::Value =
        serde_json::from_slice(&body).context("the compensate function's answer")?;
    if out.function_error().is_some() {
        bail!(
            "retract of {document} failed: {} ({})",
            answer["errorType"].as_str().unwrap_or("?"),
            answer["errorMessage"].as_str().unwrap_or("")
        );
    }
    let retraction: Retraction =
        serde_json::from_value(answer.clone()).context("the retraction's answer")?;
    print(output, &answer, || retraction.message.clone());
    Ok(())
}
