//! The consumer's rules per item, for an adapter that keeps its book in separate items (one per
//! event id, per receipt, per invoice key), as `ledger::decide_claim` is for the ledger: from the
//! items it read ([`Seen`]) to the conditional writes to make ([`Writes`]) and the answer to
//! send, or a refusal. The dedup record and the effect are written together; each write is
//! conditional on the item being as it was read, so a writer that lost a race re-reads and
//! plans again. [`super::Book`] applies the same rules in memory.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Receipt, ReceiptId};
use crate::ids::DocumentId;
use crate::saga::outbox::{EventBody, EventId, EventKind};
use crate::Error;

/// The live entry of one invoice key: the receipt that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The invoice key.
    pub invoice_key: String,
    /// The receipt holding it.
    pub receipt_id: ReceiptId,
    /// That receipt's document.
    pub document_id: DocumentId,
    /// That receipt's source order.
    pub source_order: String,
}

impl Entry {
    /// The entry `receipt` holds.
    pub fn of(receipt: &Receipt) -> Entry {
        Entry {
            invoice_key: receipt.invoice_key.clone(),
            receipt_id: receipt.receipt_id.clone(),
            document_id: receipt.document_id.clone(),
            source_order: receipt.source_order.clone(),
        }
    }
}

/// The consumer's answer to an event, published on the bus with source [`ANSWER_SOURCE`]. Ids
/// only. Answers are idempotent by event id: a redelivery answers what the first delivery did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "detailType", rename_all_fields = "camelCase")]
pub enum Answer {
    /// The accepted event is recorded (a newer version voided the older receipt).
    #[serde(rename = "document.recorded")]
    Recorded {
        /// The event answered.
        event_id: EventId,
        /// Its receipt.
        receipt_id: ReceiptId,
        /// The older version's receipt, voided by this one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        voided_receipt_id: Option<ReceiptId>,
    },
    /// The event was refused; nothing was written.
    #[serde(rename = "document.refused")]
    Refused {
        /// The event answered.
        event_id: EventId,
        /// The error's stable name (`Business.DuplicateInvoice`, `Conflict.StaleVersion`, …).
        error: String,
    },
    /// The retraction voided its receipt (or found it voided before: `already_voided`).
    #[serde(rename = "document.voided")]
    Voided {
        /// The event answered.
        event_id: EventId,
        /// The receipt voided.
        receipt_id: ReceiptId,
        /// It was voided before this retraction: a no-op.
        already_voided: bool,
    },
}

/// The `source` of the consumer's answers.
pub const ANSWER_SOURCE: &str = "docket.downstream";

impl Answer {
    /// The refusal of `event` with `error`.
    pub fn refused(event: &EventId, error: &Error) -> Answer {
        Answer::Refused {
            event_id: event.clone(),
            error: error.name().to_string(),
        }
    }

    /// The EventBridge `detail-type`.
    pub fn detail_type(&self) -> &'static str {
        match self {
            Answer::Recorded { .. } => "document.recorded",
            Answer::Refused { .. } => "document.refused",
            Answer::Voided { .. } => "document.voided",
        }
    }

    /// The event it answers.
    pub fn event_id(&self) -> &EventId {
        match self {
            Answer::Recorded { event_id, .. }
            | Answer::Refused { event_id, .. }
            | Answer::Voided { event_id, .. } => event_id,
        }
    }

    /// The EventBridge `detail`: the answer's fields without its detail type.
    pub fn detail(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("an answer serializes");
        if let Some(o) = v.as_object_mut() {
            o.remove("detailType");
        }
        v
    }
}

/// What the consumer remembers of an event id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum Dedup {
    /// Applied; every delivery of it is answered with this.
    Answered {
        /// The answer.
        answer: Answer,
    },
    /// A compensation fenced it before it was applied: it never will be.
    Fenced,
}

impl Dedup {
    /// The receipt of the event if it was applied (answered `document.recorded`); `None` for a
    /// refusal, a retraction's answer or a fence. How a consumer that keeps its book in items
    /// answers `receipt_for` and `fence` (as [`super::Book::receipt_for`] does).
    pub fn receipt_id(&self) -> Option<&ReceiptId> {
        match self {
            Dedup::Answered {
                answer: Answer::Recorded { receipt_id, .. },
            } => Some(receipt_id),
            _ => None,
        }
    }
}

/// The items an event's rules read, by the keys [`Reads::of`] names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// The dedup record of the event id.
    pub dedup: Option<Dedup>,
    /// The live entry of the event's invoice key.
    pub live: Option<Entry>,
    /// For a retraction, the receipt it voids.
    pub target: Option<Receipt>,
}

/// The keys of the items an event's rules read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reads {
    /// The dedup record's event id.
    pub event_id: EventId,
    /// The invoice key whose live entry is read.
    pub invoice_key: String,
    /// For a retraction: the receipt it voids, the receipt of the event it retracts (a receipt
    /// id is a function of the event id it answers).
    pub target: Option<ReceiptId>,
}

impl Reads {
    /// What `event` needs read; a retraction that names no event is `Fatal.BadInput`.
    pub fn of(event: &EventBody) -> Result<Reads, Error> {
        let target = match event.kind {
            EventKind::Accepted => None,
            EventKind::Retracted => {
                Some(ReceiptId::for_event(event.retracts.as_ref().ok_or_else(
                    || Error::BadInput(format!("retraction {} names no event", event.event_id)),
                )?))
            }
        };
        Ok(Reads {
            event_id: event.event_id.clone(),
            invoice_key: event.invoice_key.clone(),
            target,
        })
    }
}

