//! The stores and services route's saga uses (`steps::saga`): its journal, the outbox, the
//! event bus, the downstream consumer, and the restore of a document's previous result. Each is
//! narrow; the rules they apply are [`crate::saga`]'s.

use std::future::Future;

use crate::ids::{DocumentId, RunId};
use crate::saga::{
    Advance, EventBody, EventId, Journal, OutboxRecord, PreviousResult, ReceiptId, Voided,
};
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
    /// Moves the record of `event` ([`OutboxRecord::advanced`]; conditional on the delivery
    /// state it was read in). A missing record is `Fatal.Internal`.
    fn advance(
        &self,
        event: &EventId,
        advance: Advance,
    ) -> impl Future<Output = Result<OutboxRecord, Error>> + Send;
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

/// The downstream consumer, as route's saga sees it.
pub trait Downstream: Send + Sync {
    /// Delivers an accepted event and answers the consumer's receipt (the same receipt for a
    /// redelivery). Refusals: `Business.DuplicateInvoice`, `Conflict.StaleVersion`.
    fn deliver(&self, body: &EventBody) -> impl Future<Output = Result<ReceiptId, Error>> + Send;
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

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// The previous result is current again (or, with none, the document has none).
    Restored,
    /// It was restored before: nothing changed.
    AlreadyRestored,
    /// Another run is current (a newer version): it is never undone.
    Superseded(RunId),
}

/// The compensation of a promotion, beside the store's `Change::Promote`.
pub trait Promotions: Send + Sync {
    /// Makes `previous` the document's current result (none: removes the current result), only
    /// if the current one is `run` (`ConditionExpression: currentRunId = :run`).
    fn restore(
        &self,
        document: &DocumentId,
        run: &RunId,
        previous: Option<&PreviousResult>,
    ) -> impl Future<Output = Result<Restored, Error>> + Send;
}
