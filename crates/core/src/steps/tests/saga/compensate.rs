//! Compensation after a failed effect, and retracts by an operator.

use super::*;
use crate::saga::Transition;

#[tokio::test]
async fn a_duplicate_invoice_refused_downstream_is_compensated_in_reverse_order_once() {
    let w = world();
    w.completed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    let key = "inbox/acme/copy.png";
    let first = w.completed(key, "2026-11-30T10:01:00Z", "INV-2").await;
    // A new version of the copy now carries the first document's invoice number.
    let (second, result) = w.routed(key, "2026-11-30T10:02:00Z", "INV-1").await;

    let refused = saga::run(&w.ports, &w.ctx, &second, &result)
        .await
        .unwrap_err();
    assert_eq!(refused.name(), "Business.DuplicateInvoice");
    let journal = w.journal(&second).await;
    let evidence: Vec<_> = journal.entries.iter().map(|e| e.evidence).collect();
    assert_eq!(
        evidence,
        [
            Evidence::Confirmed,
            Evidence::Confirmed,
            Evidence::NotAttempted
        ]
    );
    assert_eq!(
        w.current(&second).await,
        Some(second.run_id.to_string()),
        "promoted"
    );

    let ended = w
        .compensate(&second, "Business.DuplicateInvoice")
        .await
        .unwrap();
    assert_eq!(
        ended,
        Compensation {
            end: SagaEnd::Compensated,
            already_ended: false
        }
    );
    assert_eq!(
        w.current(&second).await,
        Some(first.run_id.to_string()),
        "previous restored"
    );
    assert_eq!(
        w.published(EventKind::Retracted),
        [(
            EventId::new(&second.run_id, EventKind::Retracted),
            Some(accepted_id(&second))
        )]
    );
    assert_eq!(
        w.saga_chain(&second).await,
        [
            "document.accepted",
            "result.promoted",
            "event.published",
            "downstream.refused",
            "event.retracted",
            "result.restored",
            "saga.compensated"
        ]
    );
    let journal = w.journal(&second).await;
    let status: Vec<_> = journal
        .entries
        .iter()
        .map(|e| e.compensation.name())
        .collect();
    assert_eq!(status, ["committed", "committed", "not-required"]);

    // Once: a second call (a repeated Catch, a duplicate retract) changes nothing.
    let (wire, commits) = (w.wire(), *w.ports.store.commits.lock().unwrap());
    let again = w.compensate(&second, "again").await.unwrap();
    assert_eq!(
        again,
        Compensation {
            end: SagaEnd::Compensated,
            already_ended: true
        }
    );
    assert_eq!(
        (w.wire(), *w.ports.store.commits.lock().unwrap()),
        (wire, commits)
    );
}

#[tokio::test]
async fn an_uncertain_publication_is_reconciled_by_event_id_before_anything_else() {
    let w = world();
    let (input, _) = w.lost_publish_answer().await;
    let entry = w
        .journal(&input)
        .await
        .entry(Effect::EventPublished)
        .clone();
    assert_eq!(
        (entry.evidence, entry.ids.entry_id),
        (Evidence::Uncertain, None)
    );
    assert_eq!(
        w.published(EventKind::Accepted).len(),
        1,
        "PutEvents committed"
    );

    w.compensate(&input, "Ambiguous.OutcomeUnknown")
        .await
        .unwrap();
    let journal = w.journal(&input).await;
    let entry = journal.entry(Effect::EventPublished);
    assert_eq!(entry.evidence, Evidence::Confirmed);
    assert_eq!(
        entry.ids.entry_id.as_deref(),
        Some("entry-1"),
        "the first entry, found by id"
    );
    assert_eq!(w.published(EventKind::Accepted).len(), 1, "published once");
    assert_eq!(w.published(EventKind::Retracted).len(), 1, "retracted once");
    assert_eq!(
        w.saga_chain(&input).await,
        [
            "document.accepted",
            "result.promoted",
            "event.published",
            "event.retracted",
            "result.restored",
            "saga.compensated"
        ]
    );
    let entries = w.entries(&input.document_id).await;
    assert_eq!(
        entries[2].draft.detail["reconciled"], true,
        "{:?}",
        entries[2].draft
    );
    assert_eq!(w.current(&input).await, None, "nothing was current before");
}

#[tokio::test]
async fn a_compensation_that_keeps_failing_ends_failed_manual_review_with_an_owner() {
    let w = world();
    let input = w
        .completed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    *w.ports.downstream.fail_voids.lock().unwrap() = 100;

    for attempt in 1..3 {
        let err = w.compensate(&input, "withdrawn").await.unwrap_err();
        assert_eq!(err.name(), "Transient.Dependency", "attempt {attempt}");
    }
    let ended = w.compensate(&input, "withdrawn").await.unwrap();
    assert_eq!(ended.end, SagaEnd::CompensationFailed);
    let journal = w.journal(&input).await;
    let void = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(void.compensation, CompensationStatus::FailedManualReview);
    assert_eq!(void.attempts, crate::saga::MAX_COMPENSATION_ATTEMPTS);
    assert_eq!(
        void.owner.as_deref(),
        Some(w.ctx.config.ledger.unresolved_owner.as_str())
    );
    assert_eq!(void.last_error.as_deref(), Some("Transient.Dependency"));
    // Nothing earlier is undone while a later effect stands.
    assert_eq!(w.ports.downstream.voids.lock().unwrap().len(), 3);
    assert!(w.published(EventKind::Retracted).is_empty());
    assert_eq!(w.current(&input).await, Some(input.run_id.to_string()));
    let failed = w.ports.store.journal.failed().await.unwrap();
    assert_eq!(
        failed.iter().map(|j| &j.run_id).collect::<Vec<_>>(),
        [&input.run_id]
    );
    let chain = w.saga_chain(&input).await;
    assert_eq!(
        chain[chain.len() - 2..],
        ["compensation.failed", "saga.compensation_failed"]
    );
}

