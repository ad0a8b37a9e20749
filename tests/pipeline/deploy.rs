//! Deploys reach executions: a stack update that changes the step functions' configuration
//! publishes a new version of each and a new state machine version whose definition invokes
//! them, the alias routes to it, and a new execution started through the alias runs on it.
//!
//! `scripts/test-local.sh` deploys the stack twice before these tests, first with the template's
//! review wait (as `make demo` does) and then with `REVIEW_TIMEOUT_SECONDS=45` and another log
//! level (both in the functions' environment): so the stack under test has always just been
//! updated in exactly those. The second deploy is a CANARY one (`PIPELINE_DEPLOYMENT`):
//! LocalStack applies it at once (README "Local AWS"), and the alias's switch from a routing to
//! a deployment preference must deploy.

use aws_sdk_sfn::types::ExecutionStatus;
use docket_e2e::stack::Stack;
use docket_e2e::util;

#[tokio::test]
async fn a_new_execution_through_the_alias_runs_on_the_redeployed_step_functions() {
    // Given the stack as test-local.sh left it: redeployed with a 45 s review wait (written into
    // each new execution's input by the functions that start runs), as a canary.
    let stack = Stack::load().await;
    let wait = stack.parameter("ReviewTimeoutSeconds").await;
    assert_eq!(
        wait, "45",
        "test-local.sh deploys REVIEW_TIMEOUT_SECONDS=45 last"
    );
    let deployment = stack.parameter("PipelineDeployment").await;
    assert_eq!(deployment, "CANARY", "test-local.sh deploys a canary last");

    // When an execution starts through the alias (its input fails the first state at once: no
    // Lambda runs, nothing is written).
    let alias = stack.out("StateMachineAliasArn");
    let started = stack
        .sfn
        .start_execution()
        .state_machine_arn(alias)
        .name(util::unique("deploy-check"))
        .input("{}")
        .send()
        .await
        .expect("start through the alias");
    let execution = started.execution_arn();

    // Then it ran on a version whose definition invokes validate's newest version: the redeploy
    // changed every step function's configuration (LOG_LEVEL), so it published a new one of
    // each and a definition that names them...
    let described = stack
        .sfn
        .describe_execution()
        .execution_arn(execution)
        .send()
        .await
        .expect("describe execution");
    let version = described
        .state_machine_version_arn()
        .expect("an execution through an alias runs on a version");
    let definition = stack.definition(version).await;
    let published: Vec<_> = stack
        .lambda
        .list_versions_by_function()
        .function_name(stack.out("ValidateFunctionName"))
        .into_paginator()
        .items()
        .send()
        .collect::<Result<_, _>>()
        .await
        .expect("list validate's versions");
    let newest = published
        .iter()
        .filter_map(|v| v.version()?.parse::<u32>().ok())
        .max()
        .expect("validate has published versions");
    let qualified = format!("\"{}:{newest}\"", stack.out("ValidateFunctionArn"));
    assert!(
        definition.contains(&qualified),
        "execution {execution} ran on {version}, whose definition does not invoke validate's \
         version {newest} (the alias still routes to a version published before the last deploy)"
    );
    // ...and that version is the one the stack published last (the alias follows it, wholly:
    // locally a canary completes at once).
    assert_eq!(
        Some(version),
        Some(stack.out("StateMachineVersionArn")),
        "the alias routes to another version than the stack's"
    );
    let routing = stack
        .sfn
        .describe_state_machine_alias()
        .state_machine_alias_arn(alias)
        .send()
        .await
        .expect("describe alias");
    let routes: Vec<(&str, i32)> = routing
        .routing_configuration()
        .iter()
        .map(|r| (r.state_machine_version_arn(), r.weight()))
        .collect();
    assert_eq!(routes, [(version, 100)], "the alias after a canary deploy");

    if described.status() == &ExecutionStatus::Running {
        let _ = stack
            .sfn
            .stop_execution()
            .execution_arn(execution)
            .send()
            .await;
    }
}
