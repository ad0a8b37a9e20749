use super::quota::{quota_bound_seconds, Pacer, SlidingWindow};
use super::*;

const PACED: Design = Design::Paced {
    max_late: 0.05,
    job_slots: 500,
    ingest: None,
};

/// The paced design behind ingest as deployed.
fn as_deployed() -> Design {
    behind_ingest(Ingest::deployed().batches)
}

/// The paced design behind ingest with `batches` invocations at most.
fn behind_ingest(batches: usize) -> Design {
    Design::Paced {
        max_late: 0.05,
        job_slots: 500,
        ingest: Some(Ingest {
            batches,
            ..Ingest::deployed()
        }),
    }
}

#[test]
fn aws_side_refuses_the_call_past_the_quota_within_a_second() {
    let mut window = SlidingWindow::new(3);
    assert!(window.call(0.0) && window.call(0.1) && window.call(0.2));
    assert!(!window.call(0.9));
    assert!(window.call(1.0)); // the call at 0.0 is a second old
    assert_eq!((window.admitted, window.refused, window.peak), (4, 1, 3));
}

#[test]
fn paced_calls_landing_up_to_max_late_after_their_slot_never_exceed_the_quota() {
    for (quota, max_late) in [(25, 0.05), (15, 0.05), (25, 0.1), (5, 0.2)] {
        let mut pacer = Pacer::new(Pacer::safe_rate(quota, max_late), max_late);
        let mut rng = Rng::new(7);
        let mut landings: Vec<f64> = (0..20_000)
            .map(|_| pacer.slot(0.0) + rng.uniform() * max_late)
            .collect();
        landings.sort_by(f64::total_cmp);
        let mut window = SlidingWindow::new(quota);
        for t in landings {
            window.call(t);
        }
        assert_eq!(window.refused, 0, "quota {quota}, max_late {max_late}");
        assert_eq!(window.peak, quota, "the pacer uses the whole quota");
    }
}

#[test]
fn pacing_at_the_quota_itself_is_refused_once_calls_land_late() {
    // What the safe rate guards against: slots at the full quota, calls a little late.
    let mut pacer = Pacer::new(25.0, 0.05);
    let mut rng = Rng::new(7);
    let mut landings: Vec<f64> = (0..20_000)
        .map(|_| pacer.slot(0.0) + rng.uniform() * 0.05)
        .collect();
    landings.sort_by(f64::total_cmp);
    let mut window = SlidingWindow::new(25);
    for t in landings {
        window.call(t);
    }
    assert!(window.refused > 0);
}

#[test]
fn a_burst_of_1000_one_page_documents_paced_meets_the_quotas_and_the_target() {
    let report = simulate(&burst(1000), PACED, Quotas::AWS_US_EAST_1, 1);
    report.print("burst of 1000, paced");
    assert_eq!(report.documents, 1000);
    assert_eq!(report.failed, 0);
    assert_eq!(report.quota_errors, 0);
    assert!(report.peak_detect <= 25);
    assert!(
        report.completed_at <= 1.15 * report.ideal,
        "{:.1} s against an ideal of {:.1} s",
        report.completed_at,
        report.ideal
    );
}

#[test]
fn ingest_as_deployed_keeps_the_pacer_busy_through_a_burst() {
    // Five invocations of ten uploads hold at most 50 turns, 2.2 s of turns at AWS's read
    // quota: within the 5 s horizon, so every upload of a batch gets its turn, and the pacer
    // is never idle while uploads wait.
    let ideal = simulate(&burst(1000), PACED, Quotas::AWS_US_EAST_1, 1);
    let report = simulate(&burst(1000), as_deployed(), Quotas::AWS_US_EAST_1, 1);
    report.print("burst of 1000, behind ingest as deployed");
    assert_eq!((report.failed, report.quota_errors), (0, 0), "{report:?}");
    assert_eq!(report.requeued, 0, "{report:?}");
    assert_eq!(report.peak_ingest, Ingest::deployed().batches);
    assert!(
        report.completed_at <= 1.02 * ideal.completed_at,
        "{:.1} s behind ingest against {:.1} s for a drainer that holds nothing",
        report.completed_at,
        ideal.completed_at
    );
    assert!(report.completed_at <= 1.15 * report.ideal, "{report:?}");
}

#[test]
fn behind_ingest_a_one_page_read_waits_only_for_the_slot_its_start_booked() {
    // Ingest books each one-page read's slot when it starts the execution, a read-ahead before
    // it, so the OCR step waits out the rest of the read-ahead, not a queue of reads. (With a
    // pacer for the starts and another for the reads at the same rate, in series, it waited
    // 1.0 s p50 and 2.0 s p95 here; on LocalStack, where calls come later, that queue stood
    // near the horizon: 5.5 s a read at p50, bench-scale.)
    let report = simulate(&burst(1000), as_deployed(), Quotas::AWS_US_EAST_1, 1);
    report.print("burst of 1000, behind ingest as deployed: the reads' wait");
    assert_eq!((report.failed, report.quota_errors), (0, 0), "{report:?}");
    assert!(
        report.read_wait_p50 > 0.0,
        "the reads waited for their slots: {report:?}"
    );
    assert!(report.read_wait_p95 <= read_ahead(), "{report:?}");
}

