//! `docket retract DOC --reason TEXT`: withdraw a document's accepted result. The stack's
//! compensate function does it (`action: retract`, invoked with the caller's credentials: IAM
//! decides who may): the consumer's record voided by its receipt id, `document.retracted`
//! published, the previous version's result current again. A second retract does nothing and
//! says why. A refusal for a transient reason (`Transient.*`: another retract's attempt in flight,
//! a dependency down) is retried with jittered backoff, as the state machine retries compensate,
//! each wait said on stderr.

use std::time::Duration;

use anyhow::{bail, Context};
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

/// Invocations of a retract refused for a transient reason, at most (the state machine's bound
/// for `Transient.InProgress` on compensate).
const ATTEMPTS: u32 = 8;

/// The wait before attempt `n + 1`: up to 2 s doubling, at most 30 s, with full jitter.
fn backoff(n: u32) -> Duration {
    let cap_ms = (2_000u64 << n.min(4)).min(30_000);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::from(d.subsec_nanos()))
        .unwrap_or(0);
    Duration::from_millis(nanos % (cap_ms + 1))
}

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    let document = DocumentId::parse(&args.document)?;
    if args.reason.trim().is_empty() {
        bail!("--reason must say why the document is withdrawn");
    }
    let payload = json!({"action": "retract", "documentId": document, "reason": args.reason});
    let mut n = 1;
    let answer = loop {
        let answer = match stack.invoke("CompensateFunctionName", &payload).await? {
            Ok(answer) => break answer,
            Err(failed) => failed,
        };
        let error = answer["errorType"].as_str().unwrap_or("?");
        if !error.starts_with("Transient.") || n >= ATTEMPTS {
            bail!(
                "retract of {document} failed: {error} ({})",
                answer["errorMessage"].as_str().unwrap_or("")
            );
        }
        let wait = backoff(n);
        eprintln!("retract: {error}; attempt {n} of {ATTEMPTS}, trying again in {wait:.1?}");
        tokio::time::sleep(wait).await;
        n += 1;
    };
    let retraction: Retraction =
        serde_json::from_value(answer.clone()).context("the retraction's answer")?;
    print(output, &answer, || retraction.message.clone());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_four_seconds_up_to_thirty_with_jitter() {
        let caps = [4, 8, 16, 30, 30, 30, 30];
        for (n, cap) in (1..).zip(caps) {
            for _ in 0..50 {
                assert!(backoff(n) <= Duration::from_secs(cap), "attempt {n}");
            }
        }
        let waits: std::collections::BTreeSet<_> = (0..50).map(|_| backoff(7)).collect();
        assert!(waits.len() > 1, "jittered: {waits:?}");
    }
}
