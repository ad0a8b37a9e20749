//! DynamoDB served from moto (no DynamoDB Local download): the conditional-write behaviour the
//! ledger and audit log rely on.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, GlobalSecondaryIndex, KeySchemaElement, KeyType,
    Projection, ProjectionType, Put, ScalarAttributeType, TimeToLiveSpecification,
    TransactWriteItem,
};
use aws_sdk_dynamodb::Client;
use docket_e2e::resource::{self, Resource};
use docket_e2e::util;

/// A table keyed by `pk` with a GSI on `tenant`, created fresh for one test.
pub async fn table(client: &Client, label: &str) -> Resource {
    resource::table(client, label, |table| {
        table
            .attribute_definitions(string_attribute("pk"))
            .attribute_definitions(string_attribute("tenant"))
            .key_schema(key("pk", KeyType::Hash))
            .global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name("by-tenant")
                    .key_schema(key("tenant", KeyType::Hash))
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::All)
                            .build(),
                    )
                    .build()
                    .unwrap(),
            )
    })
    .await
}

/// The definition of a string attribute.
pub fn string_attribute(name: &str) -> AttributeDefinition {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()
        .unwrap()
}

/// A key schema element.
pub fn key(name: &str, key_type: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(key_type)
        .build()
        .unwrap()
}

/// Turns TTL on for `attribute` of `table`.
pub async fn enable_ttl(client: &Client, table: &str, attribute: &str) {
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name(attribute)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("enable TTL");
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_string())
}

#[tokio::test]
async fn conditional_put_on_an_existing_key_is_refused_and_keeps_the_first_item() {
    let client = Client::new(&util::aws().await);
    let table = table(&client, "cond").await;
    let put = |owner: &str| {
        client
            .put_item()
            .table_name(&table)
            .item("pk", s("op-1"))
            .item("owner", s(owner))
            .condition_expression("attribute_not_exists(pk)")
    };

    put("first").send().await.expect("first claim");
    let err = put("second")
        .send()
        .await
        .expect_err("second claim must fail");

    assert!(
        err.as_service_error()
            .is_some_and(|e| e.is_conditional_check_failed_exception()),
        "{err:?}"
    );
    let item = util::get_item(&client, &table, "pk", "op-1").await.unwrap();
    assert_eq!(item["owner"], s("first"));
}

#[tokio::test]
async fn transact_write_conflict_is_cancelled_with_a_reason_per_item() {
    let client = Client::new(&util::aws().await);
    let table = table(&client, "txn").await;
    client
        .put_item()
        .table_name(&table)
        .item("pk", s("taken"))
        .send()
        .await
        .unwrap();
    let put = |pk: &str| {
        TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name(&table)
                    .item("pk", s(pk))
                    .condition_expression("attribute_not_exists(pk)")
                    .build()
                    .unwrap(),
            )
            .build()
    };

    let err = client
        .transact_write_items()
        .transact_items(put("free"))
        .transact_items(put("taken"))
        .send()
        .await
        .expect_err("the transaction must be cancelled");

    let cancelled = match err.into_service_error() {
        aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(e) => e,
        other => panic!("expected TransactionCanceledException, got {other:?}"),
    };
    let codes: Vec<_> = cancelled
        .cancellation_reasons()
        .iter()
        .map(|r| r.code().unwrap_or_default().to_string())
        .collect();
    assert_eq!(codes, ["None", "ConditionalCheckFailed"]);
    let free = client
        .get_item()
        .table_name(&table)
        .key("pk", s("free"))
        .send()
        .await
        .unwrap();
    assert!(free.item.is_none(), "a cancelled transaction wrote nothing");
}

#[tokio::test]
async fn gsi_query_and_ttl_setting_work() {
    let client = Client::new(&util::aws().await);
    let table = table(&client, "gsi").await;
    for (pk, tenant) in [("a", "acme"), ("b", "acme"), ("c", "globex")] {
        client
            .put_item()
            .table_name(&table)
            .item("pk", s(pk))
            .item("tenant", s(tenant))
            .item("expiresAt", AttributeValue::N("4102444800".into()))
            .send()
            .await
            .unwrap();
    }
    enable_ttl(&client, &table, "expiresAt").await;

    let acme = client
        .query()
        .table_name(&table)
        .index_name("by-tenant")
        .key_condition_expression("tenant = :t")
        .expression_attribute_values(":t", s("acme"))
        .send()
        .await
        .unwrap();
    let ttl = client
        .describe_time_to_live()
        .table_name(&table)
        .send()
        .await
        .unwrap();

    let mut pks: Vec<_> = acme
        .items()
        .iter()
        .map(|i| i["pk"].as_s().unwrap().clone())
        .collect();
    pks.sort();
    assert_eq!(pks, ["a", "b"]);
    let ttl = ttl.time_to_live_description().unwrap();
    assert_eq!(ttl.attribute_name(), Some("expiresAt"));
}
