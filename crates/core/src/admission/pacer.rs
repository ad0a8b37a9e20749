//! Start slots for one rate quota, taken in one conditional write each (no read first, no
//! version: a busy pacer is never raced for).
//!
//! The record holds the next free slot, `next`. A caller that needs a slot at or after `now`
//! sends one of two writes ([`claim`] chooses; [`apply`] is what the store does with it):
//!
//! - [`Claim::Advance`]: `next += interval`, on condition that `next` lies in
//!   `[now, now + horizon]`; the slot is the `next` it held. Concurrent advances never refuse
//!   each other: each gets the next slot in turn, so a burst costs one write per call.
//! - [`Claim::Restart`]: `next = now + interval`, on condition that there is no record or its
//!   `next` has passed (the pacer was idle); the slot is `now`.
//!
//! A refused write hands back the record as it is ([`Seen`]), from which the next claim is
//! chosen: an idle pacer met by several callers costs the losers of the restart one more write;
//! a `next` past the horizon is [`Taken::Busy`] without a write. Slots are never closer than
//! `interval`: an advance follows the last slot by it, and a restart comes after a `next` that
//! already had. `next` only grows, so one seen earlier is a lower bound of the record's: a
//! caller may choose its first claim from one it remembers ([`Seen::Next`]), and is refused at
//! worst, never given a wrong slot.

/// How slots are spaced for one quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Milliseconds between two slots.
    pub interval_ms: i64,
    /// How late after its slot a call may still be sent (ms); a later caller takes a new slot.
    pub max_late_ms: i64,
    /// How far ahead of now a slot is handed out (ms); past it the caller is told to come back.
    pub horizon_ms: i64,
}

impl Pace {
    /// The spacing that keeps any one-second window at the provider within `per_second` calls
    /// when each call is sent up to `max_late_ms` after its slot and takes up to `transit_ms`
    /// longer to arrive than another: the calls that arrive in a window `(t - 1 s, t]` had their
    /// slots in `(t - 1 s - max_late - transit, t]`, which holds at most
    /// `ceil(span / interval)` slots.
    pub fn for_quota(per_second: u32, max_late_ms: i64, transit_ms: i64, horizon_ms: i64) -> Pace {
        let span = 1000 + max_late_ms.max(0) + transit_ms.max(0);
        let per_second = i64::from(per_second.max(1));
        // The smallest whole interval with span / interval <= per_second.
        let interval_ms = (span + per_second - 1) / per_second;
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

/// What a caller knows of the pacer's record before it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Nothing yet (the first write is a guess: an advance, the busy case).
    Unknown,
    /// There is no record.
    Absent,
    /// The record's next free slot (unix ms), as a refused write handed it back.
    Next(i64),
}

/// The write that takes a slot (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// `next += interval` if `from_ms <= next <= to_ms`; the slot is the old `next`.
    Advance {
        /// The earliest `next` that is a slot for this caller (its `now`).
        from_ms: i64,
        /// The latest (its `now + horizon`).
        to_ms: i64,
        /// The pace's interval.
        interval_ms: i64,
    },
    /// `next = at_ms + interval` if there is no record or `next < at_ms`; the slot is `at_ms`.
    Restart {
        /// The slot: the caller's `now`.
        at_ms: i64,
        /// The pace's interval.
        interval_ms: i64,
    },
}

/// What taking a slot came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// The slot at `at_ms` is the caller's.
    Slot {
        /// When the caller may call (unix ms).
        at_ms: i64,
    },
    /// Every slot within the horizon is taken: come back at `retry_at_ms` (nothing written).
    Busy {
        /// When a slot within the horizon may be free (unix ms).
        retry_at_ms: i64,
    },
}

/// The write for a caller at `now_ms` that has `seen` the record so, or [`Taken::Busy`] (no
/// write) when the record's next slot is past the horizon.
pub fn claim(seen: Seen, pace: &Pace, now_ms: i64) -> Result<Claim, Taken> {
    let advance = Claim::Advance {
        from_ms: now_ms,
        to_ms: now_ms + pace.horizon_ms,
        interval_ms: pace.interval_ms,
    };
    let restart = Claim::Restart {
        at_ms: now_ms,
        interval_ms: pace.interval_ms,
    };
    match seen {
        Seen::Unknown => Ok(advance),
        Seen::Absent => Ok(restart),
        Seen::Next(next) if next < now_ms => Ok(restart),
        Seen::Next(next) if next - now_ms > pace.horizon_ms => Err(Taken::Busy {
            retry_at_ms: next - pace.horizon_ms,
        }),
        Seen::Next(_) => Ok(advance),
    }
}

/// What the store does with `claim` when the record holds `next` (`None`: no record): the slot
/// taken and the record's new `next`, or, when the condition fails, the record as it is. The
/// adapters write these same conditions ([`crate::memory`] by calling this).
pub fn apply(claim: &Claim, next: Option<i64>) -> Result<(i64, i64), Seen> {
    match (*claim, next) {
        (
            Claim::Advance {
                from_ms,
                to_ms,
                interval_ms,
            },
            Some(next),
        ) if (from_ms..=to_ms).contains(&next) => Ok((next, next + interval_ms)),
        (Claim::Restart { at_ms, interval_ms }, next) if next.is_none_or(|n| n < at_ms) => {
            Ok((at_ms, at_ms + interval_ms))
        }
        (_, next) => Err(next.map_or(Seen::Absent, Seen::Next)),
    }
}

/// How many writes a caller sends before it is told to come back: an advance, a restart lost
/// to another caller's, and the advance after it take three; more means the clock moved under
/// the caller (`now` passed `next` between two writes) again and again.
pub const MAX_WRITES: usize = 5;

/// Whether a caller at `now_ms` may still call in the slot at `slot_ms`: not before it, and not
/// later than the pace allows (a later caller takes a new slot).
pub fn usable(slot_ms: i64, now_ms: i64, pace: &Pace) -> bool {
    now_ms >= slot_ms && now_ms - slot_ms <= pace.max_late_ms
}

#[cfg(test)]
mod tests;
