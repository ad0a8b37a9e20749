//! The outbox sweeper: finds the `document.accepted` records that stayed `persisted`, which is
//! what a route leaves behind when it committed the run's completion and then stopped before
//! publishing (its Lambda timed out, crashed, or PutEvents kept failing until the state machine
//! gave up). Each is announced as route would have ([`super::announce`]): published under its
//! stable event id, settled in the journal with its audit entry, its record moved to
//! `provider-accepted`. A relay racing a late route publishes the event at most once more under
//! the same id, which the consumer applies once.
//!
//! A retraction's record is left alone: the compensation that persisted it publishes it, and
//! its own retries and obligation cover it.
//!
//! It also redelivers: a published `document.accepted` whose run still waits for the consumer's
//! answer ([`unanswered`]) is put on the bus again under the same event id. EventBridge delivers
//! at least once but gives up on a target after its retries, and the consumer's answer travels
//! back the same way; a redelivery is the outbox's at-least-once. The consumer applies an event
//! once and answers a repeat as it answered the first, so the answer that was lost comes again
//! and ends the wait. Only records published within the wait's deadline are taken: after it the
//! Task's timeout has handed the run to compensation.

use serde::Serialize;
use time::OffsetDateTime;

use crate::ports::{EventBus, HasEvents, HasJournal, HasOutbox, Outbox, SagaJournal};
use crate::saga::{Delivery, Effect, EventBody, EventKind, Evidence};
use crate::Error;

/// What one sweep did, for the log and the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Swept {
    /// Events published and settled.
    pub relayed: usize,
    /// Events put on the bus again because their run still waits for the consumer's answer
    /// (their ids).
    pub redelivered: Vec<String>,
    /// Events whose relay or redelivery failed (the next sweep tries them again), with the
    /// error's name.
    pub failed: Vec<(String, String)>,
}

/// The `document.accepted` events whose records entered `persisted` before `cutoff` and are
/// still there, oldest first: what [`super::announce`] relays.
pub async fn stuck(
    ports: &impl HasOutbox,
    cutoff: OffsetDateTime,
) -> Result<Vec<EventBody>, Error> {
    let epoch = OffsetDateTime::UNIX_EPOCH;
    let records = ports
        .outbox()
        .entered_between(Delivery::Persisted, epoch, cutoff)
        .await?;
    Ok(records
        .into_iter()
        .map(|r| r.body)
        .filter(|body| body.kind == EventKind::Accepted)
        .collect())
}

/// The `document.accepted` events published between `after` and `before` whose run still waits
/// for the consumer's answer: the waiting Task claimed `downstream.recorded` (`uncertain`), no
/// answer settled it, no refusal is noted and no compensation has begun. Oldest first.
pub async fn unanswered(
    ports: &(impl HasOutbox + HasJournal),
    after: OffsetDateTime,
    before: OffsetDateTime,
) -> Result<Vec<EventBody>, Error> {
    let published = ports
        .outbox()
        .entered_between(Delivery::ProviderAccepted, after, before)
        .await?;
    let mut waiting = Vec::new();
    for record in published {
        if record.body.kind != EventKind::Accepted {
            continue;
        }
        let Some(journal) = ports.journal().journal(&record.body.run_id).await? else {
            continue;
        };
        let entry = journal.entry(Effect::DownstreamRecorded);
        let open = entry.evidence == Evidence::Uncertain && entry.note.is_none();
        if open && journal.compensation_reason.is_none() {
            waiting.push(record.body);
        }
    }
    Ok(waiting)
}

/// Puts `body` on the bus again, under its own event id (the consumer applies it once).
pub async fn redeliver(ports: &impl HasEvents, body: &EventBody) -> Result<(), Error> {
    ports.events().put(body).await.map(|_| ())
}
