//! Powertools' idempotency test matrix (first execution, in progress, completed, expired,
//! tampered payload, store errors, concurrent invocations) ported to the ledger, over
//! [`MemoryLedger`]; and the pure decisions both ledgers share. The same matrix runs against
//! DynamoDB (LocalStack) in `tests/localaws/ledger.rs`.

use std::sync::Arc;

use super::*;
use crate::ids::Tenant;
use crate::memory::MemoryLedger;
use crate::ports::Ledger;

const RULES: LeaseRules = LeaseRules {
    lease_seconds: 60,
    retention_seconds: 86_400,
};
const T0: i64 = 1_700_000_000;

fn op(step: &str) -> OperationId {
    let run = crate::memory::test_run(&Tenant::parse("acme").unwrap(), "invoice.pdf", "v1");
    OperationId::new(&run, step, None)
}

fn fence_of(claimed: &Claimed) -> u64 {
    match claimed {
        Claimed::Fresh { fence } | Claimed::TakenOver { fence, .. } => *fence,
        Claimed::AlreadyDone(rec) => panic!("expected a claim, got done {rec:?}"),
    }
}

fn requests(ledger: &MemoryLedger) -> usize {
    *ledger.requests.lock().unwrap()
}

#[tokio::test]
async fn first_call_claims_fresh_with_fence_one_and_records_in_progress() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");

    let claimed = ledger.claim(&op, "p1", T0, &RULES).await.unwrap();

    assert_eq!(claimed, Claimed::Fresh { fence: 1 });
    let rec = ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.status, LedgerStatus::InProgress);
    assert_eq!(rec.fence, 1);
    assert_eq!(rec.fingerprint, "p1");
    assert_eq!(rec.lease_expires_at, T0 + 60);
    assert_eq!(rec.expires_at, T0 + 86_400);
    assert_eq!(rec.created_at, T0);
    assert_eq!(rec.attempts.len(), 1);
    assert_eq!(rec.attempts[0].fence, 1);
}

#[tokio::test]
async fn first_run_costs_two_writes_claim_and_complete() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");

    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 1)
        .await
        .unwrap();

    assert_eq!(requests(&ledger), 2);
}

#[tokio::test]
async fn duplicate_during_a_live_claim_sees_in_progress_and_writes_nothing() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    ledger.claim(&op, "p1", T0, &RULES).await.unwrap();
    let before = ledger.get(&op).await.unwrap();

    let err = ledger.claim(&op, "p1", T0 + 60, &RULES).await.unwrap_err();

    assert_eq!(err.name(), "Transient.InProgress");
    assert_eq!(ledger.get(&op).await.unwrap(), before);
}

#[tokio::test]
async fn duplicate_of_an_accepted_operation_with_a_live_lease_sees_in_progress() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    ledger.accept(&op, fence, "job-1", T0 + 50).await.unwrap();

    // The accept extended the lease to T0 + 110: at T0 + 100 the claim is still live.
    let err = ledger.claim(&op, "p1", T0 + 100, &RULES).await.unwrap_err();

    assert_eq!(err.name(), "Transient.InProgress");
}

#[tokio::test]
async fn completed_operation_returns_its_recorded_result_without_the_effect() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let mut effects = 0;
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    effects += 1;
    ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 1)
        .await
        .unwrap();

    let replay = ledger.claim(&op, "p1", T0 + 3_600, &RULES).await.unwrap();
    if !matches!(replay, Claimed::AlreadyDone(_)) {
        effects += 1;
    }

    assert_eq!(effects, 1);
    let Claimed::AlreadyDone(rec) = replay else {
        panic!("expected done, got {replay:?}")
    };
    assert_eq!(rec.result_pointer.as_deref(), Some("s3://derived/r.json"));
    assert_eq!(rec.result_hash.as_deref(), Some("h1"));
    assert_eq!(requests(&ledger), 3, "the replay is one request");
}

#[tokio::test]
async fn expired_lease_is_taken_over_with_the_next_fence_and_the_old_holders_late_write_is_fenced_out(
) {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let old = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());

    let takeover = ledger.claim(&op, "p1", T0 + 61, &RULES).await.unwrap();
    let Claimed::TakenOver { fence, previous } = &takeover else {
        panic!("expected a takeover, got {takeover:?}")
    };
    let late = ledger
        .complete(&op, old, "s3://derived/late.json", "late", T0 + 62)
        .await
        .unwrap_err();
    ledger
        .complete(&op, *fence, "s3://derived/r.json", "h2", T0 + 63)
        .await
        .unwrap();

    assert_eq!((old, *fence), (1, 2));
    assert_eq!(previous.status, LedgerStatus::InProgress);
    assert_eq!(late.name(), "Conflict.FencedOut");
    let rec = ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.result_hash.as_deref(), Some("h2"));
    let fences: Vec<_> = rec.attempts.iter().map(|a| a.fence).collect();
    assert_eq!(fences, [1, 2, 2]);
}