/// A write of an invoice's live entry, conditional on who held it when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryWrite {
    /// The entry to write.
    pub entry: Entry,
    /// The receipt that held it when read (`None`: it had no entry).
    pub expected: Option<ReceiptId>,
}

/// A receipt to void, and why.
pub type VoidWrite = (ReceiptId, String);

/// An invoice's entry to remove: (invoice key, the receipt holding it).
pub type FreeWrite = (String, ReceiptId);

/// The conditional writes of one event, all in one transaction. Each condition is that the
/// item is as it was read; one failed condition writes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writes {
    /// The dedup record (written only if the event id has none).
    pub dedup: (EventId, Dedup),
    /// A new receipt (only if it does not exist).
    pub receipt: Option<Receipt>,
    /// The invoice's live entry (only if held by `expected`).
    pub entry: Option<EntryWrite>,
    /// A receipt to void, with the reason (only if it is not voided).
    pub void: Option<VoidWrite>,
    /// An entry to remove: (invoice key, the receipt holding it) (only if it still does).
    pub free: Option<FreeWrite>,
}

impl Writes {
    /// The answer to send once these are committed.
    pub fn answer(&self) -> Answer {
        match &self.dedup.1 {
            Dedup::Answered { answer } => answer.clone(),
            Dedup::Fenced => unreachable!("a plan never writes a fence"),
        }
    }
}

/// What to do with an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// It was answered before: send the same answer again, write nothing.
    Repeat(Answer),
    /// Refused: write nothing, answer [`Answer::refused`].
    Refuse(Error),
    /// Commit these, then answer [`Writes::answer`].
    Write(Box<Writes>),
}

/// The plan for `event` given what was read of its items (see the module docs of
/// [`super`] for the rules).
pub fn plan(event: &EventBody, seen: &Seen) -> Plan {
    match &seen.dedup {
        Some(Dedup::Answered { answer }) => return Plan::Repeat(answer.clone()),
        Some(Dedup::Fenced) => {
            return Plan::Refuse(Error::FencedOut(format!(
                "event {} was fenced by a compensation before it was applied",
                event.event_id
            )))
        }
        None => {}
    }
    match event.kind {
        EventKind::Accepted => accept(event, seen.live.as_ref()),
        EventKind::Retracted => match &seen.target {
            None => Plan::Refuse(unknown_receipt(event)),
            Some(target) => {
                let reason = format!("retracted by {}", event.event_id);
                let (void, free) = void(target, seen.live.as_ref(), &reason);
                let answer = Answer::Voided {
                    event_id: event.event_id.clone(),
                    receipt_id: target.receipt_id.clone(),
                    already_voided: void.is_none(),
                };
                Plan::Write(Box::new(Writes {
                    dedup: (event.event_id.clone(), Dedup::Answered { answer }),
                    receipt: None,
                    entry: None,
                    void,
                    free,
                }))
            }
        },
    }
}

fn unknown_receipt(event: &EventBody) -> Error {
    let receipt = event.retracts.as_ref().map(ReceiptId::for_event);
    Error::UnknownReceipt(format!(
        "retraction {}: no receipt {} to void",
        event.event_id,
        receipt.map(|r| r.to_string()).unwrap_or_default()
    ))
}

fn accept(event: &EventBody, live: Option<&Entry>) -> Plan {
    let receipt_id = ReceiptId::for_event(&event.event_id);
    let mut voided = None;
    if let Some(live) = live {
        if live.document_id != event.document_id {
            return Plan::Refuse(Error::DuplicateInvoice(format!(
                "invoice {} is recorded for document {} (receipt {}); document {} repeats it",
                event.invoice_key, live.document_id, live.receipt_id, event.document_id
            )));
        }
        if live.source_order >= event.source_order {
            return Plan::Refuse(Error::StaleVersion(format!(
                "document {}: receipt {} holds source order {}, the event has {}",
                event.document_id, live.receipt_id, live.source_order, event.source_order
            )));
        }
        voided = Some(live.receipt_id.clone());
    }
    let receipt = Receipt {
        receipt_id: receipt_id.clone(),
        event_id: event.event_id.clone(),
        document_id: event.document_id.clone(),
        run_id: event.run_id.clone(),
        invoice_key: event.invoice_key.clone(),
        source_order: event.source_order.clone(),
        voided: None,
    };
    let answer = Answer::Recorded {
        event_id: event.event_id.clone(),
        receipt_id: receipt_id.clone(),
        voided_receipt_id: voided.clone(),
    };
    Plan::Write(Box::new(Writes {
        dedup: (event.event_id.clone(), Dedup::Answered { answer }),
        entry: Some(EntryWrite {
            entry: Entry::of(&receipt),
            expected: live.map(|l| l.receipt_id.clone()),
        }),
        void: voided.map(|v| (v, format!("amended by {receipt_id}"))),
        receipt: Some(receipt),
        free: None,
    }))
}

/// The writes that void `target` (none if it is voided already) and free its invoice's entry
/// if `live` shows it holds it.
pub fn void(
    target: &Receipt,
    live: Option<&Entry>,
    reason: &str,
) -> (Option<VoidWrite>, Option<FreeWrite>) {
    if target.voided.is_some() {
        return (None, None);
    }
    let free = live
        .filter(|l| l.receipt_id == target.receipt_id)
        .map(|l| (l.invoice_key.clone(), l.receipt_id.clone()));
    (Some((target.receipt_id.clone(), reason.to_string())), free)
}

/// A commit lost a race: an item was not as it was read. Nothing was written; read again and
/// plan again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raced;
