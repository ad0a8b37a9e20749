//! Journal transitions, their refusals, and the compensation plan.

use super::*;

#[test]
fn every_write_moves_the_version_by_one_and_a_repeat_writes_nothing() {
    let j = Journal::new(&run_of("v1"));
    assert_eq!(j.version, 0);
    let claimed = step(&j, Transition::Claim(Effect::EventPublished, event_ids()));
    assert_eq!(claimed.version, 1);
    assert_eq!(
        claimed.entry(Effect::EventPublished).evidence,
        Evidence::Uncertain
    );
    let again = Transition::Claim(Effect::EventPublished, event_ids());
    assert_eq!(claimed.next(&again).unwrap(), None, "a repeated claim");
    let done = published(&j);
    assert_eq!(done.version, 4);
    let ids = done.entry(Effect::EventPublished).ids.clone();
    let repeat = Transition::Settle(Effect::EventPublished, Outcome::Happened(ids));
    assert_eq!(done.next(&repeat).unwrap(), None, "a repeated confirmation");
}

#[test]
fn the_journal_refuses_what_must_never_happen() {
    let j = published(&Journal::new(&run_of("v1")));
    // Confirmed with other ids.
    let other = EffectIds {
        entry_id: Some("entry-2".into()),
        ..event_ids()
    };
    let err = j.next(&Transition::Settle(
        Effect::EventPublished,
        Outcome::Happened(other),
    ));
    assert!(matches!(err, Err(Error::ParametersChanged(_))), "{err:?}");
    // Back from confirmed: by a claim, or by a look-up that found nothing.
    let err = j.next(&Transition::Claim(Effect::EventPublished, event_ids()));
    assert!(
        matches!(&err, Err(Error::Internal(m)) if m.contains("never goes back")),
        "{err:?}"
    );
    let err = j.next(&Transition::Settle(
        Effect::EventPublished,
        Outcome::DidNotHappen,
    ));
    assert!(matches!(err, Err(Error::Internal(_))), "{err:?}");
    // Confirmed without a claim.
    let ids = EffectIds::default();
    let err = j.next(&Transition::Settle(
        Effect::DownstreamRecorded,
        Outcome::Happened(ids),
    ));
    assert!(
        matches!(&err, Err(Error::Internal(m)) if m.contains("never claimed")),
        "{err:?}"
    );
    // Compensating a not-attempted effect, or anything before compensation began.
    let err = j.next(&attempt(Effect::EventPublished, 0));
    assert!(matches!(err, Err(Error::Internal(_))), "{err:?}");
    let j = step(&j, Transition::BeginCompensation("test".into()));
    let err = j.next(&attempt(Effect::DownstreamRecorded, 0));
    assert!(
        matches!(&err, Err(Error::Internal(m)) if m.contains("not-attempted")),
        "{err:?}"
    );
    // No effect is claimed once compensation began.
    let err = j.next(&Transition::Claim(Effect::DownstreamRecorded, event_ids()));
    assert!(matches!(err, Err(Error::FencedOut(_))), "{err:?}");
    // Committed before attempted; finished before the end.
    let err = j.next(&Transition::Committed(Effect::EventPublished));
    assert!(matches!(err, Err(Error::Internal(_))), "{err:?}");
    assert!(matches!(
        j.next(&Transition::Finish),
        Err(Error::Internal(_))
    ));
}

#[test]
fn compensation_plans_reverse_order_with_uncertain_effects_looked_up_first() {
    let j = published(&Journal::new(&run_of("v1")));
    let j = step(
        &j,
        Transition::Claim(Effect::DownstreamRecorded, event_ids()),
    );
    let j = step(
        &j,
        Transition::BeginCompensation("receipt deadline passed".into()),
    );
    let event_id = event_ids().event_id.unwrap();
    let actions: Vec<_> = plan(&j).unwrap().into_iter().map(|p| p.action).collect();
    assert_eq!(
        actions,
        [
            Action::LookUpReceipt {
                event_id: event_id.clone()
            },
            Action::Retract {
                event_id: event_id.clone()
            },
            Action::Restore { previous: None },
        ]
    );
    // The look-up finds nothing: the record is skipped, the rest stays in reverse order.
    let j = step(
        &j,
        Transition::Settle(Effect::DownstreamRecorded, Outcome::DidNotHappen),
    );
    let effects: Vec<_> = plan(&j).unwrap().into_iter().map(|p| p.effect).collect();
    assert_eq!(effects, [Effect::EventPublished, Effect::ResultPromoted]);
    assert_eq!(
        j.entry(Effect::DownstreamRecorded).compensation,
        CompensationStatus::NotRequired
    );
}

