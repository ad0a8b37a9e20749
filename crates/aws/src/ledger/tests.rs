//! The requests as they go on the wire: an interceptor keeps the serialized body and stops
//! the request before it is sent.

use docket_core::error::ErrorKind;
use docket_core::ids::Tenant;

use super::*;
use crate::capture::{captured_client, Capture};

fn ledger() -> (DynamoLedger, Capture) {
    let (client, capture) = captured_client();
    (DynamoLedger::new(client, "ledger"), capture)
}

fn op() -> OperationId {
    let run = docket_core::memory::test_run(&Tenant::parse("acme").unwrap(), "a.pdf", "v1");
    OperationId::new(&run, "ocr", None)
}

const RULES: LeaseRules = LeaseRules {
    lease_seconds: 60,
    retention_seconds: 3600,
};

#[tokio::test]
async fn claim_is_one_conditional_update_returning_the_old_item_either_way() {
    let (ledger, capture) = ledger();

    let _ = ledger.claim(&op(), "p1", 1000, &RULES).await;

    let sent = capture.0.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    let body = &sent[0];
    assert_eq!(body["TableName"], "ledger");
    assert_eq!(body["Key"]["operationId"]["S"], op().as_str());
    assert_eq!(body["ConditionExpression"], CLAIM_CONDITION);
    assert_eq!(
        body["ConditionExpression"],
        "attribute_not_exists(operationId) OR (#status IN (:inProgress, :accepted) \
         AND leaseExpiresAt < :now AND fingerprint = :fingerprint AND expiresAt >= :now)"
    );
    assert_eq!(body["UpdateExpression"], CLAIM_UPDATE);
    assert_eq!(body["ReturnValues"], "ALL_OLD");
    assert_eq!(body["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");
    let values = &body["ExpressionAttributeValues"];
    assert_eq!(values[":now"]["N"], "1000");
    assert_eq!(values[":leaseExpiresAt"]["N"], "1060");
    assert_eq!(values[":expiresAt"]["N"], "4600");
    assert_eq!(values[":fingerprint"]["S"], "p1");
    assert_eq!(values[":inProgress"]["S"], "in_progress");
    assert_eq!(values[":accepted"]["S"], "accepted");
}

#[tokio::test]
async fn holder_writes_are_conditional_on_the_fence_and_the_status_they_move_from() {
    let (ledger, capture) = ledger();
    let op = op();

    let _ = ledger.accept(&op, 3, "job-1", 1000).await;
    let _ = ledger.complete(&op, 3, "s3://b/k", "h", 1001).await;
    let _ = ledger.fail(&op, 3, ErrorKind::OcrFailed, 1002).await;
    let _ = ledger.mark_unresolved(&op, 3, "ops", "check", 1003).await;

    let sent = capture.0.lock().unwrap().clone();
    let conditions: Vec<_> = sent
        .iter()
        .map(|b| b["ConditionExpression"].clone())
        .collect();
    assert_eq!(
        conditions,
        [
            ACCEPT_CONDITION,
            FINISH_CONDITION,
            FINISH_CONDITION,
            FINISH_CONDITION
        ]
    );
    assert_eq!(ACCEPT_CONDITION, "fence = :fence AND #status = :inProgress");
    assert_eq!(
        FINISH_CONDITION,
        "fence = :fence AND #status IN (:inProgress, :accepted)"
    );
    for body in &sent {
        assert_eq!(body["ExpressionAttributeValues"][":fence"]["N"], "3");
        assert_eq!(body["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");
    }
    let updates: Vec<_> = sent.iter().map(|b| b["UpdateExpression"].clone()).collect();
    assert_eq!(
        updates,
        [
            ACCEPT_UPDATE,
            COMPLETE_UPDATE,
            FAIL_UPDATE,
            UNRESOLVED_UPDATE
        ]
    );
}

#[tokio::test]
async fn a_transient_failure_name_is_refused_before_any_request() {
    let (ledger, capture) = ledger();

    let err = ledger
        .fail(&op(), 1, ErrorKind::Dependency, 1000)
        .await
        .unwrap_err();

    assert_eq!(err.name(), "Fatal.Internal");
    assert!(capture.0.lock().unwrap().is_empty());
}

#[test]
fn claim_entries_read_back_with_their_fence_by_position() {
    let attempt = |fence: Option<u64>, note: &str| match attempt_value(1, fence, note) {
        AttributeValue::L(mut l) => l.remove(0),
        _ => unreachable!(),
    };
    let item: Item = HashMap::from([
        ("operationId".into(), s(op().as_str())),
        ("fingerprint".into(), s("p1")),
        ("status".into(), s("completed")),
        ("leaseExpiresAt".into(), n(61)),
        ("leaseSeconds".into(), n(60)),
        ("fence".into(), n(2)),
        ("createdAt".into(), n(1)),
        ("expiresAt".into(), n(3601)),
        (
            "attempts".into(),
            AttributeValue::L(vec![
                attempt(None, CLAIM_NOTE),
                attempt(Some(1), "accepted"),
                attempt(None, CLAIM_NOTE),
                attempt(Some(2), "completed"),
            ]),
        ),
    ]);

    let rec = record_from(&item).unwrap();

    let fences: Vec<_> = rec.attempts.iter().map(|a| a.fence).collect();
    assert_eq!(fences, [1, 1, 2, 2]);
    assert_eq!(rec.status, LedgerStatus::Completed);
}
