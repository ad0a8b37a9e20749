//! A step runs under the config its run carries: published once by fingerprint, found again by
//! it, never the deployed one when the run started under another.

use std::borrow::Cow;

use super::*;
use crate::config::PipelineConfig;
use crate::ports::{ConfigStore, Published};
use crate::steps::config::{configured, publish};

/// The built-in config with a stricter confidence threshold (another fingerprint).
fn stricter() -> PipelineConfig {
    let mut config = PipelineConfig::builtin();
    config.validation.min_confidence = 0.99;
    config
}

#[tokio::test]
async fn a_run_under_another_config_is_handled_under_the_published_one() {
    let w = world();
    let older = stricter();
    let (fingerprint, new) = publish(&w.ports, &w.ctx, &older, "docket/test")
        .await
        .unwrap();
    let (_, again) = publish(&w.ports, &w.ctx, &older, "someone-else")
        .await
        .unwrap();

    let own = configured(&w.ports, &w.ctx, &w.ctx.config.fingerprint()).await;
    let theirs = configured(&w.ports, &w.ctx, &fingerprint).await.unwrap();

    assert_eq!((new, again), (Published::New, Published::Already));
    assert!(
        matches!(own.unwrap(), Cow::Borrowed(_)),
        "the deployed one, as is"
    );
    assert_eq!(theirs.config, older);
    assert_eq!(theirs.config.fingerprint(), fingerprint);
    assert_eq!(theirs.actor, w.ctx.actor, "only the config differs");
    let listed = w.ports.configs.list().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].published_by, "docket/test",
        "the first publish stands"
    );
}

#[tokio::test]
async fn a_fingerprint_never_published_is_fatal_and_named() {
    let w = world();
    let missing = configured(&w.ports, &w.ctx, "cfg-0000000000000000").await;
    let e = missing.unwrap_err();
    assert_eq!(e.name(), "Fatal.Internal");
    assert!(e.to_string().contains("cfg-0000000000000000"), "{e}");
}
