//! The shared records of OCR admission (DynamoDB): a pacer per rate quota and a semaphore of
//! leased slots per concurrency quota. The rules are [`crate::admission`]'s; an adapter applies
//! them as conditional writes and, when another caller wrote first, reads again and decides
//! again.

use std::future::Future;

use crate::admission::pacer::{Pace, Taken};
use crate::admission::slots::{Acquired, Released};
use crate::Error;

/// Pacers and slot pools, by name (a pacer per Textract operation, a pool per job quota).
pub trait Admission: Send + Sync {
    /// Takes the next slot of pacer `pacer` at or after `now_ms` ([`crate::admission::pacer::take`]).
    fn take_slot(
        &self,
        pacer: &str,
        pace: &Pace,
        now_ms: i64,
    ) -> impl Future<Output = Result<Taken, Error>> + Send;
    /// Takes (or, for a holder that has one, renews) a slot of pool `pool`
    /// ([`crate::admission::slots::acquire`]).
    fn acquire(
        &self,
        pool: &str,
        holder: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> impl Future<Output = Result<Acquired, Error>> + Send;
    /// Gives `holder`'s slot of `pool` back; a holder without one changes nothing.
    fn release(
        &self,
        pool: &str,
        holder: &str,
    ) -> impl Future<Output = Result<Released, Error>> + Send;
    /// Gives back every slot of `pool` whose lease ran out by `now` (a crashed holder's) and
    /// returns their holders; a lease renewed meanwhile is kept.
    fn reclaim(
        &self,
        pool: &str,
        now: i64,
    ) -> impl Future<Output = Result<Vec<String>, Error>> + Send;
}
