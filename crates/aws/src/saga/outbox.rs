//! The outbox: one item per event (key [`KEY`] = `eventId`), the record as the JSON of
//! [`OutboxRecord`] beside the attributes the conditions and the index read: [`DELIVERY`] (its
//! delivery state) and [`SINCE`] (when it entered that state). The index [`BY_DELIVERY`] (hash
//! `delivery`, range `since`) lets a sweeper find the records that stayed `persisted` too long
//! by one Query ([`DynamoOutbox::entered_between`]), never a Scan; and the published ones
//! still unanswered, to redeliver them.
//!
//! A record is persisted once ([`PERSIST_CONDITION`]) and moved forward only from the state it
//! was read in ([`ADVANCE_CONDITION`]). The record of `document.accepted` is persisted in the
//! transaction that promotes the result, each move in the transaction that settles the effect
//! it records; only a retraction's record is persisted alone ([`DynamoOutbox`]'s `persist`),
//! before it is published.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::Put;
use aws_sdk_dynamodb::Client;
use docket_core::ports::Outbox;
use docket_core::saga::{Advance, Delivery, EventId, OutboxRecord};
use docket_core::Error;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::put_item;
use crate::item::{get_item, query_all, req_str, s, Item};

/// The table's hash key.
pub const KEY: &str = "eventId";
/// The index of records by delivery state and the time they entered it.
pub const BY_DELIVERY: &str = "by-delivery";
/// The index's hash key: the record's delivery state (`persisted`, `provider-accepted`, ...).
pub const DELIVERY: &str = "delivery";
/// The index's range key: when the record entered its state (RFC 3339, UTC).
pub const SINCE: &str = "since";
/// The condition of a persist: the event has no record.
pub const PERSIST_CONDITION: &str = "attribute_not_exists(eventId)";
/// The condition of a move: the record is still in the state it was read in.
pub const ADVANCE_CONDITION: &str = "#delivery = :from";

/// The item of `record`, which entered its state at `since`.
pub fn item(record: &OutboxRecord, since: &str) -> Item {
    let json = serde_json::to_string(record).expect("outbox records serialize");
    HashMap::from([
        (KEY.into(), s(record.body.event_id.as_str())),
        ("runId".into(), s(record.body.run_id.as_str())),
        ("documentId".into(), s(record.body.document_id.as_str())),
        (DELIVERY.into(), s(record.delivery.name())),
        (SINCE.into(), s(since)),
        ("record".into(), s(json)),
    ])
}

/// The record of a stored item; one that cannot be read back is corrupt (`Fatal.Internal`).
pub fn from_item(item: &Item) -> Result<OutboxRecord, Error> {
    serde_json::from_str(req_str(item, "record")?)
        .map_err(|e| Error::Internal(format!("stored outbox record unreadable: {e}")))
}

/// Now, as the index's range key.
pub fn now() -> String {
    OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .expect("RFC 3339 formats any UTC time")
}

/// The conditional write of `record` in `table`: a persist (`from: None`) or a move from the
/// delivery state `from` it was read in.
pub fn put(table: &str, record: &OutboxRecord, from: Option<Delivery>) -> Put {
    let builder = Put::builder()
        .table_name(table)
        .set_item(Some(item(record, &now())));
    let builder = match from {
        None => builder.condition_expression(PERSIST_CONDITION),
        Some(from) => builder
            .condition_expression(ADVANCE_CONDITION)
            .expression_attribute_names("#delivery", DELIVERY)
            .expression_attribute_values(":from", s(from.name())),
    };
    builder.build().expect("complete put")
}

/// [`Outbox`] on DynamoDB.
#[derive(Debug, Clone)]
pub struct DynamoOutbox {
    client: Client,
    table: String,
}

impl DynamoOutbox {
    /// The outbox table `table` through `client`.
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoOutbox {
            client,
            table: table.into(),
        }
    }
}

impl Outbox for DynamoOutbox {
    async fn record(&self, event: &EventId) -> Result<Option<OutboxRecord>, Error> {
        let key = (KEY, event.as_str());
        let item = get_item(&self.client, &self.table, key, "dynamodb GetItem outbox");
        item.await?.as_ref().map(from_item).transpose()
    }

    async fn persist(&self, record: OutboxRecord) -> Result<OutboxRecord, Error> {
        let persisted = record.advanced(&Advance::Persist)?.unwrap_or(record);
        let p = put(&self.table, &persisted, None);
        // A lost answer: persisting again is the reconciliation (refused, it answers the stored
        // record if the first one landed).
        match put_item(&self.client, p, "dynamodb PutItem outbox").await? {
            Ok(()) => Ok(persisted),
            // The event has a record already: that one, unchanged (the event is one).
            Err(Some(item)) => from_item(&item),
            Err(None) => self
                .record(&persisted.body.event_id)
                .await?
                .ok_or_else(|| Error::Internal("outbox persist refused without a record".into())),
        }
    }

    /// One Query of [`BY_DELIVERY`] (`since` is RFC 3339, UTC; `BETWEEN` includes `before`,
    /// which the port allows), every page.
    async fn entered_between(
        &self,
        delivery: Delivery,
        after: OffsetDateTime,
        before: OffsetDateTime,
    ) -> Result<Vec<OutboxRecord>, Error> {
        let rfc3339 =
            |t: OffsetDateTime| t.format(&Rfc3339).expect("RFC 3339 formats any UTC time");
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(BY_DELIVERY)
            .key_condition_expression("#delivery = :delivery AND #since BETWEEN :after AND :before")
            .expression_attribute_names("#delivery", DELIVERY)
            .expression_attribute_names("#since", SINCE)
            .expression_attribute_values(":delivery", s(delivery.name()))
            .expression_attribute_values(":after", s(rfc3339(after)))
            .expression_attribute_values(":before", s(rfc3339(before)));
        let items = query_all(query, "dynamodb Query outbox by delivery").await?;
        items.iter().map(from_item).collect()
    }
}
