//! Fault injection through the Chaos-API endpoint. Each test uses a region of its own, so the rules
//! it sets cannot fail the other tests running at the same time.

use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;
use docket_e2e::util;
use reqwest::Method;
use serde_json::{json, Value};

use crate::dynamodb;

async fn post(path: &str, body: Value) -> Value {
    let response = util::chaos(Method::POST, path, &body).await;
    response.json().await.unwrap()
}

/// Removes exactly `rules` (other tests' rules stay).
async fn delete(rules: Value) {
    util::chaos(Method::DELETE, "faults", &rules).await;
}

/// Adds `rules`; returns every active rule.
async fn patch(rules: Value) -> Value {
    let response = util::chaos(Method::PATCH, "faults", &rules).await;
    response.json().await.unwrap()
}

async fn put(client: &Client, table: &str, pk: String) -> Result<(), String> {
    client
        .put_item()
        .table_name(table)
        .item("pk", AttributeValue::S(pk))
        .send()
        .await
        .map(|_| ())
        .map_err(|e| {
            e.into_service_error()
                .meta()
                .code()
                .unwrap_or("?")
                .to_string()
        })
}

/// A DynamoDB client that does not retry, so each injected fault is seen once.
async fn client_without_retries(region: &str) -> Client {
    let config = util::aws_in(region).await;
    let conf = aws_sdk_dynamodb::config::Builder::from(&config)
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
        .build();
    Client::from_conf(conf)
}

#[tokio::test]
async fn a_certain_fault_fails_put_item_with_the_chosen_code_until_it_is_removed() {
    const REGION: &str = "eu-west-3";
    let client = client_without_retries(REGION).await;
    let table = dynamodb::table(&client, "chaos-certain").await;
    let rule = json!([{
        "service": "dynamodb", "operation": "PutItem", "region": REGION, "probability": 1,
        "error": {"statusCode": 400, "code": "ProvisionedThroughputExceededException"}
    }]);

    let active = patch(rule.clone()).await;
    let during = put(&client, &table, "x".into()).await;
    let read_still_works = client.scan().table_name(&table).send().await;
    delete(rule.clone()).await;
    let after = put(&client, &table, "y".into()).await;

    assert!(active.as_array().unwrap().contains(&rule[0]), "{active}");
    assert_eq!(
        during,
        Err("ProvisionedThroughputExceededException".to_string())
    );
    assert!(read_still_works.is_ok(), "only PutItem is faulted");
    assert_eq!(after, Ok(()));
}

#[tokio::test]
async fn a_half_probability_fault_fails_about_half_of_200_calls() {
    const REGION: &str = "eu-south-1";
    let client = client_without_retries(REGION).await;
    let table = dynamodb::table(&client, "chaos-half").await;
    let rule = json!([{
        "service": "dynamodb", "operation": "PutItem", "region": REGION, "probability": 0.5,
        "error": {"statusCode": 503, "code": "ServiceUnavailable"}
    }]);
    patch(rule.clone()).await;

    let mut failed = 0;
    let mut other = Vec::new();
    for i in 0..200 {
        match put(&client, &table, format!("k{i}")).await {
            Ok(()) => {}
            Err(code) if code == "ServiceUnavailable" => failed += 1,
            Err(code) => other.push(code),
        }
    }
    delete(rule).await;

    // Binomial(200, 0.5): mean 100, sd ~7; 60..=140 is more than 5 sd either side.
    assert!((60..=140).contains(&failed), "failed {failed} of 200");
    assert!(other.is_empty(), "unexpected errors: {other:?}");
}

#[tokio::test]
async fn latency_effect_and_invalid_rules_are_answered() {
    let effects = post("effects", json!({"latency": 0})).await;
    assert_eq!(effects, json!({"latency": 0}));

    let bad = reqwest::Client::new()
        .post(format!("{}/_localstack/chaos/faults", util::endpoint()))
        .json(&json!([{"probability": 7}]))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["error"], "InvalidRule");
}

/// Runs a one-Task state machine (`resource` with `parameters`, no Retry) and returns the
/// execution's final status and error name.
async fn run_one_task(
    config: &aws_config::SdkConfig,
    resource: &str,
    parameters: Value,
) -> (String, Option<String>) {
    let sfn = aws_sdk_sfn::Client::new(config);
    let definition = json!({
        "StartAt": "Task",
        "States": {"Task": {
            "Type": "Task", "Resource": resource, "Parameters": parameters, "End": true
        }}
    });
    let (_machine, arn) =
        docket_e2e::resource::state_machine(config, "chaos-sfn", &definition).await;
    let execution = sfn
        .start_execution()
        .state_machine_arn(arn)
        .send()
        .await
        .unwrap();
    for _ in 0..100 {
        let described = sfn
            .describe_execution()
            .execution_arn(execution.execution_arn())
            .send()
            .await
            .unwrap();
        let status = described.status().as_str().to_string();
        if status != "RUNNING" {
            return (status, described.error().map(str::to_string));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("execution still running after 10 s");
}

async fn run_put_item_state_machine(
    config: &aws_config::SdkConfig,
    table: &str,
) -> (String, Option<String>) {
    let parameters = json!({"TableName": table, "Item": {"pk": {"S": "from-sfn"}}});
    run_one_task(
        config,
        "arn:aws:states:::aws-sdk:dynamodb:putItem",
        parameters,
    )
    .await
}

#[tokio::test]
async fn faults_apply_to_the_calls_step_functions_makes_for_its_sdk_integrations() {
    const REGION: &str = "eu-north-1";
    let config = util::aws_in(REGION).await;
    let table = dynamodb::table(&Client::new(&config), "chaos-sfn").await;
    let rule = json!([{
        "service": "dynamodb", "operation": "PutItem", "region": REGION,
        "error": {"statusCode": 400, "code": "ProvisionedThroughputExceededException"}
    }]);

    patch(rule.clone()).await;
    let (during, error) = run_put_item_state_machine(&config, &table).await;
    delete(rule).await;
    let (after, _) = run_put_item_state_machine(&config, &table).await;

    assert_eq!(during, "FAILED");
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("ProvisionedThroughputExceeded")),
        "{error:?}"
    );
    assert_eq!(after, "SUCCEEDED");
}

#[tokio::test]
async fn faults_apply_to_the_lambda_invocations_step_functions_makes() {
    const REGION: &str = "ap-south-1";
    let config = util::aws_in(REGION).await;
    let function = docket_e2e::function::Function::deploy(&config, 10, &[]).await;
    let invoke = |f: &docket_e2e::function::Function| json!({"FunctionName": f.arn.clone(), "Payload": {"echo": "hi"}});
    let rule = json!([{
        "service": "lambda", "operation": "Invoke", "region": REGION,
        "error": {"statusCode": 429, "code": "TooManyRequestsException"}
    }]);

    patch(rule.clone()).await;
    let (during, error) =
        run_one_task(&config, "arn:aws:states:::lambda:invoke", invoke(&function)).await;
    delete(rule).await;
    let (after, _) =
        run_one_task(&config, "arn:aws:states:::lambda:invoke", invoke(&function)).await;
    function.delete().await;

    assert_eq!(during, "FAILED");
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("TooManyRequests")),
        "{error:?}"
    );
    assert_eq!(after, "SUCCEEDED");
}
