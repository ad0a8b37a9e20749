//! Pacers and slot pools under one lock, deciding with [`crate::admission`]'s rules, and a
//! virtual clock for the waits.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

use crate::admission::pacer::{apply, claim, Pace, Seen, Taken};
use crate::admission::slots::{acquire, reclaimable, release, Acquired, Lease, Released};
use crate::admission::Quotas;
use crate::ports::{Admission, Timer};
use crate::Error;

#[derive(Debug, Default)]
struct Pool {
    held: u32,
    leases: BTreeMap<String, Lease>,
}

impl Pool {
    /// Gives `holder`'s slot back, as [`release`] decides.
    fn give_back(&mut self, holder: &str) -> Released {
        let decided = release(self.leases.get(holder), holder);
        if decided == Released::Given {
            self.held -= 1;
            self.leases.remove(holder);
        }
        decided
    }
}

/// Pacers and slot pools in memory.
#[derive(Debug, Default)]
pub struct MemoryAdmission {
    pacers: Mutex<BTreeMap<String, i64>>,
    pools: Mutex<BTreeMap<String, Pool>>,
    quotas: Mutex<BTreeMap<String, Quotas>>,
}

impl MemoryAdmission {
    /// The slots of `pool` held now.
    pub fn held(&self, pool: &str) -> u32 {
        self.pools.lock().unwrap().get(pool).map_or(0, |p| p.held)
    }
}

impl Admission for MemoryAdmission {
    async fn take_slot(&self, pacer: &str, pace: &Pace, now_ms: i64) -> Result<Taken, Error> {
        // Under the lock the record is known, so the first claim is the right one.
        let mut pacers = self.pacers.lock().unwrap();
        let next = pacers.get(pacer).copied();
        let claimed = match claim(next.map_or(Seen::Absent, Seen::Next), pace, now_ms) {
            Ok(claimed) => claimed,
            Err(busy) => return Ok(busy),
        };
        let (at_ms, next) = apply(&claimed, next).expect("claimed from the record as it is");
        pacers.insert(pacer.to_string(), next);
        Ok(Taken::Slot { at_ms })
    }

    async fn acquire(
        &self,
        pool: &str,
        holder: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> Result<Acquired, Error> {
        let mut pools = self.pools.lock().unwrap();
        let pool = pools.entry(pool.to_string()).or_default();
        let decided = acquire(
            pool.held,
            pool.leases.get(holder),
            holder,
            limit,
            now,
            lease_seconds,
        );
        match &decided {
            Acquired::Taken { lease } => {
                pool.held += 1;
                pool.leases.insert(holder.to_string(), lease.clone());
            }
            Acquired::AlreadyHeld { lease } => {
                pool.leases.insert(holder.to_string(), lease.clone());
            }
            Acquired::Full { .. } => {}
        }
        Ok(decided)
    }

    async fn release(&self, pool: &str, holder: &str) -> Result<Released, Error> {
        let mut pools = self.pools.lock().unwrap();
        Ok(pools.entry(pool.to_string()).or_default().give_back(holder))
    }

    async fn reclaim(&self, pool: &str, now: i64) -> Result<Vec<String>, Error> {
        let mut pools = self.pools.lock().unwrap();
        let pool = pools.entry(pool.to_string()).or_default();
        let leases: Vec<Lease> = pool.leases.values().cloned().collect();
        let expired: Vec<String> = reclaimable(&leases, now)
            .into_iter()
            .map(|l| l.holder.clone())
            .collect();
        for holder in &expired {
            pool.give_back(holder);
        }
        Ok(expired)
    }

    async fn quotas(&self, provider: &str) -> Result<Option<Quotas>, Error> {
        Ok(self.quotas.lock().unwrap().get(provider).cloned())
    }

    async fn set_quotas(&self, provider: &str, quotas: &Quotas) -> Result<(), Error> {
        quotas.check()?;
        let mut all = self.quotas.lock().unwrap();
        all.insert(provider.to_string(), quotas.clone());
        Ok(())
    }
}

/// A clock that only the waits move: `sleep_until` jumps to the instant (plus `oversleep_ms`,
/// as a paused process wakes late), so a test runs hours of turns at once.
#[derive(Debug, Default)]
pub struct VirtualTimer {
    now: AtomicI64,
    /// How late every wait wakes (ms).
    pub oversleep_ms: AtomicI64,
}

impl VirtualTimer {
    /// A clock at `now_ms`.
    pub fn at(now_ms: i64) -> Self {
        VirtualTimer {
            now: AtomicI64::new(now_ms),
            oversleep_ms: AtomicI64::new(0),
        }
    }

    /// Sets the clock to `now_ms` (the next caller arrives then).
    pub fn set(&self, now_ms: i64) {
        self.now.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the clock on by `ms` (time passing between calls).
    pub fn advance(&self, ms: i64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Timer for VirtualTimer {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }

    async fn sleep_until(&self, at_ms: i64) {
        let woken = at_ms + self.oversleep_ms.load(Ordering::SeqCst);
        self.now.fetch_max(woken, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_same_scenario_as_the_dynamodb_adapter_a_crashed_holder_reclaimed_a_live_one_kept()
    {
        let admission = MemoryAdmission::default();
        admission
            .acquire("jobs", "op-crashed", 2, 0, 60)
            .await
            .unwrap();
        admission
            .acquire("jobs", "op-alive", 2, 0, 60)
            .await
            .unwrap();
        let full = admission
            .acquire("jobs", "op-waiting", 2, 0, 60)
            .await
            .unwrap();
        assert_eq!(full, Acquired::Full { held: 2 });
        admission
            .acquire("jobs", "op-alive", 2, 50, 60)
            .await
            .unwrap();
        assert!(admission.reclaim("jobs", 59).await.unwrap().is_empty());
        assert_eq!(
            admission.reclaim("jobs", 60).await.unwrap(),
            vec!["op-crashed"]
        );
        assert_eq!(admission.held("jobs"), 1);
        assert_eq!(
            admission.release("jobs", "op-crashed").await.unwrap(),
            Released::NotHeld
        );
    }
}
