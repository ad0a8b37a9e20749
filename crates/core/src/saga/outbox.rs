//! The transactional outbox: the event a state change announces is recorded with that change
//! (one transaction in the adapter) and published afterwards by a relay, always under the same
//! event id, so a relay that publishes twice is applied once by a consumer that dedups by it.
//!
//! Delivery moves forward only: `prepared` (built) → `persisted` (written with the state change)
//! → `provider-accepted` (PutEvents answered with an entry id) → `confirmed-delivered` (only with
//! the consumer's receipt id). The body carries ids and pointers, never document content.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::sink::ReceiptId;
use crate::ids::{sha256_hex, DocumentId, RunId, Tenant};
use crate::model::run::ObjectRef;
use crate::Error;

/// An outbox event's id: `ev-<32 hex>`, a pure function of (run, kind).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EventId(String);

impl EventId {
    /// The `kind` event of `run`: the same every time it is built, so a republication (a relay
    /// that crashed after PutEvents) carries the id the consumer already saw.
    pub fn new(run: &RunId, kind: EventKind) -> EventId {
        let h = sha256_hex(format!("event\n{run}\n{}", kind.name()).as_bytes());
        EventId(format!("ev-{}", &h[..32]))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The `source` of every event route's saga publishes on the stack's bus (the consumer's rule
/// matches it).
pub const EVENT_SOURCE: &str = "docket.route";

/// What an event announces (its EventBridge `detail-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    /// A run's result was accepted and is the document's current one.
    #[serde(rename = "document.accepted")]
    Accepted,
    /// An accepted result was taken back (compensation or an operator's retract).
    #[serde(rename = "document.retracted")]
    Retracted,
}

impl EventKind {
    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Accepted => "document.accepted",
            EventKind::Retracted => "document.retracted",
        }
    }
}

/// The event as published: ids and pointers only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventBody {
    /// The stable event id (the consumer's dedup key).
    pub event_id: EventId,
    /// What it announces.
    pub kind: EventKind,
    /// The tenant.
    pub tenant: Tenant,
    /// The document.
    pub document_id: DocumentId,
    /// The run whose result it is about.
    pub run_id: RunId,
    /// The run's source order (a consumer keeps the newer version of a document).
    pub source_order: String,
    /// Where the result is (`s3://…`).
    pub result: String,
    /// The result's SHA-256.
    pub result_sha256: String,
    /// The invoice's key: a hash of its issuer and number ([`invoice_key`]), never the values.
    pub invoice_key: String,
    /// For a retraction, the event it takes back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retracts: Option<EventId>,
}

/// The key under which a consumer knows one invoice of `tenant`: a hash of the issuer and the
/// invoice number (trimmed, case-folded), so the event names the invoice without carrying it.
pub fn invoice_key(tenant: &Tenant, issuer: &str, number: &str) -> String {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let h = sha256_hex(format!("invoice\n{tenant}\n{}\n{}", norm(issuer), norm(number)).as_bytes());
    format!("ik-{}", &h[..32])
}

impl EventBody {
    /// The `document.accepted` event of a run whose result is `result` (hash `result_sha256`).
    pub fn accepted(
        run: &crate::model::run::RunInput,
        result: &ObjectRef,
        result_sha256: &str,
        invoice_key: String,
    ) -> EventBody {
        EventBody {
            event_id: EventId::new(&run.run_id, EventKind::Accepted),
            kind: EventKind::Accepted,
            tenant: run.tenant.clone(),
            document_id: run.document_id.clone(),
            run_id: run.run_id.clone(),
            source_order: run.source_order.clone(),
            result: result.to_string(),
            result_sha256: result_sha256.to_string(),
            invoice_key,
            retracts: None,
        }
    }

    /// The `document.retracted` event that takes this one back (its own stable id).
    pub fn retraction(&self) -> EventBody {
        EventBody {
            event_id: EventId::new(&self.run_id, EventKind::Retracted),
            kind: EventKind::Retracted,
            retracts: Some(self.event_id.clone()),
            ..self.clone()
        }
    }
}

/// How far an outbox event got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// Built, not yet written.
    Prepared,
    /// Written together with the state change it announces.
    Persisted,
    /// PutEvents accepted it (its entry id is recorded).
    ProviderAccepted,
    /// The consumer confirmed it with a receipt id.
    ConfirmedDelivered,
}

impl Delivery {
    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            Delivery::Prepared => "prepared",
            Delivery::Persisted => "persisted",
            Delivery::ProviderAccepted => "provider-accepted",
            Delivery::ConfirmedDelivered => "confirmed-delivered",
        }
    }
}

/// One outbox record. Writes of it are conditional on the delivery state it was read in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxRecord {
    /// The event.
    pub body: EventBody,
    /// How far it got.
    pub delivery: Delivery,
    /// The first entry id PutEvents returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// The consumer's receipt id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt_id: Option<ReceiptId>,
}

/// A move of an outbox record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Advance {
    /// prepared → persisted.
    Persist,
    /// persisted → provider-accepted, with PutEvents' entry id.
    ProviderAccepted(String),
    /// provider-accepted → confirmed-delivered, with the consumer's receipt id.
    Delivered(ReceiptId),
}

impl OutboxRecord {
    /// A record of `body`, prepared.
    pub fn prepare(body: EventBody) -> OutboxRecord {
        OutboxRecord {
            body,
            delivery: Delivery::Prepared,
            entry_id: None,
            receipt_id: None,
        }
    }

    /// The record after `advance`, or `None` when it already shows it (a repeat after a lost
    /// answer). Forward only, one state at a time: going back, skipping a state, or confirming
    /// with another receipt is refused (`Conflict.ParametersChanged`). A second entry id for a
    /// published event (a relay that published again) keeps the first: the event is one.
    pub fn advanced(&self, advance: &Advance) -> Result<Option<OutboxRecord>, Error> {
        let (to, from) = match advance {
            Advance::Persist => (Delivery::Persisted, Delivery::Prepared),
            Advance::ProviderAccepted(_) => (Delivery::ProviderAccepted, Delivery::Persisted),
            Advance::Delivered(_) => (Delivery::ConfirmedDelivered, Delivery::ProviderAccepted),
        };
        if self.delivery >= to {
            return match advance {
                Advance::Delivered(r) if self.receipt_id.as_ref() != Some(r) => {
                    Err(Error::ParametersChanged(format!(
                        "event {} was delivered with receipt {:?}, not {r}",
                        self.body.event_id, self.receipt_id
                    )))
                }
                _ => Ok(None),
            };
        }
        if self.delivery != from {
            return Err(Error::ParametersChanged(format!(
                "event {} is {}; it cannot move to {}",
                self.body.event_id,
                self.delivery.name(),
                to.name()
            )));
        }
        let mut next = self.clone();
        next.delivery = to;
        match advance {
            Advance::Persist => {}
            Advance::ProviderAccepted(entry) => next.entry_id = Some(entry.clone()),
            Advance::Delivered(receipt) => next.receipt_id = Some(receipt.clone()),
        }
        Ok(Some(next))
    }
}
