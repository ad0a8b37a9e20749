//! The book's items: keys, and records to items and back. Receipts and entries are stored as
//! their string fields (readable in the table); the dedup record as its JSON (`record`).

use aws_sdk_dynamodb::types::AttributeValue;
use docket_core::saga::sink::Dedup;
use docket_core::saga::EventId;
use docket_core::Error;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::item::{req_str, s, Item};

/// The partition keys.
pub(super) mod key {
    use std::fmt::Display;

    /// The dedup record of an event id.
    pub fn event(id: impl Display) -> String {
        format!("event#{id}")
    }
    /// A receipt.
    pub fn receipt(id: impl Display) -> String {
        format!("receipt#{id}")
    }
    /// The live entry of an invoice key.
    pub fn invoice(key: impl Display) -> String {
        format!("invoice#{key}")
    }
}

/// The item of `event`'s dedup record (an event's writes', or a fence).
pub(super) fn dedup_item(event: &EventId, dedup: &Dedup) -> Result<Item, Error> {
    let record = serde_json::to_string(dedup).map_err(|e| Error::Internal(e.to_string()))?;
    Ok(Item::from([
        ("pk".to_string(), s(key::event(event))),
        ("record".to_string(), s(record)),
    ]))
}

/// A dedup record read back.
pub(super) fn to_dedup(item: &Item) -> Result<Dedup, Error> {
    serde_json::from_str(req_str(item, "record")?)
        .map_err(|e| Error::Internal(format!("dedup record: {e}")))
}

/// A receipt's item.
pub(super) fn receipt_item(r: &docket_core::saga::Receipt) -> Result<Item, Error> {
    to_item(key::receipt(&r.receipt_id), r)
}

/// An invoice's live entry's item.
pub(super) fn entry_item(e: &docket_core::saga::sink::Entry) -> Result<Item, Error> {
    to_item(key::invoice(&e.invoice_key), e)
}

fn to_item(pk: String, record: &impl Serialize) -> Result<Item, Error> {
    let Value::Object(fields) =
        serde_json::to_value(record).map_err(|e| Error::Internal(e.to_string()))?
    else {
        return Err(Error::Internal("a record serializes to an object".into()));
    };
    let mut item = Item::from([("pk".to_string(), s(pk))]);
    for (name, value) in fields {
        let Value::String(text) = value else {
            return Err(Error::Internal(format!("field {name} is not a string")));
        };
        item.insert(name, s(text));
    }
    Ok(item)
}

/// A receipt or an entry read back from its string attributes.
pub(super) fn from_item<T: DeserializeOwned>(item: &Item) -> Result<T, Error> {
    let fields: Map<String, Value> = item
        .iter()
        .filter(|(name, _)| name.as_str() != "pk")
        .filter_map(|(name, v)| match v {
            AttributeValue::S(text) => Some((name.clone(), Value::String(text.clone()))),
            _ => None,
        })
        .collect();
    serde_json::from_value(Value::Object(fields))
        .map_err(|e| Error::Internal(format!("stored record: {e}")))
}
