//! Reading and writing DynamoDB item attributes, shared by the adapters. A stored item that
//! lacks an attribute the adapter wrote is a corrupt record: `Fatal.Internal`, never a default.

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
};
use docket_core::Error;

use crate::errors::{classify, classify_effect};

/// A DynamoDB item.
pub(crate) type Item = HashMap<String, AttributeValue>;

/// Sets `values` (attribute, string) on the item with `key` and a fresh TTL (`expires_attr`,
/// `keep_seconds` from now) in one `UpdateItem`, and returns the item as it now stands
/// (`ALL_NEW`): the shape of a wait whose two sides write in either order, each finding what
/// the other wrote before (`saga::waits`, `ocr_waits`).
pub(crate) async fn set_and_read(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    key: (&str, &str),
    values: &[(&str, String)],
    (expires_attr, keep_seconds): (&str, i64),
    what: &str,
) -> Result<Item, Error> {
    let expires = time::OffsetDateTime::now_utc().unix_timestamp() + keep_seconds;
    let sets: Vec<String> = (0..values.len())
        .map(|i| format!("#a{i} = :v{i}"))
        .collect();
    let mut update = client
        .update_item()
        .table_name(table)
        .key(key.0, s(key.1))
        .update_expression(format!("SET {}, #expires = :expires", sets.join(", ")))
        .expression_attribute_names("#expires", expires_attr)
        .expression_attribute_values(":expires", n(expires))
        .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew);
    for (i, (attribute, value)) in values.iter().enumerate() {
        update = update
            .expression_attribute_names(format!("#a{i}"), *attribute)
            .expression_attribute_values(format!(":v{i}"), s(value.clone()));
    }
    let out = update.send().await.map_err(|e| classify(what, e))?;
    Ok(out.attributes.unwrap_or_default())
}

/// Every item a Scan returns, from all its pages (`what` names the read in errors).
pub(crate) async fn scan_all(scan: ScanFluentBuilder, what: &str) -> Result<Vec<Item>, Error> {
    let pages = scan.into_paginator().items().send();
    pages.try_collect().await.map_err(|e| classify(what, e))
}

/// Every item a Query returns, from all its pages (`what` names the read in errors).
pub(crate) async fn query_all(query: QueryFluentBuilder, what: &str) -> Result<Vec<Item>, Error> {
    let pages = query.into_paginator().items().send();
    pages.try_collect().await.map_err(|e| classify(what, e))
}

/// Sends `put` as one `PutItem`: `Ok(Ok(()))` written, `Ok(Err(item))` refused by its
/// condition, with the item that refused it (`ReturnValuesOnConditionCheckFailure`). A lost
/// answer may hide a landed write: `Ambiguous.OutcomeUnknown`, and the caller reads back.
pub(crate) async fn put_item(
    client: &aws_sdk_dynamodb::Client,
    put: Put,
    what: &str,
) -> Result<Result<(), Option<Item>>, Error> {
    let result = client
        .put_item()
        .table_name(put.table_name())
        .set_item(Some(put.item().clone()))
        .set_condition_expression(put.condition_expression().map(str::to_string))
        .set_expression_attribute_names(put.expression_attribute_names().cloned())
        .set_expression_attribute_values(put.expression_attribute_values().cloned())
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .send()
        .await;
    match result {
        Ok(_) => Ok(Ok(())),
        Err(err) => match err.as_service_error() {
            Some(PutItemError::ConditionalCheckFailedException(e)) => Ok(Err(e.item().cloned())),
            _ => Err(classify_effect(what, err)),
        },
    }
}

/// The item of `table` whose hash key `key` is `value`, strongly consistent (`what` names the
/// read in errors).
pub(crate) async fn get_item(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    (key, value): (&str, &str),
    what: &str,
) -> Result<Option<Item>, Error> {
    let out = client
        .get_item()
        .table_name(table)
        .key(key, s(value))
        .consistent_read(true)
        .send()
        .await
        .map_err(|e| classify(what, e))?;
    Ok(out.item().cloned())
}

/// Sends `items` as one `TransactWriteItems` (`what` names it in errors): `Err(i)` when it was
/// cancelled because the condition of item `i` failed (nothing was written). Another
/// cancellation is `Transient.Dependency`; a lost answer, which may hide a commit, is
/// `Ambiguous.OutcomeUnknown` for the caller to reconcile.
pub(crate) async fn transact(
    client: &aws_sdk_dynamodb::Client,
    items: Vec<TransactWriteItem>,
    what: &str,
) -> Result<Result<(), usize>, Error> {
    let err = match client
        .transact_write_items()
        .set_transact_items(Some(items))
        .send()
        .await
    {
        Ok(_) => return Ok(Ok(())),
        Err(e) => e,
    };
    if let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) =
        err.as_service_error()
    {
        let reasons = cancelled.cancellation_reasons();
        if let Some(item) = reasons
            .iter()
            .position(|r| r.code() == Some("ConditionalCheckFailed"))
        {
            return Ok(Err(item));
        }
        let codes: Vec<_> = reasons.iter().filter_map(|r| r.code()).collect();
        return Err(Error::Dependency(format!("{what} cancelled: {codes:?}")));
    }
    Err(classify_effect(what, err))
}

/// A string attribute value.
pub(crate) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

/// A number attribute value.
pub(crate) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// The string attribute `name`, if the item has one.
pub(crate) fn opt_str<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
}

/// The string attribute `name`, which the item must have.
pub(crate) fn req_str<'a>(item: &'a Item, name: &str) -> Result<&'a str, Error> {
    opt_str(item, name)
        .ok_or_else(|| Error::Internal(format!("stored item lacks string attribute {name}")))
}
