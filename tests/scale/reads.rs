//! Where a burst's read slots went (`make bench-scale`): the provider's admitted reads, as the
//! wire log timed them, set against the pacer's interval and against the slot each read's
//! start booked for it (`RunInput::read_at_ms`). The completion's excess over the pacer's own
//! (its interval over a second) is slots no read used: a read that came too late for the slot
//! its start booked and took another turn (the booked one unused), or a stretch with no caller
//! waiting at all. Both show as a gap of more than one interval between two reads; the first
//! also as a read far after its booking.

use std::collections::BTreeMap;

use docket_core::admission::{Quotas, DETECT_TEXT};
use docket_core::admitted::Rules;
use docket_core::ids::sha256_hex;
use docket_core::model::run::ExecutionInput;

use crate::scale::refusals;
use crate::{metering, util};

/// How the admitted reads were spaced, against the pacer's `interval_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Spacing {
    /// Reads admitted.
    pub reads: usize,
    /// The closest two reads came (ms); a gap under the quota's own spacing is a refusal risk.
    pub min_gap_ms: i64,
    /// The median gap (ms).
    pub median_gap_ms: i64,
    /// Slots between two reads that no read used: each gap's whole intervals beyond its first.
    pub unused_slots: i64,
}

/// The spacing of reads admitted at `at_ms` (unix ms, any order) under slots `interval_ms`
/// apart, or `None` with fewer than two reads.
pub fn spacing(at_ms: &[i64], interval_ms: i64) -> Option<Spacing> {
    let mut at = at_ms.to_vec();
    at.sort_unstable();
    let mut gaps: Vec<i64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.is_empty() || interval_ms <= 0 {
        return None;
    }
    let unused_slots = gaps
        .iter()
        .map(|gap| ((gap + interval_ms / 2) / interval_ms - 1).max(0))
        .sum();
    gaps.sort_unstable();
    Some(Spacing {
        reads: at.len(),
        min_gap_ms: gaps[0],
        median_gap_ms: gaps[gaps.len() / 2],
        unused_slots,
    })
}

/// How the reads kept to the slots their starts booked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bookings {
    /// Read within half an interval of its booked slot, and how late after it (ms), sorted.
    pub at_slot_late_ms: Vec<i64>,
    /// Read later, at a turn of its own (the booked slot unused), and how late (ms), sorted.
    pub later_ms: Vec<i64>,
    /// Read earlier than half an interval before its booked slot (none expected).
    pub early: usize,
}

/// Whether a read `late_ms` after its booked slot came at a later turn of its own: more than
/// half an interval after it.
fn took_another_turn(late_ms: i64, interval_ms: i64) -> bool {
    late_ms > interval_ms / 2
}

/// Sorts each `(booked slot, admitted read)` pair (unix ms) into [`Bookings`].
pub fn bookings(pairs: &[(i64, i64)], interval_ms: i64) -> Bookings {
    let mut out = Bookings::default();
    for &(booked, read) in pairs {
        let late = read - booked;
        if late < -interval_ms / 2 {
            out.early += 1;
        } else if took_another_turn(late, interval_ms) {
            out.later_ms.push(late);
        } else {
            out.at_slot_late_ms.push(late);
        }
    }
    out.at_slot_late_ms.sort_unstable();
    out.later_ms.sort_unstable();
    out
}

/// A run's booked read, from its execution's input and history.
#[derive(Debug, Clone, PartialEq)]
pub struct Booked {
    /// The run (its execution's name).
    pub run: String,
    /// The wire log's subject of the run's read: the SHA-256 of the raw object's key.
    pub subject: String,
    /// The read slot its start booked (unix ms).
    pub slot_ms: i64,
    /// When its execution started (unix ms, the engine's clock: this machine's).
    pub started_ms: i64,
    /// When the OCR Task's first attempt began (unix ms), if it did.
    pub ocr_began_ms: Option<i64>,
}

/// The subject and booked slot of an execution's `input` (`None` without a booking).
pub fn booked_read(input: &str) -> Option<(String, i64)> {
    let input: ExecutionInput = serde_json::from_str(input).ok()?;
    let run = input.run;
    Some((sha256_hex(run.raw.key.as_bytes()), run.read_at_ms?))
}