#[tokio::test]
async fn a_retract_of_a_completed_run_voids_retracts_and_restores_and_a_second_is_a_no_op() {
    let w = world();
    let key = "inbox/acme/inv.png";
    let v1 = w.completed(key, "2026-11-30T10:00:00Z", "INV-1").await;
    let v2 = w.completed(key, "2026-11-30T10:05:00Z", "INV-1").await;
    let receipt = w
        .journal(&v2)
        .await
        .entry(Effect::DownstreamRecorded)
        .ids
        .receipt_id
        .clone();

    let ended = w.compensate(&v2, "withdrawn by operator").await.unwrap();
    assert_eq!(ended.end, SagaEnd::Compensated);
    assert_eq!(
        *w.ports.downstream.voids.lock().unwrap(),
        [receipt.clone().unwrap()]
    );
    let book = w.ports.downstream.book.lock().unwrap().clone();
    assert_eq!(
        book.receipt(receipt.as_ref().unwrap())
            .unwrap()
            .voided
            .as_deref(),
        Some("withdrawn by operator")
    );
    assert_eq!(
        w.published(EventKind::Retracted),
        [(
            EventId::new(&v2.run_id, EventKind::Retracted),
            Some(accepted_id(&v2))
        )]
    );
    assert_eq!(w.current(&v2).await, Some(v1.run_id.to_string()));
    let chain = w.saga_chain(&v2).await;
    assert_eq!(
        chain[4..],
        [
            "downstream.voided",
            "event.retracted",
            "result.restored",
            "saga.compensated"
        ]
    );

    let wire = w.wire();
    let again = w.compensate(&v2, "withdrawn by operator").await.unwrap();
    assert!(again.already_ended);
    assert_eq!(w.wire(), wire);
}

#[tokio::test]
async fn a_retract_racing_a_newer_version_never_undoes_the_newer_result() {
    let w = world();
    let key = "inbox/acme/inv.png";
    let v1 = w.completed(key, "2026-11-30T10:00:00Z", "INV-1").await;
    let v2 = w.completed(key, "2026-11-30T10:05:00Z", "INV-1").await;

    let ended = w.compensate(&v1, "withdrawn by operator").await.unwrap();
    assert_eq!(ended.end, SagaEnd::Compensated);
    assert_eq!(
        w.current(&v2).await,
        Some(v2.run_id.to_string()),
        "the newer result stands"
    );
    let journal = w.journal(&v1).await;
    let restore = journal.entry(Effect::ResultPromoted);
    assert_eq!(restore.compensation, CompensationStatus::NotRequired);
    assert!(
        restore
            .note
            .as_deref()
            .unwrap()
            .contains(v2.run_id.as_str()),
        "{restore:?}"
    );
    // v1's receipt was voided when v2 amended it: the void is a no-op that says so.
    let void = w.saga_chain(&v1).await;
    assert!(void.contains(&"downstream.voided".to_string()), "{void:?}");
    let entries = w.entries(&v1.document_id).await;
    let voided = entries
        .iter()
        .find(|e| e.draft.action == "downstream.voided")
        .unwrap();
    assert!(voided.draft.detail["alreadyVoided"]
        .as_str()
        .unwrap()
        .starts_with("amended by"));

    // A retract that begins before a run's saga fences the saga out.
    let (v3, result) = w.routed(key, "2026-11-30T10:10:00Z", "INV-1").await;
    assert_eq!(
        w.compensate(&v3, "withdrawn").await.unwrap().end,
        SagaEnd::NotRequired
    );
    let fenced = saga::run(&w.ports, &w.ctx, &v3, &result).await.unwrap_err();
    assert_eq!(fenced.name(), "Conflict.FencedOut");
    assert_eq!(w.current(&v2).await, Some(v2.run_id.to_string()));
}