#[test]
fn more_invocations_than_the_horizon_has_turns_for_send_uploads_back_and_lose_turns() {
    // Twenty invocations of ten want 200 turns at once; the 5 s horizon holds 113 at 22.7 a
    // second. The rest go back to the queue for 5 to 30 s, and turns that come while they are
    // away go unused.
    let deployed = simulate(&burst(1000), as_deployed(), Quotas::AWS_US_EAST_1, 1);
    let report = simulate(&burst(1000), behind_ingest(20), Quotas::AWS_US_EAST_1, 1);
    report.print("burst of 1000, behind ingest with 20 invocations");
    assert_eq!((report.failed, report.quota_errors), (0, 0), "{report:?}");
    assert!(report.requeued > 100, "{report:?}");
    assert!(
        report.completed_at > 1.1 * deployed.completed_at,
        "{:.1} s with 20 invocations against {:.1} s with 5",
        report.completed_at,
        deployed.completed_at
    );
}

#[test]
fn the_local_bench_setting_loses_little_to_the_design_itself() {
    // `make bench-scale` on one-page documents: one read a second (slots 1.1 s apart for 50 ms
    // of lateness and 50 of jitter), LocalStack's one poller per mapping, which waits a second
    // after each batch. What the design loses there by itself: the pacer's room, and the turns
    // that pass while the poller waits; not this machine's slow invocations and late reads.
    let local = Quotas {
        detect_tps: 1,
        start_tps: 1,
        get_tps: 1,
        max_jobs: 5,
    };
    let design = Design::Paced {
        max_late: 0.1,
        job_slots: 5,
        ingest: Some(Ingest {
            batches: 1,
            poll_gap: 1.0,
            ..Ingest::deployed()
        }),
    };
    let report = simulate(&burst(300), design, local, 1);
    report.print("burst of 300 at one read a second, LocalStack's poller");
    assert_eq!((report.failed, report.quota_errors), (0, 0), "{report:?}");
    assert!(
        report.requeued > 0,
        "the horizon holds five turns: {report:?}"
    );
    assert!(report.completed_at <= 1.15 * report.ideal, "{report:?}");
}

#[test]
fn the_same_burst_without_backpressure_loses_documents_to_throttling() {
    let report = simulate(&burst(1000), Design::Naive, Quotas::AWS_US_EAST_1, 1);
    report.print("burst of 1000, naive");
    assert!(report.quota_errors > 1000, "{report:?}");
    assert!(report.failed > 0, "{report:?}");
}

#[test]
fn multi_page_documents_never_run_more_jobs_than_the_semaphore_allows() {
    let docs: Vec<Doc> = (0..2000)
        .map(|i| Doc {
            arrives: i as f64 * 0.001,
            pages: 2 + (i % 5) as u32,
        })
        .collect();
    let design = Design::Paced {
        max_late: 0.05,
        job_slots: 40,
        ingest: None,
    };
    let report = simulate(&docs, design, Quotas::AWS_US_EAST_1, 3);
    assert_eq!((report.failed, report.quota_errors), (0, 0), "{report:?}");
    assert_eq!(report.peak_jobs, 40);
    assert!(report.peak_start <= 15 && report.peak_get <= 25);
}

#[test]
fn a_day_of_a_million_documents_paced_loses_none_and_exceeds_no_quota() {
    let report = simulate(
        &day(1_000_000, 11),
        as_deployed(),
        Quotas::AWS_US_EAST_1,
        11,
    );
    report.print("a day of 1,000,000, paced behind ingest as deployed");
    assert_eq!(report.documents, 1_000_000);
    assert_eq!((report.failed, report.quota_errors), (0, 0));
    assert!(report.peak_detect <= 25 && report.peak_start <= 15 && report.peak_get <= 25);
    assert_eq!(report.peak_ingest, Ingest::deployed().batches);
    // Every document's OCR ends the same day (the busy hours' backlog drains in the evening).
    assert!(report.completed_at < 24.0 * 3600.0, "{report:?}");
}

#[test]
fn the_quota_bound_ideal_is_set_by_the_rate_or_by_the_job_limit_whichever_binds() {
    // The rate binds: 1,000 starts at 1 a second, the last at 999 s, then its 2 s job.
    assert_eq!(quota_bound_seconds(1000, 1, 5, 2.0), 1001.0);
    // Two a second: the last start at 499 s.
    assert_eq!(quota_bound_seconds(1000, 2, 5, 2.0), 501.0);
    // The jobs bind: 2 at once, 10 s each, 10 starts a second: five rounds of two.
    assert_eq!(quota_bound_seconds(10, 10, 2, 10.0), 50.0);
    assert_eq!(quota_bound_seconds(0, 1, 1, 2.0), 0.0);
}
