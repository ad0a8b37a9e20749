//! The reference downstream consumer ("accounts payable"): its rules, pure. It applies each
//! `document.accepted` event once (a redelivery of the same event id answers the first receipt
//! and changes nothing), keeps one entry per invoice (tenant, issuer, invoice number): a second
//! invoice with the same key under another document is refused as `Business.DuplicateInvoice`,
//! while a newer version of the *same* document amends the entry (the older receipt voided, the
//! newer recorded). A void names its receipt; a second void is a no-op that says so. A saga
//! that compensates asks for an event's receipt with [`Book::fence`]: if the event was not
//! applied, it never will be (a delivery still in flight is refused), so the answer "not
//! applied" stays true.
//!
//! The adapter applies these rules with the dedup record and the effect in one transaction.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::outbox::{EventBody, EventId, EventKind};
use crate::ids::{sha256_hex, DocumentId, RunId};
use crate::Error;

/// A consumer's receipt id: `rc-<32 hex>`, derived from the event id it answers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ReceiptId(String);

impl ReceiptId {
    /// The receipt of `event` (the same for every delivery of it).
    pub fn for_event(event: &EventId) -> ReceiptId {
        ReceiptId(format!(
            "rc-{}",
            &sha256_hex(format!("receipt\n{event}").as_bytes())[..32]
        ))
    }

    /// A receipt id read back from a request.
    pub fn from_string(s: String) -> ReceiptId {
        ReceiptId(s)
    }
}

impl fmt::Display for ReceiptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One recorded receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// Its id.
    pub receipt_id: ReceiptId,
    /// The event it answers.
    pub event_id: EventId,
    /// The document.
    pub document_id: DocumentId,
    /// The run.
    pub run_id: RunId,
    /// The invoice key.
    pub invoice_key: String,
    /// The run's source order.
    pub source_order: String,
    /// Why it was voided (a void request, or amended by a newer version's receipt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voided: Option<String>,
}

/// What applying an event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// The invoice was recorded.
    Recorded(ReceiptId),
    /// A newer version of the same document: `voided` was voided, the new receipt recorded.
    Amended {
        /// The new receipt.
        receipt: ReceiptId,
        /// The older version's receipt, now voided.
        voided: ReceiptId,
    },
    /// This event was applied before: its first receipt, nothing changed.
    Again(ReceiptId),
}

impl Applied {
    /// The receipt the consumer answers with.
    pub fn receipt(&self) -> &ReceiptId {
        match self {
            Applied::Recorded(r) | Applied::Again(r) | Applied::Amended { receipt: r, .. } => r,
        }
    }
}

/// What a void did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Voided {
    /// The receipt is voided now.
    Voided,
    /// It was voided before (with this reason): nothing changed.
    AlreadyVoided(String),
}

/// The consumer's book: receipts by id, the one applied per event id, the live entry per
/// invoice key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Book {
    receipts: BTreeMap<ReceiptId, Receipt>,
    applied: BTreeMap<EventId, ReceiptId>,
    entries: BTreeMap<String, ReceiptId>,
    fenced: std::collections::BTreeSet<EventId>,
}

impl Book {
    /// Applies an accepted event; see the module docs. A retraction is not applied here (the
    /// saga voids by receipt id); giving one is `Fatal.BadInput`.
    pub fn apply(&mut self, event: &EventBody) -> Result<Applied, Error> {
        if event.kind != EventKind::Accepted {
            return Err(Error::BadInput(format!(
                "the consumer applies {} events, not {}",
                EventKind::Accepted.name(),
                event.kind.name()
            )));
        }
        if let Some(first) = self.applied.get(&event.event_id) {
            return Ok(Applied::Again(first.clone()));
        }
        if self.fenced.contains(&event.event_id) {
            return Err(Error::FencedOut(format!(
                "event {} was fenced by a compensation before it was applied",
                event.event_id
            )));
        }
        let receipt_id = ReceiptId::for_event(&event.event_id);
        let mut voided = None;
        if let Some(live) = self.entries.get(&event.invoice_key) {
            let live = &self.receipts[live];
            if live.document_id != event.document_id {
                return Err(Error::DuplicateInvoice(format!(
                    "invoice {} is recorded for document {} (receipt {}); document {} repeats it",
                    event.invoice_key, live.document_id, live.receipt_id, event.document_id
                )));
            }
            if live.source_order >= event.source_order {
                return Err(Error::StaleVersion(format!(
                    "document {}: receipt {} holds source order {}, the event has {}",
                    event.document_id, live.receipt_id, live.source_order, event.source_order
                )));
            }
            voided = Some(live.receipt_id.clone());
        }
        if let Some(old) = &voided {
            let old = self
                .receipts
                .get_mut(old)
                .expect("a live entry has a receipt");
            old.voided = Some(format!("amended by {receipt_id}"));
        }
        self.receipts.insert(
            receipt_id.clone(),
            Receipt {
                receipt_id: receipt_id.clone(),
                event_id: event.event_id.clone(),
                document_id: event.document_id.clone(),
                run_id: event.run_id.clone(),
                invoice_key: event.invoice_key.clone(),
                source_order: event.source_order.clone(),
                voided: None,
            },
        );
        self.applied
            .insert(event.event_id.clone(), receipt_id.clone());
        self.entries
            .insert(event.invoice_key.clone(), receipt_id.clone());
        Ok(match voided {
            Some(voided) => Applied::Amended {
                receipt: receipt_id,
                voided,
            },
            None => Applied::Recorded(receipt_id),
        })
    }

    /// Voids `receipt` with `reason`; the invoice's entry is freed if it was this receipt. A
    /// receipt the book does not have is `Conflict.UnknownReceipt`.
    pub fn void(&mut self, receipt: &ReceiptId, reason: &str) -> Result<Voided, Error> {
        let rec = self
            .receipts
            .get_mut(receipt)
            .ok_or_else(|| Error::UnknownReceipt(format!("no receipt {receipt} to void")))?;
        if let Some(why) = &rec.voided {
            return Ok(Voided::AlreadyVoided(why.clone()));
        }
        rec.voided = Some(reason.to_string());
        if self.entries.get(&rec.invoice_key) == Some(receipt) {
            self.entries.remove(&rec.invoice_key);
        }
        Ok(Voided::Voided)
    }

    /// The receipt applied for `event`, if any (how an uncertain delivery is reconciled).
    pub fn receipt_for(&self, event: &EventId) -> Option<&Receipt> {
        self.applied.get(event).map(|r| &self.receipts[r])
    }

    /// The receipt applied for `event`; if there is none, `event` is fenced: a later delivery
    /// of it is refused (`Conflict.FencedOut`). How a compensation reconciles an uncertain
    /// delivery without racing one still in flight.
    pub fn fence(&mut self, event: &EventId) -> Option<&Receipt> {
        if !self.applied.contains_key(event) {
            self.fenced.insert(event.clone());
        }
        self.receipt_for(event)
    }

    /// A receipt by id.
    pub fn receipt(&self, receipt: &ReceiptId) -> Option<&Receipt> {
        self.receipts.get(receipt)
    }
}
