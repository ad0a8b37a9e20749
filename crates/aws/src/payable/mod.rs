//! The reference downstream consumer's book on DynamoDB (`AccountsPayableTable`, key `pk`):
//! one item per event id (`event#<id>`: the dedup record, the answer as JSON), per receipt
//! (`receipt#<id>`) and per invoice key (`invoice#<key>`: the live entry). The writes of one
//! event are one `TransactWriteItems`, each item conditional on being as it was read
//! (`docket_core::saga::sink::rules`); a failed condition is [`Raced`]: nothing was written.
//!
//! It is also the consumer as a compensation asks it ([`Downstream`], served by the
//! accounts-payable function's direct requests), with [`docket_core::saga::Book`]'s semantics:
//! `receipt_for` reads the event's dedup record; `fence` writes `Dedup::Fenced` unless the
//! event has a record (`attribute_not_exists(pk)`) and answers from the record read back (a
//! later delivery of a fenced event is refused, `Conflict.FencedOut`, by `rules::plan`); `void`
//! reads the receipt and its invoice's entry and commits `rules::void`'s writes with the same
//! conditions as an event's void, re-reading after a lost race or a lost answer.

mod items;

use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::types::{Delete, Put, TransactWriteItem, Update};
use aws_sdk_dynamodb::Client;
use docket_core::ports::{Downstream, PayableBook};
use docket_core::saga::sink::{rules, Dedup, FreeWrite, Raced, Reads, Seen, VoidWrite, Writes};
use docket_core::saga::{EventId, Receipt, ReceiptId, Voided};
use docket_core::steps::payable::MAX_PLANS;
use docket_core::Error;

use crate::errors::classify_effect;
use crate::item::{get_item, s, transact, Item};
use items::{dedup_item, entry_item, from_item, key, receipt_item, to_dedup};

/// The condition of every item written once: the dedup record, a receipt, a first entry, a
/// fence.
const ABSENT: &str = "attribute_not_exists(pk)";

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

    /// The dedup record of `event` (strongly consistent).
    async fn dedup(&self, event: &EventId) -> Result<Option<Dedup>, Error> {
        let item = self.get(key::event(event)).await?;
        item.as_ref().map(to_dedup).transpose()
    }

    /// Writes `event`'s fence unless the event has a dedup record: written and refused are both
    /// `Ok` (the record read back says which); a lost answer is `Ambiguous.OutcomeUnknown`.
    async fn put_fence(&self, event: &EventId) -> Result<(), Error> {
        let what = "dynamodb PutItem accounts payable fence";
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(dedup_item(event, &Dedup::Fenced)?))
            .condition_expression(ABSENT)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match e.as_service_error() {
                Some(PutItemError::ConditionalCheckFailedException(_)) => Ok(()),
                _ => Err(classify_effect(what, e)),
            },
        }
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
        let (event, dedup) = &writes.dedup;
        let mut items = vec![self.put(dedup_item(event, dedup)?, ABSENT)?];
        if let Some(r) = &writes.receipt {
            items.push(self.put(receipt_item(r)?, ABSENT)?);
        }
        if let Some(w) = &writes.entry {
            let item = entry_item(&w.entry)?;
            items.push(match &w.expected {
                None => self.put(item, ABSENT)?,
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
        items.extend(self.void_items(writes.void.as_ref(), writes.free.as_ref())?);
        Ok(items)
    }

    /// The items of a void and of the entry it frees, as an event's writes and a void request
    /// both commit them: the receipt only if it exists and is not voided, the entry only if the
    /// receipt still holds it.
    fn void_items(
        &self,
        void: Option<&VoidWrite>,
        free: Option<&FreeWrite>,
    ) -> Result<Vec<TransactWriteItem>, Error> {
        let mut items = Vec::new();
        if let Some((receipt, why)) = void {
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
        if let Some((invoice, receipt)) = free {
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

impl Downstream for DynamoPayable {
    async fn receipt_for(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        let dedup = self.dedup(event).await?;
        Ok(dedup.as_ref().and_then(Dedup::receipt_id).cloned())
    }

    /// A dedup record, once there, never changes: whoever wrote it, the record read back is the
    /// answer. A put whose answer was lost is reconciled by that read, and put again (it is
    /// conditional) only if the read finds nothing.
    async fn fence(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        for _ in 0..MAX_PLANS {
            match self.put_fence(event).await {
                Ok(()) | Err(Error::OutcomeUnknown(_)) => {}
                Err(e) => return Err(e),
            }
            if let Some(dedup) = self.dedup(event).await? {
                return Ok(dedup.receipt_id().cloned());
            }
        }
        Err(Error::Dependency(format!(
            "event {event}: the fence was not found after {MAX_PLANS} puts whose answers were lost"
        )))
    }

    /// A lost answer is reconciled like a lost race, by reading again: a void that landed then
    /// answers `AlreadyVoided` with its own reason.
    async fn void(&self, receipt: &ReceiptId, reason: &str) -> Result<Voided, Error> {
        let what = "dynamodb TransactWriteItems accounts payable void";
        for _ in 0..MAX_PLANS {
            let Some(item) = self.get(key::receipt(receipt)).await? else {
                return Err(Error::UnknownReceipt(format!(
                    "no receipt {receipt} to void"
                )));
            };
            let target: Receipt = from_item(&item)?;
            if let Some(why) = target.voided {
                return Ok(Voided::AlreadyVoided(why));
            }
            let live = self.get(key::invoice(&target.invoice_key)).await?;
            let live = live.as_ref().map(from_item).transpose()?;
            let (void, free) = rules::void(&target, live.as_ref(), reason);
            let items = self.void_items(void.as_ref(), free.as_ref())?;
            match transact(&self.client, items, what).await {
                Ok(Ok(())) => return Ok(Voided::Voided),
                Ok(Err(_)) | Err(Error::OutcomeUnknown(_)) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(Error::InProgress(format!(
            "receipt {receipt}: its items changed under {MAX_PLANS} voids in a row"
        )))
    }
}
