//! The compensation planner: from a journal, the ordered list of what to do next.
//!
//! 1. Every `uncertain` effect is looked up first, latest effect first (the look-up's answer
//!    settles it as confirmed or not-attempted, and the plan is made again).
//! 2. Then the `confirmed` effects whose compensation is pending or attempted, in **reverse**
//!    order, each with the ids recorded when it happened. An earlier effect is undone only after
//!    every later one was: a compensation that failed for good stops the plan there, and the
//!    earlier ones stay pending for its owner.
//!
//! A saga that retracts an accepted document (an operator's withdrawal) uses the same plan.

use serde::{Deserialize, Serialize};

use super::effect::{Effect, Evidence, PreviousResult};
use super::journal::Journal;
use super::outbox::EventId;
use super::sink::ReceiptId;
use super::status::CompensationStatus;
use crate::Error;

/// How many times one compensation is attempted before it is handed to its owner
/// (`failed-manual-review`). Each attempt is one invocation: the state machine's Retry (with
/// backoff) makes the next.
pub const MAX_COMPENSATION_ATTEMPTS: u32 = 3;

/// How long an attempt in flight holds its compensation: no other caller makes an attempt of
/// its own for this long after it was claimed, unless it ended first. The compensate Lambda's
/// timeout (30 s, `tests/lint` checks the template), so its holder has finished or been stopped
/// by then; a caller refused meanwhile is `Transient.InProgress` and retried with backoff.
pub const ATTEMPT_LEASE_SECONDS: i64 = 30;

/// The bound and the owner of compensations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompensationRules {
    /// Attempts per compensation ([`MAX_COMPENSATION_ATTEMPTS`]).
    pub max_attempts: u32,
    /// Who owns a compensation that failed for good (the config's unresolved owner).
    pub owner: String,
}

/// One thing to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum Action {
    /// Is this run the document's current result? (an uncertain promotion)
    LookUpPromotion,
    /// Did the provider accept event `event_id`? (an uncertain publication)
    LookUpEvent {
        /// The outbox event's id.
        event_id: EventId,
    },
    /// Does the consumer hold a receipt for event `event_id`? (an uncertain downstream record)
    LookUpReceipt {
        /// The event the receipt would answer.
        event_id: EventId,
    },
    /// Make `previous` the document's current result again (none: no current result), only if
    /// the current one is still this run: a newer result is never undone.
    Restore {
        /// What was current before the promotion.
        previous: Option<PreviousResult>,
    },
    /// Publish `document.retracted` naming `event_id`.
    Retract {
        /// The published event.
        event_id: EventId,
    },
    /// Ask the consumer to void `receipt_id` (idempotent on its side).
    Void {
        /// The consumer's receipt.
        receipt_id: ReceiptId,
    },
}

impl Action {
    /// Whether this is a look-up (reconciliation) rather than a compensation.
    pub fn is_look_up(&self) -> bool {
        matches!(
            self,
            Action::LookUpPromotion | Action::LookUpEvent { .. } | Action::LookUpReceipt { .. }
        )
    }
}

/// One planned step: what to do for which effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Planned {
    /// The effect it settles or undoes.
    pub effect: Effect,
    /// What to do.
    pub action: Action,
}

/// The ordered plan for `journal` (empty: nothing left to do; [`Journal::reached_end`] tells
/// how it ended). A confirmed effect whose ids do not say what to undo is a corrupt journal
/// (`Fatal.Internal`).
pub fn plan(journal: &Journal) -> Result<Vec<Planned>, Error> {
    let reversed = || journal.entries.iter().rev();
    let mut out = Vec::new();
    for e in reversed().filter(|e| e.evidence == Evidence::Uncertain) {
        let event_id = || missing(journal, e.effect, "event id", e.ids.event_id.clone());
        let action = match e.effect {
            Effect::ResultPromoted => Action::LookUpPromotion,
            Effect::EventPublished => Action::LookUpEvent {
                event_id: event_id()?,
            },
            Effect::DownstreamRecorded => Action::LookUpReceipt {
                event_id: event_id()?,
            },
        };
        out.push(Planned {
            effect: e.effect,
            action,
        });
    }
    for e in reversed() {
        use CompensationStatus as C;
        match e.compensation {
            C::FailedManualReview => break,
            C::Pending | C::Attempted if e.evidence == Evidence::Confirmed => {
                let action = match e.effect {
                    Effect::ResultPromoted => Action::Restore {
                        previous: e.ids.previous.clone(),
                    },
                    Effect::EventPublished => Action::Retract {
                        event_id: missing(journal, e.effect, "event id", e.ids.event_id.clone())?,
                    },
                    Effect::DownstreamRecorded => Action::Void {
                        receipt_id: missing(
                            journal,
                            e.effect,
                            "receipt id",
                            e.ids.receipt_id.clone(),
                        )?,
                    },
                };
                out.push(Planned {
                    effect: e.effect,
                    action,
                });
            }
            _ => {}
        }
    }
    Ok(out)
}

fn missing<T>(journal: &Journal, effect: Effect, what: &str, id: Option<T>) -> Result<T, Error> {
    id.ok_or_else(|| {
        Error::Internal(format!(
            "saga journal of {}: {effect} has no {what}",
            journal.run_id
        ))
    })
}
