//! How many bytes of uploads one process holds at once. Ingest reads an upload whole (its hash
//! and its page count) and ingests a batch's uploads at the same time (up to ten, the event
//! source mapping's batch), so ten uploads at the size limit would need ten times the limit.
//! Each read takes its size from this budget first and gives it back when the bytes are
//! dropped, before the run's start waits for its turn (`steps::ingest`): large uploads are read
//! one after another, small ones all at once, within the function's memory (less what
//! [`RESERVED_MIB`] keeps for the rest).

use tokio::sync::{Semaphore, SemaphorePermit};

/// The budget counts KiB (a semaphore's permits are `u32`s: 4 TiB at most).
const KIB: u64 = 1024;

/// What a process needs besides the uploads it holds, in MiB. The release functions' peak RSS
/// with nothing large held is 13 to 19 MiB (`make bench-local`), a debug build's about 30; but
/// the allocator keeps some of what large reads freed. A debug ingest of 128 MB given batches
/// of ten uploads at the size limit peaked at 118 MB in one batch, then 135 MB in the next,
/// with 48 reserved (a budget of 80 MiB: four such uploads at once); with 96 reserved (32 MiB:
/// one at a time, small ones still many at once) it stayed at 74 MB over three such batches.
pub const RESERVED_MIB: u64 = 96;

/// A process's budget of bytes held.
#[derive(Debug)]
pub struct ReadBudget {
    permits: Semaphore,
    kib: u32,
}

impl ReadBudget {
    /// A budget of `bytes` (at least 1 KiB).
    pub fn new(bytes: u64) -> Self {
        let kib = u32::try_from(bytes.div_ceil(KIB))
            .unwrap_or(u32::MAX)
            .max(1);
        Self {
            permits: Semaphore::new(kib as usize),
            kib,
        }
    }

    /// The budget of a function of `memory_mib` (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`): its memory
    /// less [`RESERVED_MIB`], and never less than `largest` (the largest upload accepted, which
    /// must fit alone however small the function).
    pub fn for_memory(memory_mib: u64, largest: u64) -> Self {
        let free = memory_mib.saturating_sub(RESERVED_MIB) * KIB * KIB;
        Self::new(free.max(largest))
    }

    /// No bound that matters (the tests of other things).
    pub fn unbounded() -> Self {
        Self::new(u64::from(u32::MAX) * KIB)
    }

    /// The budget, in bytes.
    pub fn bytes(&self) -> u64 {
        u64::from(self.kib) * KIB
    }

    /// Waits until `bytes` fit beside what is held, and holds them until the permit is
    /// dropped. More than the whole budget waits for all of it.
    pub async fn hold(&self, bytes: u64) -> SemaphorePermit<'_> {
        let kib = u32::try_from(bytes.div_ceil(KIB))
            .unwrap_or(u32::MAX)
            .clamp(1, self.kib);
        self.permits
            .acquire_many(kib)
            .await
            .expect("the budget's semaphore is never closed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_that_fit_together_are_held_at_once_and_a_larger_one_waits_for_room() {
        let budget = ReadBudget::new(100 * KIB);
        let a = budget.hold(40 * KIB).await;
        let _b = budget.hold(60 * KIB).await;
        let full = std::time::Duration::from_millis(50);
        assert!(
            tokio::time::timeout(full, budget.hold(1)).await.is_err(),
            "the budget is full: a read waits"
        );
        drop(a);
        let _c = budget.hold(1).await;
        assert_eq!(budget.permits.available_permits(), 39);
    }

    #[tokio::test]
    async fn an_upload_larger_than_the_budget_takes_all_of_it_instead_of_waiting_forever() {
        let budget = ReadBudget::new(10 * KIB);
        let all = budget.hold(50 * KIB).await;
        assert_eq!(budget.permits.available_permits(), 0);
        drop(all);
        assert_eq!(budget.permits.available_permits(), 10);
    }

    #[test]
    fn a_functions_budget_is_its_memory_less_the_reserve_and_never_below_the_largest_upload() {
        let mib = KIB * KIB;
        assert_eq!(ReadBudget::for_memory(128, 20 * mib).bytes(), 32 * mib);
        assert_eq!(ReadBudget::for_memory(64, 20 * mib).bytes(), 20 * mib);
        assert_eq!(ReadBudget::for_memory(0, 0).bytes(), KIB);
    }
}
