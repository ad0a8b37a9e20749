//! Deciding, reopening, expiring and delivering a task.

use super::*;

#[test]
fn a_pending_task_before_its_deadline_is_decided_by_its_tenants_reviewer() {
    let task = pending_task("acme", "a.pdf");
    let decision = decision_by("alice", "acme");

    let decided = decide(&task, decision.clone(), instant(T0 + 30))
        .unwrap()
        .unwrap();

    assert_eq!(decided.status, ReviewStatus::Decided);
    assert_eq!(decided.decision, Some(decision));
    assert_eq!(
        decided.fields, task.fields,
        "the extracted fields stay as found"
    );
}

#[test]
fn a_second_decision_is_refused_with_the_first_one_which_stands() {
    // given a task alice approved
    let task = pending_task("acme", "a.pdf");
    let first = decision_by("alice", "acme");
    let decided = decide(&task, first.clone(), instant(T0 + 30))
        .unwrap()
        .unwrap();
    // when bob rejects it afterwards
    let bob = ReviewDecision::reject(&reviewer("bob", "acme"), "wrong", instant(T0 + 40)).unwrap();
    let refused = decide(&decided, bob, instant(T0 + 40))
        .unwrap()
        .unwrap_err();
    let repeated = apply_decision(&decided, first.clone()).unwrap();
    // then he is told it was already decided, and by whom
    let Refusal::AlreadyDecided(recorded) = &refused else {
        panic!("expected AlreadyDecided, got {refused:?}")
    };
    assert_eq!(recorded.decision, Some(first));
    let err = refused.error();
    assert_eq!(err.name(), "Conflict.AlreadyDecided");
    assert_eq!(
        err.to_string(),
        format!(
            "already decided: review task {} was already approved by alice at {}",
            task.task_id,
            at(T0 + 30)
        )
    );
    // while alice's own decision, repeated after a lost acknowledgement, is acknowledged
    assert_eq!(repeated, Ok(decided));
}

#[test]
fn a_decision_after_the_deadline_or_on_an_expired_task_is_refused_as_expired() {
    let task = pending_task("acme", "a.pdf");
    let expired = match expire(
        &task,
        &Expiry {
            reason: "States.Timeout".into(),
            at: at(T0 + 100),
        },
    ) {
        ExpireOutcome::Expired(t) => t,
        other => panic!("expected Expired, got {other:?}"),
    };

    let late = decide(&task, decision_by("alice", "acme"), instant(T0 + 86_401))
        .unwrap()
        .unwrap_err();
    let gone = decide(&expired, decision_by("alice", "acme"), instant(T0 + 200))
        .unwrap()
        .unwrap_err();
    let on_time = decide(&task, decision_by("alice", "acme"), instant(T0 + 86_400)).unwrap();

    assert_eq!(late, Refusal::Expired(task.clone()));
    assert_eq!(late.error().name(), "Conflict.ReviewExpired");
    assert!(late.error().to_string().contains("passed its deadline"));
    assert_eq!(gone, Refusal::Expired(expired));
    assert!(gone.error().to_string().contains("States.Timeout"));
    assert!(on_time.is_ok(), "the deadline itself is still in time");
}

#[test]
fn a_decision_by_another_tenant_is_not_found_whatever_the_status() {
    let task = pending_task("acme", "a.pdf");
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();

    for t in [&task, &decided] {
        let err = decide(t, decision_by("mallory", "globex"), instant(T0 + 30)).unwrap_err();
        assert_eq!(err, not_found(&task.task_id));
    }
}

#[test]
fn reopening_a_pending_task_moves_its_deadline_and_a_closed_one_stays_as_recorded() {
    let task = pending_task("acme", "a.pdf");
    let mut retry = task.clone();
    retry.deadline = at(T0 + 90_000);
    retry.created_at = at(T0 + 3_600);
    let open = OpenTask {
        task: retry,
        token: TaskToken::new("token-2").unwrap(),
    };
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();
    let mut foreign = task.clone();
    foreign.run_id = run_input("acme", "b.pdf").run_id;

    let reopened = reopen(&task, &open).unwrap();
    let closed = reopen(&decided, &open).unwrap();
    let corrupt = reopen(&foreign, &open).unwrap_err();

    let mut expected = task.clone();
    expected.deadline = at(T0 + 90_000);
    assert_eq!(reopened, Opened::Reopened(expected));
    assert_eq!(closed, Opened::Closed(decided));
    assert_eq!(corrupt.name(), "Fatal.Internal");
}

#[test]
fn expiry_applies_to_pending_and_undelivered_decisions_only() {
    let task = pending_task("acme", "a.pdf");
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();
    let delivered = deliver(&decided, &at(T0 + 31)).unwrap();
    let expiry = Expiry {
        reason: "TaskTimedOut".into(),
        at: at(T0 + 40),
    };

    let from_pending = expire(&task, &expiry);
    let from_decided = expire(&decided, &expiry);
    let from_delivered = expire(&delivered, &expiry);
    let repeated = expire(from_pending.task(), &expiry);
    let other_reason = Expiry {
        reason: "States.Timeout".into(),
        at: at(T0 + 50),
    };
    let again = expire(from_pending.task(), &other_reason);

    let ExpireOutcome::Expired(t) = &from_pending else {
        panic!("expected Expired, got {from_pending:?}")
    };
    assert_eq!(
        (t.status, t.expiry.as_ref()),
        (ReviewStatus::Expired, Some(&expiry))
    );
    let ExpireOutcome::Expired(t) = &from_decided else {
        panic!("expected Expired, got {from_decided:?}")
    };
    assert_eq!(t.status, ReviewStatus::Expired);
    assert_eq!(
        t.decision, decided.decision,
        "the late decision stays for audit"
    );
    assert_eq!(from_delivered, ExpireOutcome::Delivered(delivered));
    assert_eq!(
        repeated, from_pending,
        "the same expiry repeated is acknowledged"
    );
    assert_eq!(
        again,
        ExpireOutcome::AlreadyExpired(from_pending.task().clone())
    );
}

#[test]
fn delivery_is_recorded_once_on_a_decided_task_only() {
    let task = pending_task("acme", "a.pdf");
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();
    let expired = expire(
        &decided,
        &Expiry {
            reason: "InvalidToken".into(),
            at: at(T0 + 40),
        },
    )
    .task()
    .clone();

    let delivered = deliver(&decided, &at(T0 + 31)).unwrap();
    let repeated = deliver(&delivered, &at(T0 + 99)).unwrap();

    assert_eq!(delivered.delivered_at, Some(at(T0 + 31)));
    assert_eq!(repeated, delivered, "a repeat keeps the first time");
    assert_eq!(deliver(&task, "t").unwrap_err().name(), "Fatal.Internal");
    assert_eq!(
        deliver(&expired, "t").unwrap_err().name(),
        "Conflict.ReviewExpired"
    );
}

#[test]
fn approved_fields_are_the_recorded_corrections_over_the_extracted_fields() {
    let task = pending_task("acme", "a.pdf");
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();
    let rejected = apply_decision(
        &task,
        ReviewDecision::reject(&reviewer("bob", "acme"), "no", instant(T0)).unwrap(),
    )
    .unwrap()
    .unwrap();

    let fields = decided.approved_fields().unwrap();

    assert_eq!(fields[&FieldName::TotalAmount].value, "1243.50");
    assert_eq!(fields[&FieldName::TotalAmount].confidence, 1.0);
    assert_eq!(
        fields[&FieldName::Currency],
        task.fields[&FieldName::Currency]
    );
    assert_eq!(task.approved_fields(), None);
    assert_eq!(rejected.approved_fields(), None);
}
