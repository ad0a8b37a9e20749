//! A run keeps the config it started under: the deployed functions run each step of a run
//! started under another config than the deployed one (as one started before a deploy) under
//! the config the run carries, found by its fingerprint in the stack's config table.

use std::time::{Duration, Instant};

use docket_aws::config::DynamoConfigs;
use docket_aws::faults::Faults;
use docket_core::config::PipelineConfig;
use docket_core::model::run::ExecutionInput;
use docket_core::ports::ConfigStore;
use docket_core::steps::{DEFAULT_OCR_WAIT_SECONDS, DEFAULT_REVIEW_WAIT_SECONDS};
use docket_core::validate::{Decision, ValidationReport};
use docket_e2e::reviewers::{docket, json_of, Session};
use docket_e2e::stack::Stack;
use serde_json::json;

use crate::lost_ack::{prepared_run_under, store};

/// The built-in config with `change` made to its JSON, read as a published config is.
fn variant(change: impl FnOnce(&mut serde_json::Value)) -> PipelineConfig {
    let mut json = serde_json::to_value(PipelineConfig::builtin()).unwrap();
    change(&mut json);
    PipelineConfig::from_json(&json.to_string()).unwrap()
}

#[tokio::test]
async fn a_run_started_under_another_config_is_validated_under_it_by_the_deployed_functions() {
    // given a stricter config published beside the deployed one, and a run started under it
    let stack = Stack::load().await;
    let stricter = variant(|c| {
        c["version"] = json!("e2e-stricter");
        c["validation"]["min_confidence"] = json!(0.9999);
    });
    let configs = DynamoConfigs::new(stack.dynamodb.clone(), stack.out("ConfigTable"));
    let at = "2026-12-02T00:00:00Z";
    configs.publish(&stricter, "docket/test", at).await.unwrap();
    let deployed = stack.out("ConfigFingerprint");
    assert_ne!(
        stricter.fingerprint(),
        deployed,
        "another config than the deployed one"
    );
    assert_eq!(PipelineConfig::builtin().fingerprint(), deployed);
    let store = store(&stack, &Faults::none()).await;
    let input = prepared_run_under(&stack, &store, &stricter).await;

    // when its execution runs through the alias, as ingest starts it
    let execution = stack
        .sfn
        .start_execution()
        .state_machine_arn(stack.out("StateMachineAliasArn"))
        .name(input.run_id.as_str())
        .input(
            serde_json::to_string(&ExecutionInput {
                run: input.clone(),
                ocr_wait_seconds: DEFAULT_OCR_WAIT_SECONDS,
                review_wait_seconds: DEFAULT_REVIEW_WAIT_SECONDS,
            })
            .unwrap(),
        )
        .send()
        .await
        .expect("start")
        .execution_arn()
        .to_string();

    // then validation decided under the run's config, not the deployed one
    let key = format!(
        "{}/{}/{}/validation.json",
        input.tenant, input.document_id, input.run_id
    );
    let deadline = Instant::now() + Duration::from_secs(180);
    let report: ValidationReport = loop {
        let derived = stack.out("DerivedBucket");
        let got = stack.s3.get_object().bucket(derived).key(&key).send().await;
        if let Ok(object) = got {
            let bytes = object.body.collect().await.unwrap().into_bytes();
            break serde_json::from_slice(&bytes).unwrap();
        }
        assert!(Instant::now() < deadline, "no validation report at {key}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    assert_eq!(report.config_version, "e2e-stricter");
    assert!(
        matches!(&report.decision, Decision::NeedsReview { .. }),
        "{:?}",
        report.decision
    );
    let _ = stack
        .sfn
        .stop_execution()
        .execution_arn(execution)
        .send()
        .await;
}

#[tokio::test]
async fn the_cli_lists_shows_and_diffs_the_published_configs() {
    // given the deployed config and a changed one published beside it
    let stack = Stack::load().await;
    let deployed = stack.out("ConfigFingerprint").to_string();
    // A version of its own: a fresh fingerprint on every run against the same stack.
    let changed = variant(|c| {
        c["version"] = json!(docket_e2e::util::unique("e2e-changed"));
        c["validation"]["max_future_days"] = json!(7);
    });
    let dir = docket_e2e::util::Scratch::new("config");
    let file = dir.join("pipeline.json");
    std::fs::write(&file, serde_json::to_string_pretty(&changed).unwrap()).unwrap();
    let operator = Session { env: Vec::new() };
    let file = file.to_str().unwrap();
    let published = json_of(&docket(&operator, &["config", "publish", file]).await);
    let again = json_of(&docket(&operator, &["config", "publish", file]).await);

    // when the operator lists, shows and diffs them
    let listed = json_of(&docket(&operator, &["config", "list"]).await);
    let shown = json_of(&docket(&operator, &["config", "show", &changed.fingerprint()]).await);
    let diff = docket(
        &operator,
        &["config", "diff", &deployed, &changed.fingerprint()],
    )
    .await;

    // then each says what is stored: published once, the deployed one marked, the changed
    // fields named with both values
    assert_eq!(published["fingerprint"], changed.fingerprint());
    assert_eq!(
        (published["new"].clone(), again["new"].clone()),
        (json!(true), json!(false))
    );
    let rows = listed.as_array().unwrap();
    let row = |f: &str| rows.iter().find(|r| r["fingerprint"] == f).cloned();
    assert_eq!(row(&deployed).expect("the deployed one")["deployed"], true);
    assert_eq!(
        row(&changed.fingerprint()).expect("the changed one")["deployed"],
        false
    );
    assert_eq!(
        PipelineConfig::from_json(&shown.to_string()).unwrap(),
        changed
    );
    let diff = json_of(&diff);
    let paths: Vec<_> = diff
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].clone())
        .collect();
    assert_eq!(
        paths,
        [json!("validation.max_future_days"), json!("version")]
    );
    assert_eq!(diff[0]["after"], 7);
    let missing = docket(&operator, &["config", "show", "cfg-0000000000000000"]).await;
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no config cfg-0000000000000000"));
}
