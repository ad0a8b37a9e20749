//! The two sides of a rate quota in the simulation: AWS's (a sliding one-second window that
//! refuses a call past the quota, as our local Textract counts) and the design's (a pacer that
//! hands out start times spaced `1 / rate` apart, so callers call at their slot, never in a burst).

use std::collections::VecDeque;

/// AWS's side: at most `limit` calls in any one-second window ending at a call.
#[derive(Debug, Clone)]
pub struct SlidingWindow {
    pub limit: usize,
    calls: VecDeque<f64>,
    /// Calls admitted and refused, and the most admitted within one second.
    pub admitted: usize,
    pub refused: usize,
    pub peak: usize,
}

impl SlidingWindow {
    pub fn new(limit: usize) -> Self {
        SlidingWindow {
            limit,
            calls: VecDeque::new(),
            admitted: 0,
            refused: 0,
            peak: 0,
        }
    }

    /// A call at `now` (calls come in time order): admitted, or refused past the quota.
    pub fn call(&mut self, now: f64) -> bool {
        while self.calls.front().is_some_and(|&t| t <= now - 1.0) {
            self.calls.pop_front();
        }
        if self.calls.len() >= self.limit {
            self.refused += 1;
            return false;
        }
        self.calls.push_back(now);
        self.admitted += 1;
        self.peak = self.peak.max(self.calls.len());
        true
    }
}

/// The design's side: start slots `1 / rate` apart (kept in one DynamoDB item, advanced by a
/// conditional write); a caller that reaches its slot later than `max_late` gives it up and
/// asks again, so every call lands within `max_late` of its slot.
#[derive(Debug, Clone)]
pub struct Pacer {
    pub rate: f64,
    pub max_late: f64,
    next: f64,
}

impl Pacer {
    pub fn new(rate: f64, max_late: f64) -> Self {
        Pacer {
            rate,
            max_late,
            next: 0.0,
        }
    }

    /// The next free slot at or after `now`, taken.
    pub fn slot(&mut self, now: f64) -> f64 {
        let slot = self.next.max(now);
        self.next = slot + 1.0 / self.rate;
        slot
    }

    /// The next free slot at or after `now` if it is within `horizon` of `now`, taken; `None`
    /// takes nothing (ingest's pacer: a caller beyond the horizon comes back later).
    pub fn turn(&mut self, now: f64, horizon: f64) -> Option<f64> {
        (self.next.max(now) - now <= horizon).then(|| self.slot(now))
    }

    /// The rate that keeps any one-second window within `quota` calls when each call lands up
    /// to `max_late` after its slot: the calls in a window `(t - 1, t]` had their slots in
    /// `(t - 1 - max_late, t]`, which holds at most `ceil(rate * (1 + max_late))` slots.
    pub fn safe_rate(quota: usize, max_late: f64) -> f64 {
        quota as f64 / (1.0 + max_late)
    }
}

/// The time (s) the quotas alone force on `jobs_total` one-page jobs (or synchronous reads, with
/// `max_jobs` as many: none holds a job) asked for at once: the k-th no sooner than second
/// ⌊k / tps⌋ (no one-second window holds more than `tps`) and no sooner than the end of the job
/// `max_jobs` before it (no more than `max_jobs` at once), each `job_seconds` long. `make
/// bench-scale` measures its completion against it.
pub fn quota_bound_seconds(
    jobs_total: usize,
    tps: usize,
    max_jobs: usize,
    job_seconds: f64,
) -> f64 {
    let (tps, max_jobs) = (tps.max(1), max_jobs.max(1));
    let mut ends: Vec<f64> = Vec::with_capacity(jobs_total);
    for k in 0..jobs_total {
        let by_rate = (k / tps) as f64;
        let by_slot = k.checked_sub(max_jobs).map_or(0.0, |j| ends[j]);
        ends.push(by_rate.max(by_slot) + job_seconds);
    }
    ends.last().copied().unwrap_or(0.0)
}
