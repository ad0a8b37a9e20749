//! The OCR step under the operation ledger: lost answers, unresolved outcomes, takeovers,
//! duplicates, changed parameters and late holders.

use super::*;

impl World {
    /// Claims the run's OCR operation now, as a holder that then crashes would.
    async fn claim_ocr(&self, input: &RunInput) {
        use crate::ports::Ledger;
        let now = self.ctx.clock.now().unix_timestamp();
        let rules = self.ctx.config.ledger.lease_rules();
        let op = Step::Ocr.operation(&input.run_id);
        self.ports
            .store
            .ledger
            .claim(&op, &ocr::fingerprint(input), now, &rules)
            .await
            .unwrap();
    }

    async fn ledger_of(&self, input: &RunInput) -> crate::ledger::OperationRecord {
        use crate::ports::Ledger;
        self.ports
            .store
            .ledger
            .get(&Step::Ocr.operation(&input.run_id))
            .await
            .unwrap()
            .expect("a ledger record")
    }

    /// The provider's next start fails with `error`, before any job starts.
    fn fail_next_start(&self, error: Error) {
        self.ports.ocr.fail_starts.lock().unwrap().push(error);
    }

    async fn actions(&self, input: &RunInput, action: &str) -> usize {
        let entries = self
            .ports
            .store
            .audit_entries(&input.document_id)
            .await
            .unwrap();
        entries.iter().filter(|e| e.draft.action == action).count()
    }
}

#[tokio::test]
async fn a_lost_start_answer_gives_the_lease_up_and_the_retry_finds_the_same_job() {
    // given a start whose answer is lost after the provider accepted it
    let w = world();
    let input = w.ocr_ready().await;
    *w.ports.ocr.lose_start_answers.lock().unwrap() = 1;

    // when the step runs, and the state machine retries it
    let lost = w.start(&input).await;
    let retried = w.start(&input).await.unwrap();

    // then the first attempt reports the ambiguity, the retry takes over (fence 2) and asks
    // again with the same token: one job, accepted, one ocr.started entry
    assert_eq!(lost.unwrap_err().name(), "Ambiguous.OutcomeUnknown");
    assert_eq!(retried.fence, 2);
    assert_eq!(w.ports.ocr.job_count(), 1);
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), 2);
    let rec = w.ledger_of(&input).await;
    assert_eq!(rec.status, crate::ledger::LedgerStatus::Accepted);
    assert_eq!(
        rec.provider_job_id.as_deref(),
        Some(retried.job_id.as_str())
    );
    assert_eq!(crate::ledger::ambiguous_attempts(&rec), 1);
    assert_eq!(w.actions(&input, "ocr.started").await, 1);
}

