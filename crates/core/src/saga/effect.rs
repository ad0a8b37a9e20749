//! The saga's effects and the evidence of each. The names are stable: they go into operation
//! ids (handed to providers as idempotency keys) and into the audit chain, so they never change.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::outbox::EventId;
use super::sink::ReceiptId;
use crate::ids::{OperationId, RunId};
use crate::model::step::Step;
use crate::Error;

/// One effect of route's saga, in the order the saga makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Effect {
    /// The document's current result becomes this run.
    #[serde(rename = "result.promoted")]
    ResultPromoted,
    /// A `document.accepted` event is published through the outbox.
    #[serde(rename = "event.published")]
    EventPublished,
    /// The downstream consumer recorded the document and answered with a receipt id.
    #[serde(rename = "downstream.recorded")]
    DownstreamRecorded,
}

impl Effect {
    /// Every effect, in the order the saga makes them (compensation runs them backwards).
    pub const ALL: [Effect; 3] = [
        Effect::ResultPromoted,
        Effect::EventPublished,
        Effect::DownstreamRecorded,
    ];

    /// The stable name (operation ids, audit actions, the journal).
    pub fn name(self) -> &'static str {
        match self {
            Effect::ResultPromoted => "result.promoted",
            Effect::EventPublished => "event.published",
            Effect::DownstreamRecorded => "downstream.recorded",
        }
    }

    /// The audit action of its compensation.
    pub fn compensation_name(self) -> &'static str {
        match self {
            Effect::ResultPromoted => "result.restored",
            Effect::EventPublished => "event.retracted",
            Effect::DownstreamRecorded => "downstream.voided",
        }
    }

    /// The effect named `s`.
    pub fn parse(s: &str) -> Result<Effect, Error> {
        Effect::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| Error::Internal(format!("unknown saga effect {s:?}")))
    }

    /// This effect's operation of `run`: an effect of route.
    pub fn operation(self, run: &RunId) -> OperationId {
        OperationId::new(run, Step::Route.name(), Some(self.name()))
    }

    /// The operation that compensates this effect of `run`.
    pub fn compensation(self, run: &RunId) -> OperationId {
        OperationId::new(run, Step::Compensate.name(), Some(self.name()))
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is known of whether an effect happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// It did not happen (never tried, or a look-up or a refusal proved it did not).
    NotAttempted,
    /// It was claimed and tried, and its outcome is not known: reconcile before anything else.
    Uncertain,
    /// It happened; its ids are recorded.
    Confirmed,
}

impl Evidence {
    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            Evidence::NotAttempted => "not-attempted",
            Evidence::Uncertain => "uncertain",
            Evidence::Confirmed => "confirmed",
        }
    }
}

/// The document's current result before this run's promotion (what a restore puts back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviousResult {
    /// The run that was current.
    pub run_id: RunId,
    /// Its source order (the document record carries it).
    pub source_order: String,
}

/// The ids an effect's evidence carries, as far as they are known. Which ones an effect has:
/// a promotion `previous` (`None`: no result was current), a publication `event_id` and the
/// provider's `entry_id`, a downstream record `event_id` and the consumer's `receipt_id`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectIds {
    /// The result that was current before the promotion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<PreviousResult>,
    /// The outbox event's id (stable per run and event kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<EventId>,
    /// The id PutEvents returned for the event's entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// The consumer's receipt id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt_id: Option<ReceiptId>,
}

impl EffectIds {
    /// These ids completed with `more`'s: an id known on both sides must be the same, or the
    /// answer is `None` (two different outcomes of one effect: never silently replaced).
    pub fn merged(&self, more: &EffectIds) -> Option<EffectIds> {
        fn one<T: Clone + PartialEq>(a: &Option<T>, b: &Option<T>) -> Option<Option<T>> {
            match (a, b) {
                (Some(x), Some(y)) if x != y => None,
                _ => Some(a.clone().or_else(|| b.clone())),
            }
        }
        Some(EffectIds {
            previous: one(&self.previous, &more.previous)?,
            event_id: one(&self.event_id, &more.event_id)?,
            entry_id: one(&self.entry_id, &more.entry_id)?,
            receipt_id: one(&self.receipt_id, &more.receipt_id)?,
        })
    }
}
