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

use serde::Serialize;
use time::OffsetDateTime;

use crate::ports::{HasOutbox, Outbox};
use crate::saga::{EventBody, EventKind};
use crate::Error;

/// What one sweep did, for the log and the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Swept {
    /// Events published and settled.
    pub relayed: usize,
    /// Events whose relay failed (the next sweep tries them again), with the error's name.
    pub failed: Vec<(String, String)>,
}

/// The `document.accepted` events whose records entered `persisted` before `cutoff` and are
/// still there, oldest first: what [`super::announce`] relays.
pub async fn stuck(
    ports: &impl HasOutbox,
    cutoff: OffsetDateTime,
) -> Result<Vec<EventBody>, Error> {
    let records = ports.outbox().persisted_before(cutoff).await?;
    Ok(records
        .into_iter()
        .map(|r| r.body)
        .filter(|body| body.kind == EventKind::Accepted)
        .collect())
}
