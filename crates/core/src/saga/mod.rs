//! Route's saga, pure: the effects a run makes after its result is written (promotion,
//! publication through the outbox, the downstream record), the evidence of each, the
//! compensation journal and its planner, the outbox record and the reference consumer's rules.
//! The steps over these are in `steps::saga`; the stores behind them are ports
//! (`ports::SagaJournal`, `Outbox`, `EventBus`, `Downstream`) and the store's transaction
//! (`ports::Change::{Journal, Outbox, Restore}`).

pub mod compensate;
pub mod effect;
pub mod journal;
pub mod outbox;
pub mod sink;
pub mod status;

pub use compensate::{
    plan, Action, CompensationRules, Planned, ATTEMPT_LEASE_SECONDS, MAX_COMPENSATION_ATTEMPTS,
};
pub use effect::{Effect, EffectIds, Evidence, PreviousResult};
pub use journal::{Journal, JournalEntry, Outcome, Transition};
pub use outbox::{Advance, Delivery, EventBody, EventId, EventKind, OutboxRecord, EVENT_SOURCE};
pub use sink::{Applied, Book, Receipt, ReceiptId, Voided};
pub use status::{CompensationStatus, SagaEnd};

#[cfg(test)]
mod tests;
