//! CloudFormation `AWS::StepFunctions::StateMachineVersion` / `StateMachineAlias`: community
//! LocalStack skips them (their Ref is "unknown"); our extension
//! (infra/localstack/docket_localstack/cfn_stepfunctions.py) deploys them through the Step
//! Functions version/alias API.
//!
//! The update publishes the new version the way that also works on AWS: the changed template gives
//! the version resource a new logical id (CloudFormation creates it after updating the state
//! machine, re-points the alias, then deletes the old version). `!GetAtt
//! StateMachine.StateMachineRevisionId` cannot drive it on LocalStack (its StateMachine provider
//! does not report that attribute).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use aws_sdk_cloudformation::types::{Output, Stack, StackStatus};
use aws_sdk_sfn::types::ExecutionStatus;
use docket_e2e::resource::{Kind, Resource};
use docket_e2e::util;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(90);

/// A Pass-only state machine answering `result`, one version resource named `version`, and an
/// alias `live` routing 100% to it; the Refs as outputs.
fn template(result: &str, version: &str) -> String {
    let definition = json!({
        "StartAt": "Answer",
        "States": {"Answer": {"Type": "Pass", "Result": {"answer": result}, "End": true}}
    });
    json!({
        "Resources": {
            "Machine": {
                "Type": "AWS::StepFunctions::StateMachine",
                "Properties": {
                    "RoleArn": "arn:aws:iam::000000000000:role/x",
                    "DefinitionString": definition.to_string()
                }
            },
            version: {
                "Type": "AWS::StepFunctions::StateMachineVersion",
                "Properties": {
                    "StateMachineArn": {"Ref": "Machine"},
                    "Description": format!("answers {result}")
                }
            },
            "Alias": {
                "Type": "AWS::StepFunctions::StateMachineAlias",
                "Properties": {
                    "Name": "live",
                    "Description": "what callers start",
                    "RoutingConfiguration": [
                        {"StateMachineVersionArn": {"Ref": version}, "Weight": 100}
                    ]
                }
            }
        },
        "Outputs": {
            "MachineArn": {"Value": {"Ref": "Machine"}},
            "VersionArn": {"Value": {"Ref": version}},
            "VersionGetAttArn": {"Value": {"Fn::GetAtt": [version, "Arn"]}},
            "AliasArn": {"Value": {"Ref": "Alias"}},
            "AliasGetAttArn": {"Value": {"Fn::GetAtt": ["Alias", "Arn"]}}
        }
    })
    .to_string()
}

