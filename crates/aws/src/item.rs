//! Reading and writing DynamoDB item attributes, shared by the adapters. A stored item that
//! lacks an attribute the adapter wrote is a corrupt record: `Fatal.Internal`, never a default.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use docket_core::Error;

/// A DynamoDB item.
pub(crate) type Item = HashMap<String, AttributeValue>;

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
