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
//! The adapter applies these rules ([`rules`]: per item, from what it read to the conditional
//! writes) with the dedup record and the effect in one transaction.

pub mod rules;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::outbox::{EventBody, EventId, EventKind};
use crate::ids::{sha256_hex, DocumentId, RunId};
use crate::Error;
pub use rules::{
    Answer, Dedup, Entry, EntryWrite, FreeWrite, Plan, Raced, Reads, Seen, VoidWrite, Writes,
};

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

/// The consumer's book in memory: receipts by id, what was answered per event id, the live
/// entry per invoice key. It applies the per-item rules of [`rules`] (so the in-memory consumer
/// and the DynamoDB one cannot disagree) and checks their write conditions as DynamoDB does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Book {
    receipts: BTreeMap<ReceiptId, Receipt>,
    dedup: BTreeMap<EventId, Dedup>,
    entries: BTreeMap<String, Entry>,
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
        match rules::plan(event, &self.seen(event)?) {
            Plan::Repeat(Answer::Recorded { receipt_id, .. }) => Ok(Applied::Again(receipt_id)),
            Plan::Repeat(other) => Err(Error::Internal(format!(
                "event {} was answered {}",
                event.event_id,
                other.detail_type()
            ))),
            Plan::Refuse(e) => Err(e),
            Plan::Write(writes) => {
                self.commit(&writes)
                    .map_err(|Raced| Error::Internal("the book changed under a lock".into()))?;
                match writes.answer() {
                    Answer::Recorded {
                        receipt_id,
                        voided_receipt_id,
                        ..
                    } => Ok(match voided_receipt_id {
                        Some(voided) => Applied::Amended {
                            receipt: receipt_id,
                            voided,
                        },
                        None => Applied::Recorded(receipt_id),
                    }),
                    other => Err(Error::Internal(format!(
                        "an accepted event planned {}",
                        other.detail_type()
                    ))),
                }
            }
        }
    }

    /// The items `event`'s rules read ([`Reads::of`]).
    pub fn seen(&self, event: &EventBody) -> Result<Seen, Error> {
        Ok(self.seen_by(&Reads::of(event)?))
    }

    /// The items `reads` names.
    pub fn seen_by(&self, reads: &Reads) -> Seen {
        Seen {
            dedup: self.dedup.get(&reads.event_id).cloned(),
            live: self.entries.get(&reads.invoice_key).cloned(),
            target: reads
                .target
                .as_ref()
                .and_then(|t| self.receipts.get(t).cloned()),
        }
    }

    /// Commits `writes` if every condition holds (as one DynamoDB transaction would), else
    /// writes nothing.
    pub fn commit(&mut self, writes: &Writes) -> Result<(), Raced> {
        let holder = |key: &str| self.entries.get(key).map(|e| &e.receipt_id);
        let ok = !self.dedup.contains_key(&writes.dedup.0)
            && writes
                .receipt
                .as_ref()
                .is_none_or(|r| !self.receipts.contains_key(&r.receipt_id))
            && writes
                .entry
                .as_ref()
                .is_none_or(|w| holder(&w.entry.invoice_key) == w.expected.as_ref())
            && writes
                .void
                .as_ref()
                .is_none_or(|(r, _)| self.receipts.get(r).is_some_and(|r| r.voided.is_none()))
            && writes
                .free
                .as_ref()
                .is_none_or(|(key, r)| holder(key) == Some(r));
        if !ok {
            return Err(Raced);
        }
        self.dedup
            .insert(writes.dedup.0.clone(), writes.dedup.1.clone());
        if let Some(r) = &writes.receipt {
            self.receipts.insert(r.receipt_id.clone(), r.clone());
        }
        self.set_void(writes.void.as_ref(), writes.free.as_ref());
        if let Some(w) = &writes.entry {
            self.entries
                .insert(w.entry.invoice_key.clone(), w.entry.clone());
        }
        Ok(())
    }

    fn set_void(&mut self, void: Option<&VoidWrite>, free: Option<&FreeWrite>) {
        if let Some((r, why)) = void {
            if let Some(r) = self.receipts.get_mut(r) {
                r.voided = Some(why.clone());
            }
        }
        if let Some((key, _)) = free {
            self.entries.remove(key);
        }
    }

    /// Voids `receipt` with `reason`; the invoice's entry is freed if it was this receipt. A
    /// receipt the book does not have is `Conflict.UnknownReceipt`.
    pub fn void(&mut self, receipt: &ReceiptId, reason: &str) -> Result<Voided, Error> {
        let target = self
            .receipts
            .get(receipt)
            .ok_or_else(|| Error::UnknownReceipt(format!("no receipt {receipt} to void")))?;
        if let Some(why) = &target.voided {
            return Ok(Voided::AlreadyVoided(why.clone()));
        }
        let (void, free) = rules::void(target, self.entries.get(&target.invoice_key), reason);
        self.set_void(void.as_ref(), free.as_ref());
        Ok(Voided::Voided)
    }

    /// The receipt applied for `event`, if any (how an uncertain delivery is reconciled).
    pub fn receipt_for(&self, event: &EventId) -> Option<&Receipt> {
        match self.dedup.get(event)? {
            Dedup::Answered {
                answer: Answer::Recorded { receipt_id, .. },
            } => self.receipts.get(receipt_id),
            _ => None,
        }
    }

    /// The receipt applied for `event`; if there is none, `event` is fenced: a later delivery
    /// of it is refused (`Conflict.FencedOut`). How a compensation reconciles an uncertain
    /// delivery without racing one still in flight.
    pub fn fence(&mut self, event: &EventId) -> Option<&Receipt> {
        self.dedup.entry(event.clone()).or_insert(Dedup::Fenced);
        self.receipt_for(event)
    }

    /// A receipt by id.
    pub fn receipt(&self, receipt: &ReceiptId) -> Option<&Receipt> {
        self.receipts.get(receipt)
    }
}
