//! The saga's stores under one lock each, applying [`crate::saga`]'s rules, with counters at
//! the wire and scripted failures for the tests. The journal and the outbox belong to the
//! [`MemoryStore`](super::MemoryStore), which applies `Change::Journal`/`Change::Outbox` to them
//! atomically with the rest of a commit.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::ids::RunId;
use crate::model::run::TaskToken;
use crate::ports::{
    Deliver, Downstream, EventBus, Outbox, ReceiptWaits, SagaJournal, StaleJournal,
};
use crate::saga::sink::Answer;
use crate::saga::CompensationStatus;
use crate::saga::{
    Advance, Book, Delivery, EventBody, EventId, Journal, JournalEntry, OutboxRecord, ReceiptId,
    Voided,
};
use crate::Error;
use time::OffsetDateTime;

/// Takes one scripted failure from `count`, if any is left.
pub(super) fn take(count: &Mutex<usize>) -> bool {
    let mut n = count.lock().unwrap();
    let hit = *n > 0;
    *n = n.saturating_sub(usize::from(hit));
    hit
}

/// A future that is pending once: a read of the memory journal lets other tasks run, so that
/// concurrent callers interleave as they would against a real table.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// Journals by run, written only at the next version.
#[derive(Debug, Default)]
pub struct MemoryJournal {
    pub(super) journals: Mutex<BTreeMap<RunId, Journal>>,
    /// Successful writes (alone, or in a store commit).
    pub writes: Mutex<usize>,
}

impl SagaJournal for MemoryJournal {
    async fn journal(&self, run: &RunId) -> Result<Option<Journal>, Error> {
        YieldOnce(false).await;
        Ok(self.journals.lock().unwrap().get(run).cloned())
    }

    async fn put(&self, journal: &Journal) -> Result<Result<(), StaleJournal>, Error> {
        let mut journals = self.journals.lock().unwrap();
        let stored = journals.get(&journal.run_id).map_or(0, |j| j.version);
        if stored + 1 != journal.version {
            return Ok(Err(StaleJournal { stored }));
        }
        journals.insert(journal.run_id.clone(), journal.clone());
        *self.writes.lock().unwrap() += 1;
        Ok(Ok(()))
    }

    async fn failed(&self) -> Result<Vec<Journal>, Error> {
        let failed = |e: &JournalEntry| e.compensation == CompensationStatus::FailedManualReview;
        let journals = self.journals.lock().unwrap();
        Ok(journals
            .values()
            .filter(|j| j.entries.iter().any(failed))
            .cloned()
            .collect())
    }
}

/// Outbox records by event id, and when each entered its delivery state (the system clock, as
/// the DynamoDB adapter stamps it).
#[derive(Debug, Default)]
pub struct MemoryOutbox {
    pub(super) records: Mutex<BTreeMap<EventId, OutboxRecord>>,
    pub(super) since: Mutex<BTreeMap<EventId, OffsetDateTime>>,
}

impl MemoryOutbox {
    /// Stamps `events` as having entered their state now.
    pub(super) fn entered(&self, events: impl IntoIterator<Item = EventId>) {
        let mut since = self.since.lock().unwrap();
        let now = OffsetDateTime::now_utc();
        for event in events {
            since.insert(event, now);
        }
    }

    /// The delivery state of every event.
    pub fn deliveries(&self) -> BTreeMap<EventId, Delivery> {
        let records = self.records.lock().unwrap();
        records
            .iter()
            .map(|(id, r)| (id.clone(), r.delivery))
            .collect()
    }
}

impl Outbox for MemoryOutbox {
    async fn record(&self, event: &EventId) -> Result<Option<OutboxRecord>, Error> {
        Ok(self.records.lock().unwrap().get(event).cloned())
    }

    async fn persist(&self, record: OutboxRecord) -> Result<OutboxRecord, Error> {
        let mut records = self.records.lock().unwrap();
        let id = record.body.event_id.clone();
        if let Some(existing) = records.get(&id) {
            return Ok(existing.clone());
        }
        let persisted = record.advanced(&Advance::Persist)?.unwrap_or(record);
        records.insert(id.clone(), persisted.clone());
        self.entered([id]);
        Ok(persisted)
    }

    async fn entered_between(
        &self,
        delivery: Delivery,
        after: OffsetDateTime,
        before: OffsetDateTime,
    ) -> Result<Vec<OutboxRecord>, Error> {
        let records = self.records.lock().unwrap();
        let since = self.since.lock().unwrap();
        let mut stuck: Vec<(OffsetDateTime, OutboxRecord)> = records
            .values()
            .filter(|r| r.delivery == delivery)
            .filter_map(|r| since.get(&r.body.event_id).map(|t| (*t, r.clone())))
            .filter(|(t, _)| after <= *t && *t < before)
            .collect();
        stuck.sort_by_key(|(t, _)| *t);
        Ok(stuck.into_iter().map(|(_, r)| r).collect())
    }
}

/// What the bus accepted, in order, one line per PutEvents entry (a republication is a line).
#[derive(Debug, Default)]
pub struct MemoryBus {
    /// Every accepted entry: (event, entry id).
    pub entries: Mutex<Vec<(EventBody, String)>>,
    /// The next this many puts fail before sending (`Transient.Dependency`).
    pub fail_next: Mutex<usize>,
    /// The next this many puts are accepted and their answer lost (`Ambiguous.OutcomeUnknown`).
    pub lose_next: Mutex<usize>,
}