#[tokio::test]
async fn lease_is_live_up_to_and_including_its_expiry_second() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    ledger.claim(&op, "p1", T0, &RULES).await.unwrap();

    let at_expiry = ledger.claim(&op, "p1", T0 + 60, &RULES).await;
    let after = ledger.claim(&op, "p1", T0 + 61, &RULES).await;

    assert_eq!(at_expiry.unwrap_err().name(), "Transient.InProgress");
    assert!(matches!(after, Ok(Claimed::TakenOver { fence: 2, .. })));
}

#[tokio::test]
async fn takeover_of_an_accepted_operation_hands_over_the_provider_job_to_reconcile() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    ledger.accept(&op, fence, "job-1", T0 + 10).await.unwrap();

    let takeover = ledger.claim(&op, "p1", T0 + 71, &RULES).await.unwrap();

    let Claimed::TakenOver { fence, previous } = takeover else {
        panic!("expected a takeover")
    };
    assert_eq!(fence, 2);
    assert_eq!(previous.status, LedgerStatus::Accepted);
    assert_eq!(previous.provider_job_id.as_deref(), Some("job-1"));
    let rec = ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.provider_job_id.as_deref(), Some("job-1"), "kept");
    // The new holder reconciled the same job: accepting it again is allowed.
    ledger.accept(&op, 2, "job-1", T0 + 72).await.unwrap();
}

#[tokio::test]
async fn tampered_parameters_are_a_conflict_and_overwrite_nothing() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 1)
        .await
        .unwrap();
    let before = ledger.get(&op).await.unwrap();

    let err = ledger.claim(&op, "p2", T0 + 2, &RULES).await.unwrap_err();

    assert_eq!(err.name(), "Conflict.ParametersChanged");
    assert_eq!(ledger.get(&op).await.unwrap(), before);
}

#[tokio::test]
async fn tampered_parameters_cannot_take_over_an_expired_lease() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    ledger.claim(&op, "p1", T0, &RULES).await.unwrap();

    let err = ledger.claim(&op, "p2", T0 + 61, &RULES).await.unwrap_err();

    assert_eq!(err.name(), "Conflict.ParametersChanged");
    assert_eq!(ledger.get(&op).await.unwrap().unwrap().fence, 1);
}

#[tokio::test]
async fn store_errors_are_transient_and_leave_no_claim_behind() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    *ledger.fail_next.lock().unwrap() = 1;

    let err = ledger.claim(&op, "p1", T0, &RULES).await.unwrap_err();
    let retry = ledger.claim(&op, "p1", T0 + 1, &RULES).await.unwrap();

    assert_eq!(err.family(), crate::Family::Transient);
    assert_eq!(retry, Claimed::Fresh { fence: 1 });
}

#[tokio::test]
async fn store_error_on_completion_is_transient_and_the_retried_completion_lands_once() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    *ledger.fail_next.lock().unwrap() = 1;

    let err = ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 1)
        .await
        .unwrap_err();
    ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 2)
        .await
        .unwrap();

    assert_eq!(err.name(), "Transient.Dependency");
    let rec = ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.status, LedgerStatus::Completed);
}

#[tokio::test]
async fn completion_repeated_after_a_lost_acknowledgement_succeeds_without_a_second_write() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 1)
        .await
        .unwrap();

    let repeat = ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 2)
        .await;
    let different = ledger
        .complete(&op, fence, "s3://derived/other.json", "h9", T0 + 3)
        .await;

    assert_eq!(repeat, Ok(()));
    assert_eq!(different.unwrap_err().name(), "Conflict.FencedOut");
    let rec = ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.attempts.len(), 2, "claim + one completion");
    assert_eq!(rec.result_hash.as_deref(), Some("h1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_invocations_yield_exactly_one_claim() {
    let ledger = Arc::new(MemoryLedger::default());
    let op = op("ocr");
    // All eight claim at once, on four threads, not one after another as spawned.
    let start = Arc::new(tokio::sync::Barrier::new(8));

    let calls: Vec<_> = (0..8)
        .map(|_| {
            let (ledger, op, start) = (ledger.clone(), op.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                ledger.claim(&op, "p1", T0, &RULES).await
            })
        })
        .collect();
    let mut results = Vec::new();
    for call in calls {
        results.push(call.await.unwrap());
    }

    let fresh = results.iter().filter(|r| r.is_ok()).count();
    let busy = results
        .iter()
        .filter(|r| matches!(r, Err(Error::InProgress(_))))
        .count();
    assert_eq!((fresh, busy), (1, 7));
}

#[tokio::test]
async fn failed_operation_replays_its_recorded_error_by_name() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    ledger
        .fail(&op, fence, ErrorKind::OcrFailed, T0 + 1)
        .await
        .unwrap();

    let err = ledger.claim(&op, "p1", T0 + 500, &RULES).await.unwrap_err();

    assert_eq!(err.name(), "Business.OcrFailed");
}

#[tokio::test]
async fn a_transient_error_is_not_recorded_as_a_failure() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());

    let err = ledger
        .fail(&op, fence, ErrorKind::Dependency, T0 + 1)
        .await
        .unwrap_err();

    assert_eq!(err.name(), "Fatal.Internal");
    let rec = ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.status, LedgerStatus::InProgress);
}

