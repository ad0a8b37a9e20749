//! The functions run each step of a run under the config the run started under, found by its
//! fingerprint, whatever config a deploy put in them since.

use docket_core::config::PipelineConfig;
use docket_core::ports::ConfigStore;
use serde_json::json;

use super::*;

#[tokio::test]
async fn the_steps_of_a_run_run_under_the_config_it_started_under_after_a_deploy() {
    // given a run ingested under a stricter config, then a deploy of the built-in one
    let mut w = world();
    let mut stricter = serde_json::to_value(PipelineConfig::builtin()).unwrap();
    stricter["validation"]["min_confidence"] = json!(0.999);
    let stricter = PipelineConfig::from_json(&stricter.to_string()).unwrap();
    let at = "2026-11-30T12:00:00Z";
    w.ports
        .configs
        .publish(&stricter, "docket/deploy", at)
        .await
        .unwrap();
    w.ctx.config = stricter.clone();
    let before = w.ingested("inbox/acme/before.png", 0.97).await;
    w.ctx.config = PipelineConfig::builtin();

    // when its steps run on the functions deployed since, and a new upload's too
    let old = w.ocr_and_validate(before).await;
    let new = w.validated("inbox/acme/after.png", 0.97).await;

    // then the old run kept its config's rules; the new one runs under the deployed config
    assert_eq!(old["run"]["configFingerprint"], stricter.fingerprint());
    assert!(super::waits_for_a_reviewer(&old), "{old}");
    assert!(!super::waits_for_a_reviewer(&new), "{new}");
}
