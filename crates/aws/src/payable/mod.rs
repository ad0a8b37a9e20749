//! The reference downstream consumer's book on DynamoDB (`AccountsPayableTable`, key `pk`):
//! one item per event id (`event#<id>`: the dedup record, the answer as JSON), per receipt
//! (`receipt#<id>`) and per invoice key (`invoice#<key>`: the live entry). The writes of one
//! event are one `TransactWriteItems`, each item conditional on being as it was read
//! (`docket_core::saga::sink::rules`); a failed condition is [`Raced`]: nothing was written.

mod items;

use aws_sdk_dynamodb::types::{Delete, Put, TransactWriteItem, Update};
use aws_sdk_dynamodb::Client;
use docket_core::ports::PayableBook;
use docket_core::saga::sink::{Raced, Reads, Seen, Writes};
use docket_core::Error;

use crate::item::{get_item, s, transact, Item};
use items::{dedup_item, entry_item, from_item, key, receipt_item, to_dedup};

/// The book on `table`.
#[derive(Debug, Clone)]
pub struct DynamoPayable {
    client: Client,
    table: String,
}

impl DynamoPayable {
    /// The book on `table`, with `faults` injected (tests and local runs only).
    pub fn with_faults(
        config: &aws_config::SdkConfig,
        table: impl Into<String>,
        faults: &crate::Faults,
    ) -> Self {
        DynamoPayable {
            client: crate::dynamodb_client(config, faults),
            table: table.into(),
        }
    }

    async fn get(&self, pk: String) -> Result<Option<Item>, Error> {
        let what = "dynamodb GetItem accounts payable";
        get_item(&self.client, &self.table, ("pk", &pk), what).await
    }

    fn put(&self, item: Item, condition: &str) -> Result<TransactWriteItem, Error> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression(condition)
            .build()
            .map_err(|e| Error::Internal(e.to_string()))?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    fn items(&self, writes: &Writes) -> Result<Vec<TransactWriteItem>, Error> {
        let mut items = vec![self.put(dedup_item(writes)?, "attribute_not_exists(pk)")?];
        if let Some(r) = &writes.receipt {
            items.push(self.put(receipt_item(r)?, "attribute_not_exists(pk)")?);
        }
        if let Some(w) = &writes.entry {
            let item = entry_item(&w.entry)?;
            items.push(match &w.expected {
                None => self.put(item, "attribute_not_exists(pk)")?,
                Some(held) => {
                    let put = Put::builder()
                        .table_name(&self.table)
                        .set_item(Some(item))
                        .condition_expression("receiptId = :held")
                        .expression_attribute_values(":held", s(held.to_string()))
                        .build()
                        .map_err(|e| Error::Internal(e.to_string()))?;
                    TransactWriteItem::builder().put(put).build()
                }
            });
        }
        if let Some((receipt, why)) = &writes.void {
            let update = Update::builder()
                .table_name(&self.table)
                .key("pk", s(key::receipt(receipt)))
                .update_expression("SET voided = :why")
                .condition_expression("attribute_exists(pk) AND attribute_not_exists(voided)")
                .expression_attribute_values(":why", s(why.as_str()))
                .build()
                .map_err(|e| Error::Internal(e.to_string()))?;
            items.push(TransactWriteItem::builder().update(update).build());
        }
        if let Some((invoice, receipt)) = &writes.free {
            let delete = Delete::builder()
                .table_name(&self.table)
                .key("pk", s(key::invoice(invoice)))
                .condition_expression("receiptId = :held")
                .expression_attribute_values(":held", s(receipt.to_string()))
                .build()
                .map_err(|e| Error::Internal(e.to_string()))?;
            items.push(TransactWriteItem::builder().delete(delete).build());
        }
        Ok(items)
    }
}

impl PayableBook for DynamoPayable {
    async fn seen(&self, reads: &Reads) -> Result<Seen, Error> {
        let dedup = self.get(key::event(&reads.event_id)).await?;
        let live = self.get(key::invoice(&reads.invoice_key)).await?;
        let target = match &reads.target {
            Some(r) => self.get(key::receipt(r)).await?,
            None => None,
        };
        Ok(Seen {
            dedup: dedup.as_ref().map(to_dedup).transpose()?,
            live: live.as_ref().map(from_item).transpose()?,
            target: target.as_ref().map(from_item).transpose()?,
        })
    }

    async fn commit(&self, writes: &Writes) -> Result<Result<(), Raced>, Error> {
        // A lost answer may hide a commit: the redelivery reads the dedup record and answers it.
        let what = "dynamodb TransactWriteItems accounts payable";
        let committed = transact(&self.client, self.items(writes)?, what).await?;
        Ok(committed.map_err(|_| Raced))
    }
}