/// `p50 x ms, p99 y ms, max z ms` of `ms` (sorted), or `none`.
fn spread(ms: &[i64]) -> String {
    let ms: Vec<f64> = ms.iter().map(|&m| m as f64).collect();
    match ms.last() {
        Some(max) => format!(
            "p50 {:.0} ms, p99 {:.0} ms, max {max:.0} ms",
            util::percentile(&ms, 0.5),
            util::percentile(&ms, 0.99)
        ),
        None => "none".into(),
    }
}

/// Prints where the read slots went: the admitted reads' spacing against the pacer's
/// interval; how many were read at the slot their start booked (`booked`, matched by the wire
/// log's subject) and how late after it the provider admitted them; and, of those that came
/// too late for it, how late their execution and their OCR Task began against the slot (the
/// start is sent the read-ahead before it); and each read the provider refused, against the
/// reads that filled its second ([`refusals`]). A read is timed when the provider's quota
/// admitted it (`admittedMs`), or else when it was answered less its simulated duration.
pub async fn print(
    tps: usize,
    jitter_ms: u32,
    seconds_per_page: f64,
    mark: &metering::Mark,
    booked: &[Booked],
) {
    let rules = Rules::textract();
    let quotas = Quotas {
        arrival_jitter_ms: jitter_ms,
        ..Quotas::textract_defaults()
    };
    let per_second = u32::try_from(tps).unwrap_or(u32::MAX);
    let interval = rules.pace(per_second, &quotas).interval_ms;
    let duration_ms = (seconds_per_page * 1000.0) as i64;
    let reads: Vec<_> = util::wire_requests("textract", DETECT_TEXT, "")
        .await
        .into_iter()
        .filter(|r| r["atMs"].as_i64().is_some_and(|at| at >= mark.since_ms()))
        .collect();
    let mut read_at: BTreeMap<String, i64> = BTreeMap::new();
    for r in &reads {
        let (Some(answered), Some(subject)) = (r["atMs"].as_i64(), r["subject"].as_str()) else {
            continue;
        };
        if r["status"].as_u64() == Some(200) {
            let at = r["admittedMs"].as_i64().unwrap_or(answered - duration_ms);
            read_at
                .entry(subject.to_string())
                .and_modify(|t| *t = at.min(*t))
                .or_insert(at);
        }
    }
    let times: Vec<i64> = read_at.values().copied().collect();
    if let Some(spacing) = spacing(&times, interval) {
        println!(
            "bench-scale:   reads admitted {}: {} ms apart at the least, {} ms at the median, \
             against the pacer's {interval} ms; slots between them unused: {} ({:.0} s)",
            spacing.reads,
            spacing.min_gap_ms,
            spacing.median_gap_ms,
            spacing.unused_slots,
            (spacing.unused_slots * interval) as f64 / 1000.0
        );
    }
    let mut queued: Vec<i64> = reads
        .iter()
        .filter_map(|r| r["queuedMs"].as_i64())
        .collect();
    queued.sort_unstable();
    println!(
        "bench-scale:   read requests waited in LocalStack from its receipt (when the quota \
         counts them) to the quota's judgment: {}",
        spread(&queued)
    );
    let pairs: Vec<(i64, i64)> = booked
        .iter()
        .filter_map(|b| Some((b.slot_ms, *read_at.get(&b.subject)?)))
        .collect();
    let b = bookings(&pairs, interval);
    println!(
        "bench-scale:   reads at the slot their start booked: {} (admitted after it: {}); at a \
         later turn of their own: {} ({}); early: {}; no booking found: {}",
        b.at_slot_late_ms.len(),
        spread(&b.at_slot_late_ms),
        b.later_ms.len(),
        spread(&b.later_ms),
        b.early,
        read_at.len().saturating_sub(pairs.len())
    );
    // Those that came too late for their booking: when their execution started and their OCR
    // Task began against the slot, and their starts at the wire (how many requests each, how
    // they were answered, and when the first and the last was answered against when the start
    // was due: the slot less the read-ahead).
    let (mut started, mut began, mut first, mut last) = (vec![], vec![], vec![], vec![]);
    let (mut requests, mut answers) = (0, BTreeMap::<String, usize>::new());
    for b in booked {
        let Some(&at) = read_at.get(&b.subject) else {
            continue;
        };
        if !took_another_turn(at - b.slot_ms, interval) {
            continue;
        }
        started.push(b.started_ms - b.slot_ms);
        began.extend(b.ocr_began_ms.map(|ms| ms - b.slot_ms));
        let subject = sha256_hex(b.run.as_bytes());
        let starts = util::wire_requests("stepfunctions", "StartExecution", &subject).await;
        let due = b.slot_ms - rules.read_ahead_ms;
        let at: Vec<i64> = starts.iter().filter_map(|r| r["atMs"].as_i64()).collect();
        first.extend(at.iter().min().map(|t| t - due));
        last.extend(at.iter().max().map(|t| t - due));
        requests += starts.len();
        for r in &starts {
            let answer = r["error"]
                .as_str()
                .map_or(r["status"].to_string(), String::from);
            *answers.entry(answer).or_default() += 1;
        }
    }
    for ms in [&mut started, &mut began, &mut first, &mut last] {
        ms.sort_unstable();
    }
    println!(
        "bench-scale:   of those come too late for their slot, against it: the execution \
         started {}; the OCR Task began {}; their {requests} StartExecution requests \
         ({answers:?}) answered, against when each start was due: the first {}, the last {}",
        spread(&started),
        spread(&began),
        spread(&first),
        spread(&last)
    );
    let slots = booked
        .iter()
        .map(|b| (b.subject.clone(), b.slot_ms))
        .collect();
    let gc = util::localstack_gc(reqwest::Method::GET).await;
    let pauses: Vec<refusals::Pause> = gc["long"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["atMs"].as_i64()?, p["ms"].as_f64()? as i64)))
        .filter(|(at, _)| *at >= mark.since_ms())
        .collect();
    let full = &gc["generations"]["2"];
    println!(
        "bench-scale:   LocalStack's garbage collector: {} full collections since it started \
         ({:.0} ms in all, the longest {:.0} ms); {} pauses of {} ms or more in the burst, {} ms \
         in all; what full collections left alive frozen: {} ({} objects); peak memory {} MB",
        full["count"],
        full["totalMs"].as_f64().unwrap_or_default(),
        full["maxMs"].as_f64().unwrap_or_default(),
        pauses.len(),
        gc["longMs"],
        pauses.iter().map(|(_, ms)| ms).sum::<i64>(),
        gc["freeze"],
        gc["frozen"],
        gc["maxRssMb"]
    );
    refusals::print(&refusals::refusals(&reads, &slots), &pauses, 20);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_of_three_intervals_leaves_two_slots_unused() {
        let s = spacing(&[0, 1_100, 2_200, 5_500, 6_610], 1_100).unwrap();
        assert_eq!(s.reads, 5);
        assert_eq!(s.unused_slots, 2);
        assert_eq!(s.min_gap_ms, 1_100);
        assert_eq!(s.median_gap_ms, 1_110);
    }

    #[test]
    fn reads_a_little_late_or_early_use_every_slot() {
        let s = spacing(&[2_240, 0, 1_160, 3_290], 1_100).unwrap();
        assert_eq!(s.unused_slots, 0);
        assert_eq!(s.min_gap_ms, 1_050);
        assert!(spacing(&[5], 1_100).is_none());
    }

    #[test]
    fn a_read_far_after_its_booking_took_another_turn() {
        let b = bookings(
            &[
                (1_000, 1_020),
                (2_100, 5_400),
                (3_200, 3_190),
                (9_000, 1_000),
            ],
            1_100,
        );
        assert_eq!(b.at_slot_late_ms, vec![-10, 20]);
        assert_eq!(b.later_ms, vec![3_300]);
        assert_eq!(b.early, 1);
    }
}
