//! Start slots for one rate quota. The record holds the next free slot and a version; taking a
//! slot is a read, [`take`], and a write conditional on the version read (a concurrent taker
//! makes it fail, and the caller reads again).

use serde::{Deserialize, Serialize};

/// How slots are spaced for one quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Milliseconds between two slots.
    pub interval_ms: i64,
    /// How late after its slot a call may still land (ms); a later caller takes a new slot.
    pub max_late_ms: i64,
    /// How far ahead of now a slot is handed out (ms); past it the caller is told to come back.
    pub horizon_ms: i64,
}

impl Pace {
    /// The spacing that keeps any one-second window within `per_second` calls when each call
    /// lands up to `max_late_ms` after its slot: the calls of a window `(t - 1 s, t]` had their
    /// slots in `(t - 1 s - max_late, t]`, which holds at most `ceil(span / interval)` slots.
    pub fn for_quota(per_second: u32, max_late_ms: i64, horizon_ms: i64) -> Pace {
        let span = 1000 + max_late_ms.max(0);
        // The smallest whole interval with span / interval <= per_second.
        let interval_ms = (span + i64::from(per_second.max(1)) - 1) / i64::from(per_second.max(1));
        Pace {
            interval_ms,
            max_late_ms: max_late_ms.max(0),
            horizon_ms,
        }
    }

    /// The calls per second this pace admits at most.
    pub fn rate(&self) -> f64 {
        1000.0 / self.interval_ms as f64
    }
}

/// The pacer's record: the next free slot (unix ms) and the version of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PacerState {
    /// The next free slot (unix ms).
    pub next_ms: i64,
    /// Counts the writes; each write is conditional on the one it read.
    pub version: u64,
}

/// What [`take`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// The slot at `at_ms` is the caller's once `state` is written (conditional on the version
    /// read being `state.version - 1`, or on no record for version 1).
    Slot {
        /// When the caller may call (unix ms).
        at_ms: i64,
        /// The record to write.
        state: PacerState,
    },
    /// Every slot within the horizon is taken: come back at `retry_at_ms` (nothing written).
    Busy {
        /// When a slot within the horizon may be free (unix ms).
        retry_at_ms: i64,
    },
}

/// The next free slot at or after `now_ms` under `pace`, given the record read (`None`: none
/// yet).
pub fn take(read: Option<&PacerState>, pace: &Pace, now_ms: i64) -> Taken {
    let (next, version) = read.map_or((now_ms, 0), |s| (s.next_ms, s.version));
    let at_ms = next.max(now_ms);
    if at_ms - now_ms > pace.horizon_ms {
        return Taken::Busy {
            retry_at_ms: at_ms - pace.horizon_ms,
        };
    }
    Taken::Slot {
        at_ms,
        state: PacerState {
            next_ms: at_ms + pace.interval_ms,
            version: version + 1,
        },
    }
}

/// Whether a caller at `now_ms` may still call in the slot at `slot_ms`: not before it, and not
/// later than the pace allows (a later caller takes a new slot).
pub fn usable(slot_ms: i64, now_ms: i64, pace: &Pace) -> bool {
    now_ms >= slot_ms && now_ms - slot_ms <= pace.max_late_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_keeps_late_calls_within_the_quota_whatever_their_lateness() {
        assert_eq!(Pace::for_quota(25, 50, 5000).interval_ms, 42); // 1050 / 25 = 42
        assert_eq!(Pace::for_quota(15, 50, 5000).interval_ms, 70);
        assert_eq!(Pace::for_quota(25, 0, 5000).interval_ms, 40);
        for (quota, late) in [(25, 50), (15, 50), (25, 100), (7, 20), (1, 0)] {
            let pace = Pace::for_quota(quota, late, 600_000);
            let mut state = None;
            let mut slots = Vec::new();
            for _ in 0..500 {
                let Taken::Slot { at_ms, state: s } = take(state.as_ref(), &pace, 0) else {
                    panic!("busy within the horizon");
                };
                state = Some(s);
                slots.push(at_ms);
            }
            // A call lands anywhere in [slot, slot + max_late]; AWS counts the calls landed in
            // (t - 1 s, t]. The most that can land in one such window are the slots in
            // (t - 1 s - max_late, t]: at every t, no more than the quota.
            let last = *slots.last().unwrap();
            for t in 0..=last + 1000 + late {
                let can_land = slots
                    .iter()
                    .filter(|&&s| s > t - 1000 - late && s <= t)
                    .count();
                assert!(
                    can_land <= quota as usize,
                    "quota {quota}, late {late}, t {t}"
                );
            }
            // And the pace uses the quota: some window holds that many.
            let most = (0..=last)
                .map(|t| slots.iter().filter(|&&s| s > t - 1000 && s <= t).count())
                .max();
            assert!(most >= Some(quota as usize * 1000 / (1000 + late as usize)));
        }
    }

    #[test]
    fn slots_follow_each_other_or_start_now_when_the_pacer_is_idle() {
        let pace = Pace::for_quota(25, 50, 5000);
        let Taken::Slot { at_ms, state } = take(None, &pace, 1_000) else {
            panic!()
        };
        assert_eq!((at_ms, state.next_ms, state.version), (1_000, 1_042, 1));
        let Taken::Slot { at_ms, state } = take(Some(&state), &pace, 1_010) else {
            panic!()
        };
        assert_eq!((at_ms, state.version), (1_042, 2));
        // Idle for a while: the next slot is now, not in the past.
        let Taken::Slot { at_ms, .. } = take(Some(&state), &pace, 9_000) else {
            panic!()
        };
        assert_eq!(at_ms, 9_000);
    }

    #[test]
    fn past_the_horizon_the_caller_is_told_when_to_come_back_and_nothing_is_taken() {
        let pace = Pace::for_quota(25, 50, 2_000);
        let state = PacerState {
            next_ms: 10_000,
            version: 7,
        };
        assert_eq!(
            take(Some(&state), &pace, 7_000),
            Taken::Busy { retry_at_ms: 8_000 }
        );
        assert!(matches!(
            take(Some(&state), &pace, 8_000),
            Taken::Slot { at_ms: 10_000, .. }
        ));
    }

    #[test]
    fn a_slot_is_usable_from_its_time_to_max_late_after() {
        let pace = Pace::for_quota(25, 50, 2_000);
        assert!(!usable(1_000, 999, &pace));
        assert!(usable(1_000, 1_000, &pace));
        assert!(usable(1_000, 1_050, &pace));
        assert!(!usable(1_000, 1_051, &pace));
    }
}