/// Polls the stack until it leaves `*_IN_PROGRESS` (bounded by `WAIT`).
async fn settle(cfn: &aws_sdk_cloudformation::Client, stack_id: &str) -> Stack {
    let started = Instant::now();
    loop {
        let stacks = cfn
            .describe_stacks()
            .stack_name(stack_id)
            .send()
            .await
            .expect("DescribeStacks")
            .stacks
            .unwrap_or_default();
        let stack = stacks.into_iter().next().expect("stack listed");
        let status = stack.stack_status().expect("stack status").as_str();
        if !status.ends_with("_IN_PROGRESS") {
            return stack;
        }
        assert!(
            started.elapsed() < WAIT,
            "stack {stack_id} still {status} after {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Stack events, newest first, for failure messages.
async fn events(cfn: &aws_sdk_cloudformation::Client, stack_id: &str) -> String {
    match cfn
        .describe_stack_events()
        .stack_name(stack_id)
        .send()
        .await
    {
        Ok(out) => out
            .stack_events()
            .iter()
            .map(|e| {
                format!(
                    "{} {} {}",
                    e.logical_resource_id().unwrap_or_default(),
                    e.resource_status().map(|s| s.as_str()).unwrap_or_default(),
                    e.resource_status_reason().unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("(no events: {e:?})"),
    }
}

async fn assert_status(
    cfn: &aws_sdk_cloudformation::Client,
    stack: &Stack,
    stack_id: &str,
    want: StackStatus,
) {
    if stack.stack_status() != Some(&want) {
        panic!(
            "stack {stack_id}: {:?} ({:?}), wanted {want:?}; events:\n{}",
            stack.stack_status(),
            stack.stack_status_reason(),
            events(cfn, stack_id).await
        );
    }
}

fn outputs(stack: &Stack) -> HashMap<String, String> {
    stack
        .outputs()
        .iter()
        .filter_map(|o: &Output| Some((o.output_key()?.to_string(), o.output_value()?.to_string())))
        .collect()
}

/// `<machine>:<n>` with a numeric `n`.
fn assert_version_arn(arn: &str, machine: &str) -> u32 {
    let n = arn
        .strip_prefix(&format!("{machine}:"))
        .unwrap_or_else(|| panic!("version ARN {arn:?} is not under {machine}"));
    n.parse()
        .unwrap_or_else(|_| panic!("version ARN {arn:?} does not end in a number"))
}

/// Routing of the alias as (version ARN, weight) pairs.
async fn routing(sfn: &aws_sdk_sfn::Client, alias_arn: &str) -> Vec<(String, i32)> {
    let alias = sfn
        .describe_state_machine_alias()
        .state_machine_alias_arn(alias_arn)
        .send()
        .await
        .expect("DescribeStateMachineAlias");
    assert_eq!(alias.name(), Some("live"));
    alias
        .routing_configuration()
        .iter()
        .map(|r| (r.state_machine_version_arn().to_string(), r.weight()))
        .collect()
}

/// Starts an execution through the alias, waits for it, and checks what it ran.
async fn run_through_alias(
    sfn: &aws_sdk_sfn::Client,
    alias_arn: &str,
    version_arn: &str,
    want_answer: &str,
) {
    let exec_arn = sfn
        .start_execution()
        .state_machine_arn(alias_arn)
        .input("{}")
        .send()
        .await
        .expect("StartExecution with the alias ARN")
        .execution_arn;
    let started = Instant::now();
    let described = loop {
        let d = sfn
            .describe_execution()
            .execution_arn(&exec_arn)
            .send()
            .await
            .expect("DescribeExecution");
        if d.status() != &ExecutionStatus::Running {
            break d;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "execution still running"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        described.status(),
        &ExecutionStatus::Succeeded,
        "{described:?}"
    );
    let output: Value = serde_json::from_str(described.output().expect("output")).unwrap();
    assert_eq!(output, json!({"answer": want_answer}));
    assert_eq!(described.state_machine_alias_arn(), Some(alias_arn));
    assert_eq!(described.state_machine_version_arn(), Some(version_arn));
}

#[tokio::test]
async fn version_and_alias_resources_are_deployed_updated_and_deleted() {
    // Given a stack with a Pass state machine, a version of it and an alias routing to it
    let config = util::aws().await;
    let cfn = aws_sdk_cloudformation::Client::new(&config);
    let sfn = aws_sdk_sfn::Client::new(&config);
    let name = Resource::new(Kind::Stack, config.region(), "cfn-sfn").await;

    // When it is created
    let stack_id = cfn
        .create_stack()
        .stack_name(&name)
        .template_body(template("one", "VersionOne"))
        .send()
        .await
        .expect("CreateStack")
        .stack_id
        .expect("stack id");
    let stack = settle(&cfn, &stack_id).await;

    // Then the Refs are real ARNs, the alias routes to the version, and executions through the
    // alias run that version
    assert_status(&cfn, &stack, &stack_id, StackStatus::CreateComplete).await;
    let out = outputs(&stack);
    let machine = out["MachineArn"].clone();
    let v1 = out["VersionArn"].clone();
    let alias = out["AliasArn"].clone();
    assert!(machine.starts_with("arn:aws:states:"), "{out:?}");
    assert_version_arn(&v1, &machine);
    assert_eq!(out["VersionGetAttArn"], v1);
    assert_eq!(alias, format!("{machine}:live"), "{out:?}");
    assert_eq!(out["AliasGetAttArn"], alias);
    assert_eq!(routing(&sfn, &alias).await, vec![(v1.clone(), 100)]);
    let version = sfn
        .describe_state_machine()
        .state_machine_arn(&v1)
        .send()
        .await
        .expect("DescribeStateMachine of the version");
    assert_eq!(version.description(), Some("answers one"));
    run_through_alias(&sfn, &alias, &v1, "one").await;

    // When the definition changes and the version resource is replaced
    cfn.update_stack()
        .stack_name(&stack_id)
        .template_body(template("two", "VersionTwo"))
        .send()
        .await
        .expect("UpdateStack");
    let stack = settle(&cfn, &stack_id).await;

    // Then a new version is published, the alias routes to it, and the old version is gone
    assert_status(&cfn, &stack, &stack_id, StackStatus::UpdateComplete).await;
    let out = outputs(&stack);
    let v2 = out["VersionArn"].clone();
    assert_eq!(
        out["MachineArn"], machine,
        "the state machine is updated in place"
    );
    assert_eq!(out["AliasArn"], alias, "the alias is updated in place");
    assert!(
        assert_version_arn(&v2, &machine) > assert_version_arn(&v1, &machine),
        "{v2} is not newer than {v1}"
    );
    assert_eq!(routing(&sfn, &alias).await, vec![(v2.clone(), 100)]);
    let versions: Vec<String> = sfn
        .list_state_machine_versions()
        .state_machine_arn(&machine)
        .send()
        .await
        .expect("ListStateMachineVersions")
        .state_machine_versions()
        .iter()
        .map(|v| v.state_machine_version_arn().to_string())
        .collect();
    assert_eq!(versions, vec![v2.clone()]);
    run_through_alias(&sfn, &alias, &v2, "two").await;

    // When the stack is deleted
    cfn.delete_stack()
        .stack_name(&stack_id)
        .send()
        .await
        .expect("DeleteStack");
    let stack = settle(&cfn, &stack_id).await;

    // Then the alias, the version and the state machine are gone
    assert_status(&cfn, &stack, &stack_id, StackStatus::DeleteComplete).await;
    assert!(
        sfn.describe_state_machine_alias()
            .state_machine_alias_arn(&alias)
            .send()
            .await
            .is_err(),
        "alias {alias} still exists"
    );
    assert!(
        sfn.describe_state_machine()
            .state_machine_arn(&v2)
            .send()
            .await
            .is_err(),
        "version {v2} still exists"
    );
    assert!(
        sfn.describe_state_machine()
            .state_machine_arn(&machine)
            .send()
            .await
            .is_err(),
        "state machine {machine} still exists"
    );
}