#[tokio::test]
async fn unresolved_operation_needs_its_owner_and_is_listed_for_operators() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    ledger.accept(&op, fence, "job-1", T0 + 1).await.unwrap();
    ledger
        .mark_unresolved(&op, fence, "ops-oncall", "check job-1 in Textract", T0 + 2)
        .await
        .unwrap();

    let err = ledger
        .claim(&op, "p1", T0 + 10_000, &RULES)
        .await
        .unwrap_err();
    let listed = ledger.unresolved().await.unwrap();

    assert_eq!(err.name(), "Ambiguous.Unresolved");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].owner.as_deref(), Some("ops-oncall"));
    assert_eq!(
        listed[0].next_action.as_deref(),
        Some("check job-1 in Textract")
    );
}

#[tokio::test]
async fn claim_after_retention_is_refused_as_an_explicit_recovery_decision() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 1)
        .await
        .unwrap();

    let at_end = ledger.claim(&op, "p1", T0 + 86_400, &RULES).await;
    let after = ledger.claim(&op, "p1", T0 + 86_401, &RULES).await;

    assert!(matches!(at_end, Ok(Claimed::AlreadyDone(_))));
    assert_eq!(after.unwrap_err().name(), "Conflict.RetentionExpired");
}

#[tokio::test]
async fn writes_without_a_claim_or_after_the_end_are_fenced_out() {
    let ledger = MemoryLedger::default();
    let op = op("ocr");

    let unclaimed = ledger.accept(&op, 1, "job-1", T0).await.unwrap_err();
    let fence = fence_of(&ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    ledger
        .fail(&op, fence, ErrorKind::OcrFailed, T0 + 1)
        .await
        .unwrap();
    let after_fail = ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 2)
        .await
        .unwrap_err();

    assert_eq!(unclaimed.name(), "Conflict.FencedOut");
    assert_eq!(after_fail.name(), "Conflict.FencedOut");
}

// The pure decisions.

fn record(status: LedgerStatus) -> OperationRecord {
    claimed_record(None, &op("ocr"), "p1", 1, T0, &RULES).with_status(status)
}

impl OperationRecord {
    fn with_status(mut self, status: LedgerStatus) -> Self {
        self.status = status;
        self
    }
}

#[test]
fn decide_claim_follows_the_documented_order() {
    let op = op("ocr");
    let done = record(LedgerStatus::Completed);
    let expired_conflict = record(LedgerStatus::Completed);

    assert_eq!(
        decide_claim(None, &op, "p1", T0),
        Ok(Claimed::Fresh { fence: 1 })
    );
    // Retention is checked before the fingerprint.
    assert_eq!(
        decide_claim(Some(&expired_conflict), &op, "p2", T0 + 86_401)
            .unwrap_err()
            .name(),
        "Conflict.RetentionExpired"
    );
    // The fingerprint before the status: a completed record is no answer to other parameters.
    assert_eq!(
        decide_claim(Some(&done), &op, "p2", T0).unwrap_err().name(),
        "Conflict.ParametersChanged"
    );
    assert!(matches!(
        decide_claim(Some(&done), &op, "p1", T0),
        Ok(Claimed::AlreadyDone(_))
    ));
}

#[test]
fn decide_write_requires_the_holders_fence_and_a_status_it_moves_from() {
    let op = op("ocr");
    let held = record(LedgerStatus::InProgress);
    let accepted = record(LedgerStatus::Accepted);
    let accept = Write::Accept { job_id: "j".into() };
    let complete = Write::Complete {
        result_pointer: "s3://b/k".into(),
        result_hash: "h".into(),
    };

    assert_eq!(
        decide_write(Some(&held), &op, 1, &accept),
        Ok(WriteDecision::Apply)
    );
    assert_eq!(
        decide_write(Some(&held), &op, 2, &accept)
            .unwrap_err()
            .name(),
        "Conflict.FencedOut"
    );
    assert_eq!(
        decide_write(Some(&accepted), &op, 1, &complete),
        Ok(WriteDecision::Apply)
    );
    // Accepting again with another job id is not the same write.
    assert_eq!(
        decide_write(Some(&accepted), &op, 1, &accept)
            .unwrap_err()
            .name(),
        "Conflict.FencedOut"
    );
}

#[test]
fn every_recorded_taxonomy_name_maps_back_to_itself() {
    for kind in ErrorKind::ALL {
        assert_eq!(recorded_error(kind.name(), "d".into()).name(), kind.name());
    }
    assert_eq!(
        recorded_error("Nope.Nothing", "d".into()).name(),
        "Fatal.Internal"
    );
}

#[test]
fn status_names_round_trip() {
    for status in [
        LedgerStatus::InProgress,
        LedgerStatus::Accepted,
        LedgerStatus::Completed,
        LedgerStatus::Failed,
        LedgerStatus::Unresolved,
    ] {
        assert_eq!(LedgerStatus::parse(status.as_str()), Ok(status));
        let json = serde_json::to_value(status).unwrap();
        assert_eq!(json, serde_json::Value::String(status.as_str().into()));
    }
}

mod repeats;
