//! The stores and services route's saga uses (`steps::saga`): its journal, the outbox, the
//! event bus and the downstream consumer. Each is narrow; the rules they apply are
//! [`crate::saga`]'s. The journal's and the outbox's writes that record an effect go through the
//! store's transaction instead (`Change::Journal`, `Change::Outbox`, and `Change::Restore` for
//! the compensation of a promotion), with the audit entry: the ports here read, and write only
//! what has no audit entry of its own (a claim before an effect, a retraction's record before
//! it is published).

use std::future::Future;

use time::OffsetDateTime;

use crate::ids::RunId;
use crate::model::run::TaskToken;
use crate::saga::sink::Answer;
use crate::saga::{Delivery, EventBody, EventId, Journal, OutboxRecord, ReceiptId, Voided};
use crate::Error;

/// A journal write lost the race: the stored version is not the one it was derived from.
/// Nothing was written; re-read and apply the transition again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaleJournal {
    /// The version stored (0: none).
    pub stored: u64,
}

/// The saga journals, one per run (DynamoDB, conditional on the journal's version).
pub trait SagaJournal: Send + Sync {
    /// The journal of `run` (strongly consistent).
    fn journal(&self, run: &RunId) -> impl Future<Output = Result<Option<Journal>, Error>> + Send;
    /// Writes `journal` iff the stored version is `journal.version - 1` (none for version 1):
    /// `ConditionExpression: version = :v` (or `attribute_not_exists`).
    fn put(
        &self,
        journal: &Journal,
    ) -> impl Future<Output = Result<Result<(), StaleJournal>, Error>> + Send;
    /// Every journal with a compensation that failed for good (open obligations with an owner).
    fn failed(&self) -> impl Future<Output = Result<Vec<Journal>, Error>> + Send;
}

/// The outbox: event records written with the state change they announce, moved forward only.
pub trait Outbox: Send + Sync {
    /// The record of `event`.
    fn record(
        &self,
        event: &EventId,
    ) -> impl Future<Output = Result<Option<OutboxRecord>, Error>> + Send;
    /// Writes a prepared record as `persisted`, unless the event has a record already (then that
    /// one is returned, unchanged: the id is stable, the event is one).
    fn persist(
        &self,
        record: OutboxRecord,
    ) -> impl Future<Output = Result<OutboxRecord, Error>> + Send;
    /// Every record still in `delivery` that entered that state at or after `after` and before
    /// `before` (the bounds may be off by the sub-second part of the stored times), oldest
    /// first: what the sweeper relays or redelivers (`steps::saga::sweep`).
    fn entered_between(
        &self,
        delivery: Delivery,
        after: OffsetDateTime,
        before: OffsetDateTime,
    ) -> impl Future<Output = Result<Vec<OutboxRecord>, Error>> + Send;
}

/// The event bus (EventBridge PutEvents).
pub trait EventBus: Send + Sync {
    /// Publishes `body` under its event id; the entry id. A lost answer is
    /// `Ambiguous.OutcomeUnknown` (publish again with the same id: the consumer dedups).
    fn put(&self, body: &EventBody) -> impl Future<Output = Result<String, Error>> + Send;
    /// The entry id of `event` if the bus accepted it: how an uncertain publication is
    /// reconciled.
    fn find(&self, event: &EventId) -> impl Future<Output = Result<Option<String>, Error>> + Send;
}

/// The downstream consumer, as a compensation sees it: asked directly, by ids (on AWS, a
/// request to the consumer's function). Delivery is not here: on AWS the consumer takes the
/// event from the bus and answers on it ([`Deliver`] is the same, synchronous, for the
/// in-memory saga).
pub trait Downstream: Send + Sync {
    /// The receipt the consumer holds for `event`: how an uncertain delivery is reconciled.
    fn receipt_for(
        &self,
        event: &EventId,
    ) -> impl Future<Output = Result<Option<ReceiptId>, Error>> + Send;
    /// The receipt for `event`, or, if it was not applied, a fence: the consumer refuses any
    /// later delivery of it (`Conflict.FencedOut`). How a compensation reconciles an uncertain
    /// delivery: "not applied" stays true.
    fn fence(
        &self,
        event: &EventId,
    ) -> impl Future<Output = Result<Option<ReceiptId>, Error>> + Send;
    /// Voids `receipt` (idempotent: a second void says so); `Conflict.UnknownReceipt` for a
    /// receipt the consumer does not have.
    fn void(
        &self,
        receipt: &ReceiptId,
        reason: &str,
    ) -> impl Future<Output = Result<Voided, Error>> + Send;
}

/// A consumer that takes an event directly and answers its receipt: the in-memory model of
/// delivery through the bus and the consumer's answer (`steps::saga::run`).
pub trait Deliver: Downstream {
    /// Delivers an accepted event and answers the consumer's receipt (the same receipt for a
    /// redelivery). Refusals: `Business.DuplicateInvoice`, `Conflict.StaleVersion`.
    fn deliver(&self, body: &EventBody) -> impl Future<Output = Result<ReceiptId, Error>> + Send;
}

/// Where the workflow waits for the consumer's answer to an accepted event: the waiting Task's
/// token and the answer, kept side by side in one item per event, each write answering what the
/// other wrote before. Whichever of the two arrives second finds the first, so an answer that
/// comes before the wait began is kept, not lost.
pub trait ReceiptWaits: Send + Sync {
    /// Keeps `token` as the one waiting for `event`'s answer (a newer token replaces an older
    /// one); the answer, if it came first.
    fn wait(
        &self,
        event: &EventId,
        token: &TaskToken,
    ) -> impl Future<Output = Result<Option<Answer>, Error>> + Send;
    /// Keeps the consumer's `answer`; the token waiting for it, if the wait began first.
    fn answered(
        &self,
        answer: &Answer,
    ) -> impl Future<Output = Result<Option<TaskToken>, Error>> + Send;
}
