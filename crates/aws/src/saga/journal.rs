//! The compensation journal: one item per run (key [`KEY`] = `runId`), the whole journal as the
//! JSON of [`Journal`] beside the plain attributes the conditions and the index read. Every
//! write is conditional on the version the writer read ([`put`]); the settlement of an effect
//! is written in the store's transaction with its audit entry, a claim alone by
//! [`DynamoJournal`]'s `put` (one `PutItem`).
//!
//! A journal with a compensation that failed for good carries [`OBLIGATION`] =
//! `failed-manual-review`, the hash key of the sparse index [`BY_OBLIGATION`]: the open
//! obligations are found by one Query, never a Scan, and a journal leaves the index when the
//! attribute does.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::Put;
use aws_sdk_dynamodb::Client;
use docket_core::ids::RunId;
use docket_core::ports::{SagaJournal, StaleJournal};
use docket_core::saga::{CompensationStatus, Journal};
use docket_core::Error;

use super::put_item;
use crate::item::{get_item, n, query_all, req_str, s, Item};

/// The table's hash key.
pub const KEY: &str = "runId";
/// The sparse index of journals with a failed compensation (hash [`OBLIGATION`], range [`KEY`]).
pub const BY_OBLIGATION: &str = "by-obligation";
/// The index's hash key: present only while a compensation is `failed-manual-review`.
pub const OBLIGATION: &str = "obligation";
/// The condition of a journal's first write (version 1).
pub const FIRST_CONDITION: &str = "attribute_not_exists(runId)";
/// The condition of every later write: the version the writer read.
pub const NEXT_CONDITION: &str = "version = :prev";

/// The item of `journal`.
pub fn item(journal: &Journal) -> Item {
    let json = serde_json::to_string(journal).expect("journals serialize");
    let mut item = HashMap::from([
        (KEY.into(), s(journal.run_id.as_str())),
        ("documentId".into(), s(journal.document_id.as_str())),
        ("version".into(), n(journal.version)),
        ("journal".into(), s(json)),
    ]);
    let failed = |e: &docket_core::saga::JournalEntry| {
        e.compensation == CompensationStatus::FailedManualReview
    };
    if journal.entries.iter().any(failed) {
        item.insert(
            OBLIGATION.into(),
            s(CompensationStatus::FailedManualReview.name()),
        );
    }
    item
}

/// The journal of a stored item; one that cannot be read back is corrupt (`Fatal.Internal`).
pub fn from_item(item: &Item) -> Result<Journal, Error> {
    serde_json::from_str(req_str(item, "journal")?)
        .map_err(|e| Error::Internal(format!("stored saga journal unreadable: {e}")))
}

/// The conditional write of `journal` in `table`: it lands only on the version it was derived
/// from (`journal.version - 1`; none for version 1).
pub fn put(table: &str, journal: &Journal) -> Put {
    let builder = Put::builder()
        .table_name(table)
        .set_item(Some(item(journal)));
    let builder = match journal.version {
        0 | 1 => builder.condition_expression(FIRST_CONDITION),
        v => builder
            .condition_expression(NEXT_CONDITION)
            .expression_attribute_values(":prev", n(v - 1)),
    };
    builder.build().expect("complete put")
}

/// [`SagaJournal`] on DynamoDB.
#[derive(Debug, Clone)]
pub struct DynamoJournal {
    client: Client,
    table: String,
}

impl DynamoJournal {
    /// The journal table `table` through `client`.
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoJournal {
            client,
            table: table.into(),
        }
    }
}

impl SagaJournal for DynamoJournal {
    async fn journal(&self, run: &RunId) -> Result<Option<Journal>, Error> {
        let key = (KEY, run.as_str());
        let item = get_item(
            &self.client,
            &self.table,
            key,
            "dynamodb GetItem saga journal",
        );
        item.await?.as_ref().map(from_item).transpose()
    }

    async fn put(&self, journal: &Journal) -> Result<Result<(), StaleJournal>, Error> {
        let p = put(&self.table, journal);
        match put_item(&self.client, p, "dynamodb PutItem saga journal").await? {
            Ok(()) => Ok(Ok(())),
            // The refusal carries the item that refused it: the version stored.
            Err(item) => {
                let stored = item.as_ref().map(from_item).transpose()?;
                Ok(Err(StaleJournal {
                    stored: stored.map_or(0, |j| j.version),
                }))
            }
        }
    }

    async fn failed(&self) -> Result<Vec<Journal>, Error> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(BY_OBLIGATION)
            .key_condition_expression("#obligation = :failed")
            .expression_attribute_names("#obligation", OBLIGATION)
            .expression_attribute_values(
                ":failed",
                s(CompensationStatus::FailedManualReview.name()),
            );
        let items = query_all(query, "dynamodb Query saga journal obligations").await?;
        items.iter().map(from_item).collect()
    }
}
