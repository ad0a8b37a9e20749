//! A step runs under its run's config: the one the run started under, found by the fingerprint
//! it carries, not the one compiled into the function that runs the step (a deploy in between
//! would otherwise change the rules of a run already under way).

use std::borrow::Cow;

use super::Context;
use crate::config::PipelineConfig;
use crate::ports::{ConfigStore, HasConfigs, Published};
use crate::Error;

/// `ctx` under the config published as `fingerprint`: `ctx` itself when it has that config, else
/// a copy with the published one. An unpublished fingerprint is `Fatal.Internal` (a run can only
/// carry one that ingest found published).
pub async fn configured<'c>(
    ports: &impl HasConfigs,
    ctx: &'c Context,
    fingerprint: &str,
) -> Result<Cow<'c, Context>, Error> {
    if ctx.config.fingerprint() == fingerprint {
        return Ok(Cow::Borrowed(ctx));
    }
    let config = published(ports.configs(), fingerprint).await?;
    Ok(Cow::Owned(Context {
        config,
        ..ctx.clone()
    }))
}

/// Whether a run may start under `fingerprint`: the config built into `ctx` (the deployed one)
/// or a published one.
pub async fn known(
    ports: &impl HasConfigs,
    ctx: &Context,
    fingerprint: &str,
) -> Result<bool, Error> {
    Ok(
        ctx.config.fingerprint() == fingerprint
            || ports.configs().get(fingerprint).await?.is_some(),
    )
}

/// The config published as `fingerprint` (`Fatal.Internal` if none is).
pub async fn published(
    configs: &impl ConfigStore,
    fingerprint: &str,
) -> Result<PipelineConfig, Error> {
    configs.get(fingerprint).await?.ok_or_else(|| {
        Error::Internal(format!(
            "pipeline config {fingerprint} is not published (docket config publish)"
        ))
    })
}

/// Publishes `config` under its fingerprint as `by`, now by `ctx`'s clock; the fingerprint and
/// whether it was new.
pub async fn publish(
    ports: &impl HasConfigs,
    ctx: &Context,
    config: &PipelineConfig,
    by: &str,
) -> Result<(String, Published), Error> {
    let published = ports
        .configs()
        .publish(config, by, &ctx.clock.now_rfc3339())
        .await?;
    Ok((config.fingerprint(), published))
}