#[tokio::test]
async fn an_outcome_that_stays_unknown_becomes_unresolved_with_an_owner_never_a_second_job() {
    // given a provider whose answers to starts keep being lost
    let w = world();
    let input = w.ocr_ready().await;
    *w.ports.ocr.lose_start_answers.lock().unwrap() = 10;
    let limit = w.ctx.config.ledger.max_ambiguous_attempts;

    // when the state machine retries up to the limit, and once more
    let mut errors = Vec::new();
    for _ in 0..limit + 1 {
        errors.push(w.start(&input).await.unwrap_err().name());
    }

    // then the attempts below the limit were ambiguous, the one at it unresolved, and the one
    // after it is refused by the ledger without asking the provider
    let mut expected = vec!["Ambiguous.OutcomeUnknown"; limit - 1];
    expected.extend(["Ambiguous.Unresolved", "Ambiguous.Unresolved"]);
    assert_eq!(errors, expected);
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), limit);
    assert_eq!(
        w.ports.ocr.job_count(),
        1,
        "the same token every time: one job at most"
    );
    let rec = w.ledger_of(&input).await;
    assert_eq!(rec.status, crate::ledger::LedgerStatus::Unresolved);
    assert_eq!(rec.owner.as_deref(), Some("docket-operations"));
    assert!(rec
        .next_action
        .as_deref()
        .unwrap()
        .contains(rec.operation_id.as_str()));
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Unresolved);
    assert_eq!(run.error.as_deref(), Some("Ambiguous.Unresolved"));
    assert_eq!(w.actions(&input, "ocr.unresolved").await, 1);
    use crate::ports::Ledger;
    assert_eq!(w.ports.store.ledger.unresolved().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_holder_that_crashed_after_the_provider_accepted_is_taken_over_after_its_lease() {
    // given a holder that claimed the operation and started the job, then crashed before
    // recording it
    let w = world();
    let input = w.ocr_ready().await;
    let op = Step::Ocr.operation(&input.run_id);
    let rules = w.ctx.config.ledger.lease_rules();
    w.claim_ocr(&input).await;
    use crate::ports::Ocr;
    let crashed_job = w.ports.ocr.start(&op, &input.raw, "t").await.unwrap();

    // when a retry comes within the lease, and another after it
    let within = w.start(&input).await;
    let after_ctx = w.later(rules.lease_seconds + 1);
    let after = ocr::start(&w.ports, &after_ctx, &input).await.unwrap();

    // then the first backs off, the second records the existing job under fence 2
    assert_eq!(within.unwrap_err().name(), "Transient.InProgress");
    assert_eq!(after.job_id, crashed_job);
    assert_eq!(after.fence, 2);
    assert_eq!(w.ports.ocr.job_count(), 1);
    let rec = w.ledger_of(&input).await;
    assert_eq!(rec.status, crate::ledger::LedgerStatus::Accepted);
    assert_eq!(w.actions(&input, "ocr.started").await, 1);
}

#[tokio::test]
async fn a_duplicate_start_while_the_job_is_held_returns_that_job_and_writes_nothing() {
    // given a started OCR operation
    let w = world();
    let input = w.ocr_ready().await;
    let first = w.start(&input).await.unwrap();
    let commits = *w.ports.store.commits.lock().unwrap();

    // when the same step runs again (its answer to the state machine was lost)
    let second = w.start(&input).await.unwrap();

    // then it is the same job under the same fence; the provider was not asked, nothing written
    assert_eq!(second, first);
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), 1);
    assert_eq!(*w.ports.store.commits.lock().unwrap(), commits);
}

#[tokio::test]
async fn the_same_operation_with_another_document_version_is_a_conflict_and_changes_nothing() {
    // given a started OCR operation
    let w = world();
    let input = w.ocr_ready().await;
    w.start(&input).await.unwrap();
    let before = w.ledger_of(&input).await;

    // when the same run's OCR is asked for another raw version
    let mut changed = input.clone();
    changed.raw.version_id = Some("another-version".into());
    changed.sha256 = "0".repeat(64);
    let err = w.start(&changed).await.unwrap_err();

    // then it is refused before the provider is asked; the record is untouched
    assert_eq!(err.name(), "Conflict.ParametersChanged");
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), 1);
    assert_eq!(w.ledger_of(&input).await, before);
}

#[tokio::test]
async fn a_late_poll_by_a_taken_over_holder_cannot_complete_the_operation() {
    // given a holder (fence 1) whose lease ran out, and a takeover (fence 2)
    let w = world();
    let input = w.ocr_ready().await;
    let rules = w.ctx.config.ledger.lease_rules();
    w.claim_ocr(&input).await;
    let later = w.later(rules.lease_seconds + 1);
    let taken = ocr::start(&w.ports, &later, &input).await.unwrap();
    assert_eq!(taken.fence, 2);

    // when the old holder polls the finished job and tries to record it
    let stale = ocr::OcrStarted {
        job_id: taken.job_id.clone(),
        fence: 1,
        done: None,
    };
    let late = ocr::poll(&w.ports, &w.ctx, &input, &stale).await;

    // then it is fenced out and recorded nothing; the holder completes
    assert_eq!(late.unwrap_err().name(), "Conflict.FencedOut");
    assert_eq!(w.actions(&input, "ocr.completed").await, 0);
    let done = ocr::poll(&w.ports, &w.ctx, &input, &taken).await.unwrap();
    assert_eq!(done.status, "SUCCEEDED");
    assert_eq!(w.actions(&input, "ocr.completed").await, 1);
    let rec = w.ledger_of(&input).await;
    assert_eq!(rec.status, crate::ledger::LedgerStatus::Completed);
    assert_eq!(rec.result_pointer, done.normalized.map(|n| n.to_string()));
}

