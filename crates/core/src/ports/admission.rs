//! The shared records of OCR admission (DynamoDB): a pacer per rate quota and a semaphore of
//! leased slots per concurrency quota. The rules are [`crate::admission`]'s; an adapter applies
//! them as conditional writes and, when another caller wrote first, reads again and decides
//! again.

use std::future::Future;

use crate::admission::pacer::{Pace, Taken};
use crate::admission::slots::{Acquired, Released};
use crate::admission::Quotas;
use crate::Error;

/// Pacers and slot pools, by name (a pacer per Textract operation, a pool per job quota).
pub trait Admission: Send + Sync {
    /// Takes the next slot of pacer `pacer` at or after `now_ms` in one conditional write
    /// ([`crate::admission::pacer`]: [`claim`](crate::admission::pacer::claim), and the store
    /// does as [`apply`](crate::admission::pacer::apply) says).
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
    /// The quotas an operator recorded for `provider` (`docket ops quotas`); `None`: none
    /// recorded, the provider's defaults apply.
    fn quotas(&self, provider: &str) -> impl Future<Output = Result<Option<Quotas>, Error>> + Send;
    /// Records `quotas` for `provider` (checked by [`Quotas::check`] first).
    fn set_quotas(
        &self,
        provider: &str,
        quotas: &Quotas,
    ) -> impl Future<Output = Result<(), Error>> + Send;
}

impl<A: Admission> Admission for &A {
    fn take_slot(
        &self,
        pacer: &str,
        pace: &Pace,
        now_ms: i64,
    ) -> impl Future<Output = Result<Taken, Error>> + Send {
        (**self).take_slot(pacer, pace, now_ms)
    }
    fn acquire(
        &self,
        pool: &str,
        holder: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> impl Future<Output = Result<Acquired, Error>> + Send {
        (**self).acquire(pool, holder, limit, now, lease_seconds)
    }
    fn release(
        &self,
        pool: &str,
        holder: &str,
    ) -> impl Future<Output = Result<Released, Error>> + Send {
        (**self).release(pool, holder)
    }
    fn reclaim(
        &self,
        pool: &str,
        now: i64,
    ) -> impl Future<Output = Result<Vec<String>, Error>> + Send {
        (**self).reclaim(pool, now)
    }
    fn quotas(&self, provider: &str) -> impl Future<Output = Result<Option<Quotas>, Error>> + Send {
        (**self).quotas(provider)
    }
    fn set_quotas(
        &self,
        provider: &str,
        quotas: &Quotas,
    ) -> impl Future<Output = Result<(), Error>> + Send {
        (**self).set_quotas(provider, quotas)
    }
}

/// The time a turn is taken in: a clock (unix ms) and a wait until an instant. The system's in
/// a Lambda; a virtual one, moved by the waits, in unit tests.
pub trait Timer: Send + Sync {
    /// Now, unix milliseconds.
    fn now_ms(&self) -> i64;
    /// Returns at `at_ms` or later (at once when it has passed).
    fn sleep_until(&self, at_ms: i64) -> impl Future<Output = ()> + Send;
}

impl<T: Timer> Timer for &T {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }

    fn sleep_until(&self, at_ms: i64) -> impl Future<Output = ()> + Send {
        (**self).sleep_until(at_ms)
    }
}