#[test]
fn a_compensation_that_keeps_failing_goes_to_its_owner_at_the_bound_and_stops_the_plan() {
    let j = published(&Journal::new(&run_of("v1")));
    let mut j = step(&j, Transition::BeginCompensation("withdrawn".into()));
    let failed = |error| Transition::Failed {
        effect: Effect::EventPublished,
        error,
        max_attempts: 3,
        owner: "ops-oncall".into(),
    };
    for n in 1..=3 {
        // Each attempt right after the last one failed: a failure ends the attempt in flight.
        j = step(&j, attempt(Effect::EventPublished, n - 1));
        // The same failure again records nothing new (the attempt was counted by `Attempt`).
        j = j.next(&failed(ErrorKind::Dependency)).unwrap().unwrap_or(j);
        let e = j.entry(Effect::EventPublished);
        assert_eq!(e.attempts, n);
        let expected = if n < 3 { None } else { Some("ops-oncall") };
        assert_eq!(e.owner.as_deref(), expected, "attempt {n}");
    }
    let e = j.entry(Effect::EventPublished);
    assert_eq!(e.compensation, CompensationStatus::FailedManualReview);
    assert_eq!(e.last_error.as_deref(), Some("Transient.Dependency"));
    assert_eq!(plan(&j).unwrap(), [], "the promotion waits for the owner");
    assert_eq!(
        j.entry(Effect::ResultPromoted).compensation,
        CompensationStatus::Pending
    );
    let j = step(&j, Transition::Finish);
    assert_eq!(j.end, Some(SagaEnd::CompensationFailed));
}

#[test]
fn a_refusal_that_retrying_cannot_change_goes_to_the_owner_at_once() {
    let j = published(&Journal::new(&run_of("v1")));
    let j = step(&j, Transition::BeginCompensation("withdrawn".into()));
    let j = step(&j, attempt(Effect::EventPublished, 0));
    let j = step(
        &j,
        Transition::Failed {
            effect: Effect::EventPublished,
            error: ErrorKind::UnknownReceipt,
            max_attempts: 3,
            owner: "ops".into(),
        },
    );
    let e = j.entry(Effect::EventPublished);
    assert_eq!(
        (e.compensation, e.attempts),
        (CompensationStatus::FailedManualReview, 1)
    );
}

#[test]
fn an_attempt_another_caller_claimed_since_is_refused() {
    let j = published(&Journal::new(&run_of("v1")));
    let j = step(&j, Transition::BeginCompensation("withdrawn".into()));
    let mine = step(&j, attempt(Effect::EventPublished, 0));
    // A concurrent caller planned from the same journal: it saw 0 attempts, there is 1 now.
    let theirs = mine.next(&attempt(Effect::EventPublished, 0));
    assert!(
        matches!(&theirs, Err(Error::InProgress(m)) if m.contains("another caller")),
        "{theirs:?}"
    );
}

#[test]
fn no_caller_makes_an_attempt_while_another_is_in_flight_within_its_lease() {
    let effect = Effect::EventPublished;
    let j = published(&Journal::new(&run_of("v1")));
    let j = step(&j, Transition::BeginCompensation("withdrawn".into()));
    let mine = step(&j, attempt(effect, 0));
    assert_eq!(mine.entry(effect).attempt_since, Some(T0));
    // A caller that read the journal after the claim (it saw 1 attempt) makes no second one
    // while the first is in flight...
    let lease = time::Duration::seconds(ATTEMPT_LEASE_SECONDS);
    let soon = mine.next(&attempt_at(effect, 1, T0 + lease - time::Duration::SECOND));
    assert!(
        matches!(&soon, Err(Error::InProgress(m)) if m.contains("in flight since")),
        "{soon:?}"
    );
    // ...until its holder has run out of time,
    let late = step(&mine, attempt_at(effect, 1, T0 + lease));
    assert_eq!(late.entry(effect).attempts, 2);
    // or at once when it ended (here it failed and may be tried again).
    let failed = step(
        &mine,
        Transition::Failed {
            effect,
            error: ErrorKind::Dependency,
            max_attempts: 3,
            owner: "ops".into(),
        },
    );
    assert_eq!(failed.entry(effect).attempt_since, None);
    let next = step(&failed, attempt_at(effect, 1, T0 + time::Duration::SECOND));
    assert_eq!(next.entry(effect).attempts, 2);
    // A committed compensation holds no lease.
    let committed = step(&next, Transition::Committed(effect));
    assert_eq!(committed.entry(effect).attempt_since, None);
}

#[test]
fn nothing_confirmed_or_uncertain_ends_not_required() {
    let j = Journal::new(&run_of("v1"));
    let j = step(
        &j,
        Transition::Claim(Effect::ResultPromoted, EffectIds::default()),
    );
    let j = step(
        &j,
        Transition::Settle(Effect::ResultPromoted, Outcome::DidNotHappen),
    );
    let j = step(&j, Transition::BeginCompensation("publish failed".into()));
    assert_eq!(plan(&j).unwrap(), []);
    assert_eq!(step(&j, Transition::Finish).end, Some(SagaEnd::NotRequired));
}
