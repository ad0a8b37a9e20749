//! audit-digest: every audit chain's head, signed with the stack's digest key and stored locked in
//! the digest bucket (see `docket_core::audit::digest`). Run by a schedule and, on demand, by a
//! direct invoke; whatever the payload (the schedule's event, `{}`), one digest is written.
//! Reserved concurrency 1 (template): two at once would both chain to the same predecessor.

use docket_aws::digest::{DigestAnchor, DigestConfig};
use docket_core::Error;
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::Failure;

/// What the digest function runs on: the anchor and the stack it covers.
pub struct Deps {
    /// Checkpoints, KMS key, digest bucket.
    pub anchor: DigestAnchor,
    /// `STACK_NAME`, recorded in each digest.
    pub stack: String,
}

impl Deps {
    /// From `STACK_NAME` and what [`DigestConfig::from_env`] reads.
    pub async fn from_env() -> Result<Self, Error> {
        let sdk = docket_aws::load_config().await;
        Ok(Deps {
            anchor: DigestAnchor::new(&sdk, DigestConfig::from_env()?),
            stack: docket_aws::env("STACK_NAME")?,
        })
    }
}

/// Writes one digest; answers its key, hash and how many chains it covers.
pub async fn handle(deps: &Deps, _event: Value) -> Result<Value, Failure> {
    let span = tracing::info_span!("audit.digest");
    let digest = crate::traced(
        span,
        deps.anchor.write(&deps.stack, OffsetDateTime::now_utc()),
    )
    .await?;
    tracing::info!(key = %digest.key(), chains = digest.chains.len(), "digest written");
    Ok(json!({
        "key": digest.key(),
        "hash": digest.hash(),
        "time": digest.time,
        "chains": digest.chains.len(),
    }))
}