impl MemoryBus {
    /// The accepted entries of `kind`'s events, as (event id, retracted event id).
    pub fn published(&self, kind: crate::saga::EventKind) -> Vec<(EventId, Option<EventId>)> {
        let entries = self.entries.lock().unwrap();
        entries
            .iter()
            .filter(|(b, _)| b.kind == kind)
            .map(|(b, _)| (b.event_id.clone(), b.retracts.clone()))
            .collect()
    }
}

impl EventBus for MemoryBus {
    async fn put(&self, body: &EventBody) -> Result<String, Error> {
        if take(&self.fail_next) {
            return Err(Error::Dependency("PutEvents: bus unavailable".into()));
        }
        let mut entries = self.entries.lock().unwrap();
        let entry = format!("entry-{}", entries.len() + 1);
        entries.push((body.clone(), entry.clone()));
        if take(&self.lose_next) {
            return Err(Error::OutcomeUnknown("PutEvents: answer lost".into()));
        }
        Ok(entry)
    }

    async fn find(&self, event: &EventId) -> Result<Option<String>, Error> {
        let entries = self.entries.lock().unwrap();
        Ok(entries
            .iter()
            .find(|(b, _)| &b.event_id == event)
            .map(|(_, entry)| entry.clone()))
    }
}

/// The reference consumer's book under a lock.
#[derive(Debug, Default)]
pub struct MemorySink {
    /// The book.
    pub book: Mutex<Book>,
    /// Deliveries received (each is one message on the consumer's queue).
    pub deliveries: Mutex<usize>,
    /// Void requests received, in order.
    pub voids: Mutex<Vec<ReceiptId>>,
    /// The next this many deliveries fail (`Transient.Dependency`) without reaching the book.
    pub fail_deliveries: Mutex<usize>,
    /// The next this many void requests fail (`Transient.Dependency`) without reaching the book.
    pub fail_voids: Mutex<usize>,
}

impl Deliver for MemorySink {
    async fn deliver(&self, body: &EventBody) -> Result<ReceiptId, Error> {
        *self.deliveries.lock().unwrap() += 1;
        if take(&self.fail_deliveries) {
            return Err(Error::Dependency("delivery: consumer unavailable".into()));
        }
        let applied = self.book.lock().unwrap().apply(body)?;
        Ok(applied.receipt().clone())
    }
}

impl Downstream for MemorySink {
    async fn receipt_for(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        let book = self.book.lock().unwrap();
        Ok(book.receipt_for(event).map(|r| r.receipt_id.clone()))
    }

    async fn fence(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        let mut book = self.book.lock().unwrap();
        Ok(book.fence(event).map(|r| r.receipt_id.clone()))
    }

    async fn void(&self, receipt: &ReceiptId, reason: &str) -> Result<Voided, Error> {
        self.voids.lock().unwrap().push(receipt.clone());
        if take(&self.fail_voids) {
            return Err(Error::Dependency("void: consumer unavailable".into()));
        }
        self.book.lock().unwrap().void(receipt, reason)
    }
}

/// The journal of `run` whose retraction of its published event (bus entry `entry_id`) failed
/// for good with `Fatal.Internal`, owned by `owner`: an open obligation, as the operator's
/// listing tests store it.
pub fn failed_compensation(run: &RunId, entry_id: &str, owner: &str) -> Journal {
    use crate::error::ErrorKind;
    use crate::saga::{Effect, EffectIds, Outcome, Transition};
    let ids = EffectIds {
        entry_id: Some(entry_id.into()),
        ..EffectIds::default()
    };
    Journal::new(run)
        .next_all(&[
            Transition::Claim(Effect::EventPublished, ids.clone()),
            Transition::Settle(Effect::EventPublished, Outcome::Happened(ids)),
            Transition::BeginCompensation("withdrawn".into()),
            Transition::Attempt {
                effect: Effect::EventPublished,
                seen: 0,
                at: time::OffsetDateTime::UNIX_EPOCH,
            },
            Transition::Failed {
                effect: Effect::EventPublished,
                error: ErrorKind::Internal,
                max_attempts: 3,
                owner: owner.into(),
            },
        ])
        .expect("a valid sequence")
        .expect("it changes the journal")
}

/// One event's wait: the waiting token (as text) and the consumer's answer.
#[derive(Debug, Clone, Default)]
pub struct Wait {
    /// The newest waiting token.
    pub token: Option<String>,
    /// The answer.
    pub answer: Option<Answer>,
}

/// The receipt waits under one lock, per event.
#[derive(Debug, Default)]
pub struct MemoryWaits {
    /// Per event, its wait.
    pub waits: Mutex<BTreeMap<EventId, Wait>>,
}

impl ReceiptWaits for MemoryWaits {
    async fn wait(&self, event: &EventId, token: &TaskToken) -> Result<Option<Answer>, Error> {
        let mut waits = self.waits.lock().unwrap();
        let wait = waits.entry(event.clone()).or_default();
        wait.token = Some(token.expose().to_string());
        Ok(wait.answer.clone())
    }

    async fn answered(&self, answer: &Answer) -> Result<Option<TaskToken>, Error> {
        let mut waits = self.waits.lock().unwrap();
        let wait = waits.entry(answer.event_id().clone()).or_default();
        wait.answer = Some(answer.clone());
        wait.token.clone().map(TaskToken::new).transpose()
    }
}