#[tokio::test]
async fn duplicate_and_concurrent_retracts_compensate_once() {
    let w = world();
    let input = w
        .completed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    // The memory journal yields on every read, so the two interleave at each journal access.
    let (a, b) = tokio::join!(w.compensate(&input, "one"), w.compensate(&input, "two"));
    let outcomes = [a, b].map(|r| r.map(|c| c.end).map_err(|e| e.name()));
    // They raced: the loser found the winner's claim of an attempt (the state machine retries).
    assert!(outcomes.contains(&Ok(SagaEnd::Compensated)), "{outcomes:?}");
    assert!(
        outcomes.contains(&Err("Transient.InProgress")),
        "{outcomes:?}"
    );
    let retried = w.compensate(&input, "two").await.unwrap();
    assert_eq!(
        (retried.end, retried.already_ended),
        (SagaEnd::Compensated, true)
    );
    assert_eq!(w.ports.downstream.voids.lock().unwrap().len(), 1);
    assert_eq!(w.published(EventKind::Retracted).len(), 1);
    assert_eq!(
        w.journal(&input).await.compensation_reason.as_deref(),
        Some("one")
    );
}

#[tokio::test]
async fn an_uncertain_publication_not_on_the_bus_is_published_under_its_id_then_retracted() {
    let w = world();
    let (input, _) = w
        .failing(&w.ports.events.fail_next, "Transient.Dependency")
        .await;
    assert!(
        w.ports.events.entries.lock().unwrap().is_empty(),
        "nothing reached the bus"
    );
    assert_eq!(
        w.ports.store.outbox.deliveries()[&accepted_id(&input)],
        Delivery::Persisted
    );

    // The persisted record would be published by any relay: it is published now, then retracted.
    assert_eq!(
        w.compensate(&input, "timeout").await.unwrap().end,
        SagaEnd::Compensated
    );
    let kinds: Vec<_> = w
        .ports
        .events
        .entries
        .lock()
        .unwrap()
        .iter()
        .map(|(b, _)| b.kind)
        .collect();
    assert_eq!(kinds, [EventKind::Accepted, EventKind::Retracted]);
    let entry = w
        .journal(&input)
        .await
        .entry(Effect::EventPublished)
        .clone();
    assert_eq!(
        (entry.evidence, entry.ids.entry_id.as_deref()),
        (Evidence::Confirmed, Some("entry-1"))
    );
}

#[tokio::test]
async fn an_uncertain_delivery_is_fenced_at_the_consumer_so_a_late_one_is_refused() {
    let w = world();
    let (input, result) = w
        .failing(&w.ports.downstream.fail_deliveries, "Transient.Dependency")
        .await;
    let uncertain = w
        .journal(&input)
        .await
        .entry(Effect::DownstreamRecorded)
        .evidence;
    assert_eq!(uncertain, Evidence::Uncertain);

    assert_eq!(
        w.compensate(&input, "receipt deadline passed")
            .await
            .unwrap()
            .end,
        SagaEnd::Compensated
    );
    let journal = w.journal(&input).await;
    let record = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(
        (record.evidence, record.compensation),
        (Evidence::NotAttempted, CompensationStatus::NotRequired)
    );
    // A delivery still in flight lands after the look-up: the consumer refuses it.
    let late = w
        .ports
        .downstream
        .deliver(&w.event_of(&input, &result, "INV-1").await)
        .await;
    assert_eq!(late.unwrap_err().name(), "Conflict.FencedOut");
    assert!(w
        .ports
        .downstream
        .book
        .lock()
        .unwrap()
        .receipt_for(&accepted_id(&input))
        .is_none());
    assert_eq!(
        *w.ports.downstream.deliveries.lock().unwrap(),
        2,
        "both deliveries arrived"
    );
    // And the saga itself, retried, is fenced out by the journal.
    let retried = saga::run(&w.ports, &w.ctx, &input, &result).await;
    assert_eq!(retried.unwrap_err().name(), "Conflict.FencedOut");
}

#[tokio::test]
async fn a_compensation_in_flight_is_left_to_its_holder_until_its_lease_runs_out() {
    // given a retract whose void is in flight in another caller (it claimed the attempt and
    // has not ended it: still acting, or stopped at its timeout)
    let w = world();
    let input = w
        .completed("inbox/acme/inv.png", "2026-11-30T10:00:00Z", "INV-1")
        .await;
    let (effect, journal) = (Effect::DownstreamRecorded, &w.ports.store.journal);
    let begin = Transition::BeginCompensation("withdrawn".into());
    let holder = Transition::Attempt {
        effect,
        seen: 0,
        at: w.ctx.clock.now(),
    };
    let begun = w.journal(&input).await.next_all(&[begin, holder]).unwrap();
    journal.put(&begun.unwrap()).await.unwrap().unwrap();

    // when another caller compensates within the lease, and again after it
    let refused = w.compensate(&input, "withdrawn").await;
    let lease = time::Duration::seconds(crate::saga::ATTEMPT_LEASE_SECONDS);
    let mut later = w.ctx.clone();
    later.clock = Clock::Fixed(w.ctx.clock.now() + lease);
    let done = saga::compensate(&w.ports, &later, &input.run_id, "withdrawn").await;

    // then the first call acts on nothing (retried with backoff), the second takes over: one
    // void, under the second attempt
    assert_eq!(refused.unwrap_err().name(), "Transient.InProgress");
    assert_eq!(done.unwrap().end, SagaEnd::Compensated);
    assert_eq!(w.ports.downstream.voids.lock().unwrap().len(), 1);
    assert_eq!(w.journal(&input).await.entry(effect).attempts, 2);
}