#[tokio::test]
async fn a_transient_start_failure_fails_nothing_and_a_retry_after_the_lease_starts_the_job() {
    // given a provider that is unavailable for one start, before anything starts
    let w = world();
    let input = w.ocr_ready().await;
    w.fail_next_start(Error::Dependency("textract: service unavailable".into()));

    // when the step runs, and the state machine retries it once the lease ran out
    let first = w.start(&input).await;
    let lease = w.ctx.config.ledger.lease_rules().lease_seconds;
    let retried = ocr::start(&w.ports, &w.later(lease + 1), &input).await;

    // then the first attempt reports the transient error and records no failure (the run is
    // still started, the operation still in progress); the retry starts the one job
    assert_eq!(first.unwrap_err().name(), "Transient.Dependency");
    assert!(retried.is_ok(), "{retried:?}");
    assert_eq!(w.ports.ocr.job_count(), 1);
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Started);
    assert_eq!(
        w.ledger_of(&input).await.status,
        crate::ledger::LedgerStatus::Accepted
    );
}

#[tokio::test]
async fn a_start_whose_quota_turn_did_not_come_gives_the_lease_up_and_the_retry_starts_at_once() {
    // given a start that admission turns away before the provider is asked
    let w = world();
    let input = w.ocr_ready().await;
    w.fail_next_start(Error::QuotaFull(
        "textract-jobs: all 3 of 3 job slots are held".into(),
    ));

    // when the step runs, and the state machine retries it at once (well within the lease)
    let refused = w.start(&input).await;
    let retried = w.start(&input).await;

    // then the retry takes over (fence 2) instead of finding a live holder, one job starts,
    // and the refusal counts as nothing against the operation
    assert_eq!(refused.unwrap_err().name(), "Transient.QuotaFull");
    let retried = retried.expect("not Transient.InProgress: the lease was given up");
    assert_eq!(retried.fence, 2);
    assert_eq!(w.ports.ocr.job_count(), 1);
    let rec = w.ledger_of(&input).await;
    assert_eq!(rec.status, crate::ledger::LedgerStatus::Accepted);
    assert_eq!(crate::ledger::ambiguous_attempts(&rec), 0);
    assert!(rec
        .attempts
        .iter()
        .any(|a| a.note == crate::ledger::YIELD_NOTE));
    assert_eq!(w.actions(&input, "ocr.started").await, 1);
}

#[tokio::test]
async fn a_start_refused_for_good_fails_the_operation_and_the_run_with_its_name() {
    // given a provider that refuses the start for a reason a retry cannot mend
    let w = world();
    let input = w.ocr_ready().await;
    w.fail_next_start(Error::BadInput("textract: invalid S3 object".into()));

    // when the step runs
    let err = w.start(&input).await.unwrap_err();

    // then the run and its operation end failed, with the error's name, and no job exists
    assert_eq!(err.name(), "Fatal.BadInput");
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(
        (run.status, run.error.as_deref()),
        (RunStatus::Failed, Some("Fatal.BadInput"))
    );
    assert_eq!(
        w.ledger_of(&input).await.status,
        crate::ledger::LedgerStatus::Failed
    );
    assert_eq!(w.ports.ocr.job_count(), 0);
}
