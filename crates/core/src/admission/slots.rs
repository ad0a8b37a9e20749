//! A semaphore of leased slots for a concurrency quota (Textract's asynchronous jobs at once).
//!
//! Two records: the count of slots held, and one lease per holder (keyed by the holder: the
//! run's OCR operation id). Taking a slot writes both in one transaction, conditional on the
//! count being below the limit and on the holder having no lease (the count is incremented in
//! place, never read first: callers at once do not race on it); giving it back deletes the
//! lease and decrements the count, conditional on the lease being there. So a retry of either
//! changes nothing twice, and the count always equals the leases. The functions here decide
//! from the records as they are; an adapter that cannot see them (DynamoDB) writes these same
//! conditions and reads the decision from which condition refused.
//!
//! A holder that crashed never gives its slot back: its lease runs out and [`reclaimable`]
//! names it for a sweeper to give back. The lease must outlast the longest job (the OCR task's
//! timeout): a slot reclaimed while its job still runs would let one job too many start.

use serde::{Deserialize, Serialize};

/// One holder's slot, until `until` (unix seconds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// Who holds it (the run's OCR operation id).
    pub holder: String,
    /// When it runs out (unix seconds).
    pub until: i64,
}

/// What [`acquire`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// A new slot: write `lease` and the count one higher (conditional: no lease of the
    /// holder, and the count below the limit).
    Taken {
        /// The holder's lease to write.
        lease: Lease,
    },
    /// The holder already has its slot (a retry): its lease is renewed to `lease`; the count
    /// stays.
    AlreadyHeld {
        /// The renewed lease to write.
        lease: Lease,
    },
    /// Every slot is held: wait for one to come back (nothing written).
    Full {
        /// The slots held (at least the limit).
        held: u32,
    },
}

/// Takes a slot for `holder`, given the count `held` and the holder's lease read.
pub fn acquire(
    held: u32,
    existing: Option<&Lease>,
    holder: &str,
    limit: u32,
    now: i64,
    lease_seconds: i64,
) -> Acquired {
    let lease = Lease {
        holder: holder.to_string(),
        until: now + lease_seconds,
    };
    match existing {
        Some(own) if own.holder == holder => Acquired::AlreadyHeld { lease },
        _ if held >= limit => Acquired::Full { held },
        _ => Acquired::Taken { lease },
    }
}

/// What [`release`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// Delete the lease and write the count one lower (conditional: the lease is there).
    Given,
    /// The holder holds no slot (given back already, or reclaimed): nothing to write.
    NotHeld,
}

/// Gives `holder`'s slot back, given the holder's lease as it is.
pub fn release(existing: Option<&Lease>, holder: &str) -> Released {
    match existing {
        Some(own) if own.holder == holder => Released::Given,
        _ => Released::NotHeld,
    }
}

/// The leases whose holders are presumed crashed at `now`: run out, so a sweeper gives them
/// back ([`release`] by the holder's id, conditional on the lease read being unchanged, so a
/// holder that renewed meanwhile keeps its slot).
pub fn reclaimable(leases: &[Lease], now: i64) -> Vec<&Lease> {
    leases.iter().filter(|l| l.until <= now).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// The two records, with the adapters' write conditions.
    #[derive(Default)]
    struct Semaphore {
        held: u32,
        leases: BTreeMap<String, Lease>,
    }

    impl Semaphore {
        fn acquire(&mut self, holder: &str, limit: u32, now: i64) -> bool {
            match acquire(self.held, self.leases.get(holder), holder, limit, now, 60) {
                Acquired::Taken { lease } => {
                    self.held += 1;
                    self.leases.insert(holder.to_string(), lease);
                    true
                }
                Acquired::AlreadyHeld { lease } => {
                    self.leases.insert(holder.to_string(), lease);
                    true
                }
                Acquired::Full { .. } => false,
            }
        }

        fn release(&mut self, holder: &str) {
            if release(self.leases.get(holder), holder) == Released::Given {
                self.held -= 1;
                self.leases.remove(holder);
            }
        }

        fn sweep(&mut self, now: i64) {
            let expired: Vec<String> =
                reclaimable(&self.leases.values().cloned().collect::<Vec<_>>(), now)
                    .into_iter()
                    .map(|l| l.holder.clone())
                    .collect();
            for holder in expired {
                self.release(&holder);
            }
        }
    }

    #[test]
    fn a_slot_is_taken_once_per_holder_and_refused_when_all_are_held() {
        let mut s = Semaphore::default();
        assert!(s.acquire("op-a", 2, 0));
        assert!(s.acquire("op-a", 2, 5)); // a retry: the same slot, renewed
        assert_eq!((s.held, s.leases["op-a"].until), (1, 65));
        assert!(s.acquire("op-b", 2, 5));
        assert!(!s.acquire("op-c", 2, 5));
        assert!(
            s.acquire("op-b", 2, 6),
            "a holder keeps its slot when all are held"
        );
        s.release("op-a");
        s.release("op-a"); // a repeated give-back changes nothing
        assert_eq!(s.held, 1);
        assert!(s.acquire("op-c", 2, 7));
    }

    #[test]
    fn a_crashed_holders_slot_comes_back_after_its_lease_and_not_before() {
        let mut s = Semaphore::default();
        assert!(s.acquire("op-crashed", 1, 0));
        s.sweep(59);
        assert!(!s.acquire("op-next", 1, 59));
        s.sweep(60);
        assert!(s.acquire("op-next", 1, 60));
        // The crashed holder's late give-back cannot free the slot it no longer holds.
        s.release("op-crashed");
        assert_eq!((s.held, s.leases.len()), (1, 1));
    }

    #[test]
    fn whatever_the_order_of_takes_gives_crashes_and_sweeps_the_count_equals_the_leases() {
        // A small deterministic generator drives 20 holders through 10,000 steps.
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (limit, mut s, mut now) = (5, Semaphore::default(), 0i64);
        for _ in 0..10_000 {
            now += next(10) as i64;
            let holder = format!("op-{}", next(20));
            match next(4) {
                0 | 1 => {
                    s.acquire(&holder, limit, now);
                }
                2 => s.release(&holder),
                _ => s.sweep(now),
            }
            assert_eq!(s.held as usize, s.leases.len());
            assert!(s.held <= limit);
        }
    }
}
