use super::*;

/// A caller's whole take against a record that no one else writes meanwhile: what an adapter
/// does, one claim and one write at a time.
fn take(record: &mut Option<i64>, pace: &Pace, now_ms: i64) -> (Taken, usize) {
    let mut seen = Seen::Unknown;
    for writes in 1..=MAX_WRITES {
        let claimed = match claim(seen, pace, now_ms) {
            Ok(claimed) => claimed,
            Err(busy) => return (busy, writes - 1),
        };
        match apply(&claimed, *record) {
            Ok((at_ms, next)) => {
                *record = Some(next);
                return (Taken::Slot { at_ms }, writes);
            }
            Err(now_seen) => seen = now_seen,
        }
    }
    panic!("more than {MAX_WRITES} writes with the clock standing still");
}

fn slot(taken: Taken) -> i64 {
    match taken {
        Taken::Slot { at_ms } => at_ms,
        Taken::Busy { .. } => panic!("busy within the horizon"),
    }
}

#[test]
fn the_interval_keeps_late_calls_within_the_quota_whatever_their_lateness() {
    assert_eq!(Pace::for_quota(25, 50, 0, 5000).interval_ms, 42); // 1050 / 25 = 42
    assert_eq!(Pace::for_quota(15, 50, 0, 5000).interval_ms, 70);
    assert_eq!(Pace::for_quota(25, 0, 0, 5000).interval_ms, 40);
    assert_eq!(Pace::for_quota(2, 50, 100, 5000).interval_ms, 575);
    for (quota, late, transit) in [
        (25, 50, 0),
        (15, 50, 50),
        (25, 100, 0),
        (7, 20, 30),
        (1, 0, 0),
    ] {
        let pace = Pace::for_quota(quota, late, transit, 600_000);
        let mut record = None;
        let slots: Vec<i64> = (0..500)
            .map(|_| slot(take(&mut record, &pace, 0).0))
            .collect();
        // A call arrives anywhere in [slot, slot + max_late + transit]; AWS counts the calls
        // arrived in (t - 1 s, t]. The most that can arrive in one such window are the slots
        // in (t - 1 s - max_late - transit, t]: at every t, no more than the quota.
        let spread = late + transit;
        let last = *slots.last().unwrap();
        for t in 0..=last + 1000 + spread {
            let can_land = slots
                .iter()
                .filter(|&&s| s > t - 1000 - spread && s <= t)
                .count();
            assert!(
                can_land <= quota as usize,
                "quota {quota}, spread {spread}, t {t}"
            );
        }
        // And the pace uses the quota: some window holds that many.
        let most = (0..=last)
            .map(|t| slots.iter().filter(|&&s| s > t - 1000 && s <= t).count())
            .max();
        assert!(most >= Some(quota as usize * 1000 / (1000 + spread as usize)));
    }
}

#[test]
fn a_busy_pacer_costs_one_write_and_an_idle_one_two() {
    let pace = Pace::for_quota(25, 50, 0, 5000);
    let mut record = None;
    // No record: the guess (advance) is refused, the restart takes `now`.
    assert_eq!(
        take(&mut record, &pace, 1_000),
        (Taken::Slot { at_ms: 1_000 }, 2)
    );
    assert_eq!(record, Some(1_042));
    // Busy: one advance.
    assert_eq!(
        take(&mut record, &pace, 1_010),
        (Taken::Slot { at_ms: 1_042 }, 1)
    );
    assert_eq!(
        take(&mut record, &pace, 1_020),
        (Taken::Slot { at_ms: 1_084 }, 1)
    );
    // Idle for a while: the next slot is now, not in the past.
    assert_eq!(
        take(&mut record, &pace, 9_000),
        (Taken::Slot { at_ms: 9_000 }, 2)
    );
    assert_eq!(record, Some(9_042));
}

#[test]
fn past_the_horizon_the_caller_is_told_when_to_come_back_and_nothing_is_written() {
    let pace = Pace::for_quota(25, 50, 0, 2_000);
    let mut record = Some(10_000);
    // The guessed advance is refused (its condition holds the horizon), and no second write.
    assert_eq!(
        take(&mut record, &pace, 7_000),
        (Taken::Busy { retry_at_ms: 8_000 }, 1)
    );
    assert_eq!(record, Some(10_000));
    assert_eq!(
        take(&mut record, &pace, 8_000),
        (Taken::Slot { at_ms: 10_000 }, 1)
    );
}

/// A deterministic shuffle (xorshift), so a failure names its seed.
fn order(seed: u64, n: usize) -> Vec<usize> {
    let mut x = seed.max(1);
    let mut v: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

#[test]
fn callers_racing_with_stale_views_take_distinct_slots_spaced_by_the_interval() {
    let pace = Pace::for_quota(15, 50, 50, 5_000);
    for seed in 1..200u64 {
        // 40 callers, each at its own `now` (a burst over 300 ms, after an idle pacer whose
        // record is long past), each sending its writes when the shuffle says, with the view
        // its last refusal gave it.
        let mut record = Some(-10_000);
        let nows: Vec<i64> = (0..40).map(|i| (i * 7919 % 300) as i64).collect();
        let mut seen = vec![Seen::Unknown; nows.len()];
        let mut writes = vec![0usize; nows.len()];
        let mut outcome: Vec<Option<Taken>> = vec![None; nows.len()];
        let mut round = 0;
        while outcome.iter().any(Option::is_none) {
            round += 1;
            assert!(round < 100, "seed {seed}: no progress");
            for i in order(seed * 1_000 + round, nows.len()) {
                if outcome[i].is_some() {
                    continue;
                }
                let claimed = match claim(seen[i], &pace, nows[i]) {
                    Ok(claimed) => claimed,
                    Err(busy) => {
                        outcome[i] = Some(busy);
                        continue;
                    }
                };
                writes[i] += 1;
                match apply(&claimed, record) {
                    Ok((at_ms, next)) => {
                        record = Some(next);
                        outcome[i] = Some(Taken::Slot { at_ms });
                    }
                    Err(s) => seen[i] = s,
                }
            }
        }
        let mut slots: Vec<i64> = Vec::new();
        for (i, taken) in outcome.iter().enumerate() {
            let at = slot(taken.expect("decided"));
            assert!(
                at >= nows[i] && at <= nows[i] + pace.horizon_ms,
                "seed {seed}"
            );
            assert!(
                writes[i] <= 3,
                "seed {seed}: caller {i} wrote {} times",
                writes[i]
            );
            slots.push(at);
        }
        slots.sort();
        for pair in slots.windows(2) {
            assert!(
                pair[1] - pair[0] >= pace.interval_ms,
                "seed {seed}: {pair:?}"
            );
        }
    }
}

#[test]
fn a_slot_is_usable_from_its_time_to_max_late_after() {
    let pace = Pace::for_quota(25, 50, 0, 2_000);
    assert!(!usable(1_000, 999, &pace));
    assert!(usable(1_000, 1_000, &pace));
    assert!(usable(1_000, 1_050, &pace));
    assert!(!usable(1_000, 1_051, &pace));
}
