//! The operation ledger on DynamoDB (LocalStack): Powertools' idempotency test matrix (first
//! execution, in progress, completed, expired, tampered payload, store errors, concurrent
//! invocations) through `DynamoLedger`, with the DynamoDB requests each case costs counted on the
//! wire and printed for the benchmark note (`--nocapture` shows them).

use std::collections::BTreeMap;

use aws_sdk_dynamodb::Client;
use docket_aws::ledger::DynamoLedger;
use docket_core::error::ErrorKind;
use docket_core::ids::{OperationId, Tenant};
use docket_core::ledger::{Claimed, LeaseRules, LedgerStatus, Write};
use docket_core::ports::Ledger;
use docket_core::{Error, Family};
use docket_e2e::resource::{self, Resource};
use docket_e2e::util;
use reqwest::Method;
use serde_json::json;

use crate::dynamodb::enable_ttl;
use crate::requests::{counting_client, Requests};

const RULES: LeaseRules = LeaseRules {
    lease_seconds: 60,
    retention_seconds: 86_400,
};
const T0: i64 = 1_700_000_000;

struct Fixture {
    ledger: DynamoLedger,
    requests: Requests,
    client: Client,
    table: Resource,
}

/// A fresh ledger table (key, attributes and the sparse `by-case` index as `LedgerTable` in
/// infra/template.yaml, TTL on `expiresAt`) in `region`, and a ledger over it whose client
/// counts its requests and does not retry (so each injected fault is seen once).
async fn fixture_in(region: &str) -> Fixture {
    let config = util::aws_in(region).await;
    let client = Client::new(&config);
    let table = resource::table(&client, "ledger", |table| {
        crate::saga::as_in_template("LedgerTable", table)
    })
    .await;
    enable_ttl(&client, &table, "expiresAt").await;
    let (counted, requests) = counting_client(&config);
    Fixture {
        ledger: DynamoLedger::new(counted, &table),
        requests,
        client,
        table,
    }
}

impl Fixture {
    /// Claims `op` at `T0` and completes it a second later (result `r.json`, hash `h1`);
    /// returns the fence.
    async fn claim_and_complete(&self, op: &OperationId) -> u64 {
        let fence = fence_of(&self.ledger.claim(op, "p1", T0, &RULES).await.unwrap());
        self.ledger
            .complete(op, fence, "s3://derived/r.json", "h1", T0 + 1)
            .await
            .unwrap();
        fence
    }
}

async fn fixture() -> Fixture {
    fixture_in("us-east-1").await
}

fn op() -> OperationId {
    let tenant = Tenant::parse("acme").unwrap();
    let run = docket_core::memory::test_run(&tenant, &util::unique("invoice"), "v1");
    OperationId::new(&run, "ocr", None)
}

fn fence_of(claimed: &Claimed) -> u64 {
    match claimed {
        Claimed::Fresh { fence } | Claimed::TakenOver { fence, .. } => *fence,
        Claimed::AlreadyDone(rec) => panic!("expected a claim, got done {rec:?}"),
    }
}

fn total(counts: &BTreeMap<String, usize>) -> usize {
    counts.values().sum()
}

#[tokio::test]
async fn first_run_claims_fresh_and_completes_in_two_writes() {
    let f = fixture().await;
    let op = op();

    let claimed = f.ledger.claim(&op, "p1", T0, &RULES).await.unwrap();
    f.ledger
        .complete(&op, fence_of(&claimed), "s3://derived/r.json", "h1", T0 + 1)
        .await
        .unwrap();
    let cost = f.requests.take();

    println!("ledger requests, first run (claim + complete): {cost:?}");
    assert_eq!(claimed, Claimed::Fresh { fence: 1 });
    assert_eq!(cost, BTreeMap::from([("UpdateItem".to_string(), 2)]));
    let rec = f.ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.status, LedgerStatus::Completed);
    assert_eq!(rec.fence, 1);
    assert_eq!(rec.created_at, T0);
    assert_eq!(rec.expires_at, T0 + 86_400);
    let fences: Vec<_> = rec.attempts.iter().map(|a| a.fence).collect();
    assert_eq!(fences, [1, 1]);
}

#[tokio::test]
async fn first_run_through_a_provider_costs_three_writes() {
    let f = fixture().await;
    let op = op();

    let fence = fence_of(&f.ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    f.ledger.accept(&op, fence, "job-1", T0 + 5).await.unwrap();
    f.ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 30)
        .await
        .unwrap();
    let cost = f.requests.take();

    println!("ledger requests, first run (claim + accept + complete): {cost:?}");
    assert_eq!(total(&cost), 3);
    let rec = f.ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.provider_job_id.as_deref(), Some("job-1"));
    assert_eq!(
        rec.lease_expires_at,
        T0 + 5 + 60,
        "accept extended the lease"
    );
}

#[tokio::test]
async fn duplicate_during_a_live_claim_is_refused_in_progress_by_one_failed_write() {
    let f = fixture().await;
    let op = op();
    f.ledger.claim(&op, "p1", T0, &RULES).await.unwrap();
    let before = f.ledger.get(&op).await.unwrap();
    f.requests.take();

    let err = f
        .ledger
        .claim(&op, "p1", T0 + 30, &RULES)
        .await
        .unwrap_err();
    let cost = f.requests.take();

    println!("ledger requests, duplicate while in progress: {cost:?}");
    assert_eq!(err.name(), "Transient.InProgress");
    assert_eq!(cost, BTreeMap::from([("UpdateItem".to_string(), 1)]));
    assert_eq!(f.ledger.get(&op).await.unwrap(), before);
}

#[tokio::test]
async fn completed_replay_returns_the_recorded_result_in_one_request_without_the_effect() {
    let f = fixture().await;
    let op = op();
    f.claim_and_complete(&op).await;
    f.requests.take();

    let replay = f.ledger.claim(&op, "p1", T0 + 3_600, &RULES).await.unwrap();
    let cost = f.requests.take();

    println!("ledger requests, completed replay: {cost:?}");
    assert_eq!(cost, BTreeMap::from([("UpdateItem".to_string(), 1)]));
    let Claimed::AlreadyDone(rec) = replay else {
        panic!("expected done, got {replay:?}")
    };
    assert_eq!(rec.result_pointer.as_deref(), Some("s3://derived/r.json"));
    assert_eq!(rec.result_hash.as_deref(), Some("h1"));
    assert_eq!(rec.attempts.len(), 2, "the replay appended nothing");
}

#[tokio::test]
async fn expired_lease_is_taken_over_with_fence_plus_one_and_the_late_completion_is_fenced_out() {
    let f = fixture().await;
    let op = op();
    let old = fence_of(&f.ledger.claim(&op, "p1", T0, &RULES).await.unwrap());

    let takeover = f.ledger.claim(&op, "p1", T0 + 61, &RULES).await.unwrap();
    let Claimed::TakenOver { fence, previous } = takeover else {
        panic!("expected a takeover, got {takeover:?}")
    };
    let late = f
        .ledger
        .complete(&op, old, "s3://derived/late.json", "late", T0 + 62)
        .await
        .unwrap_err();
    f.ledger
        .complete(&op, fence, "s3://derived/r.json", "h2", T0 + 63)
        .await
        .unwrap();

    assert_eq!((old, fence), (1, 2));
    assert_eq!(previous.status, LedgerStatus::InProgress);
    assert_eq!(previous.fence, 1);
    assert_eq!(late.name(), "Conflict.FencedOut");
    let rec = f.ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.result_hash.as_deref(), Some("h2"));
    assert_eq!(rec.created_at, T0, "a takeover keeps the creation time");
    let fences: Vec<_> = rec.attempts.iter().map(|a| a.fence).collect();
    assert_eq!(fences, [1, 2, 2]);
}

#[tokio::test]
async fn takeover_of_an_accepted_operation_hands_over_the_provider_job() {
    let f = fixture().await;
    let op = op();
    let fence = fence_of(&f.ledger.claim(&op, "p1", T0, &RULES).await.unwrap());
    f.ledger.accept(&op, fence, "job-1", T0 + 10).await.unwrap();

    let live = f
        .ledger
        .claim(&op, "p1", T0 + 69, &RULES)
        .await
        .unwrap_err();
    let takeover = f.ledger.claim(&op, "p1", T0 + 71, &RULES).await.unwrap();

    assert_eq!(live.name(), "Transient.InProgress");
    let Claimed::TakenOver { fence, previous } = takeover else {
        panic!("expected a takeover, got {takeover:?}")
    };
    assert_eq!(fence, 2);
    assert_eq!(previous.status, LedgerStatus::Accepted);
    assert_eq!(previous.provider_job_id.as_deref(), Some("job-1"));
}

#[tokio::test]
async fn tampered_parameters_are_a_conflict_and_overwrite_nothing() {
    let f = fixture().await;
    let op = op();
    f.ledger.claim(&op, "p1", T0, &RULES).await.unwrap();
    let before = f.ledger.get(&op).await.unwrap();

    let live = f.ledger.claim(&op, "p2", T0 + 1, &RULES).await.unwrap_err();
    let expired = f
        .ledger
        .claim(&op, "p2", T0 + 61, &RULES)
        .await
        .unwrap_err();

    assert_eq!(live.name(), "Conflict.ParametersChanged");
    assert_eq!(expired.name(), "Conflict.ParametersChanged");
    assert_eq!(f.ledger.get(&op).await.unwrap(), before);
}

#[tokio::test]
async fn completion_repeated_after_a_lost_acknowledgement_succeeds_without_writing_again() {
    let f = fixture().await;
    let op = op();
    let fence = f.claim_and_complete(&op).await;

    let repeat = f
        .ledger
        .complete(&op, fence, "s3://derived/r.json", "h1", T0 + 2)
        .await;
    let different = f
        .ledger
        .complete(&op, fence, "s3://derived/x.json", "h9", T0 + 3)
        .await;

    assert_eq!(repeat, Ok(()));
    assert_eq!(different.unwrap_err().name(), "Conflict.FencedOut");
    let rec = f.ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.attempts.len(), 2);
    assert_eq!(rec.result_hash.as_deref(), Some("h1"));
}

#[tokio::test]
async fn concurrent_claims_yield_exactly_one_holder() {
    let f = fixture().await;
    let op = op();

    let calls: Vec<_> = (0..8)
        .map(|_| {
            let (ledger, op) = (f.ledger.clone(), op.clone());
            tokio::spawn(async move { ledger.claim(&op, "p1", T0, &RULES).await })
        })
        .collect();
    let mut results = Vec::new();
    for call in calls {
        results.push(call.await.unwrap());
    }

    let holders = results.iter().filter(|r| r.is_ok()).count();
    let busy = results
        .iter()
        .filter(|r| matches!(r, Err(Error::InProgress(_))))
        .count();
    assert_eq!((holders, busy), (1, 7), "{results:?}");
    assert_eq!(f.ledger.get(&op).await.unwrap().unwrap().fence, 1);
}

#[tokio::test]
async fn failed_operation_replays_its_error_and_unresolved_one_is_listed_with_its_owner() {
    let f = fixture().await;
    let failed = op();
    let unknown = op();
    let a = fence_of(&f.ledger.claim(&failed, "p1", T0, &RULES).await.unwrap());
    f.ledger
        .fail(&failed, a, ErrorKind::OcrFailed, T0 + 1)
        .await
        .unwrap();
    let b = fence_of(&f.ledger.claim(&unknown, "p1", T0, &RULES).await.unwrap());
    f.ledger
        .mark_unresolved(&unknown, b, "ops-oncall", "look up job-7", T0 + 1)
        .await
        .unwrap();

    let replayed = f.ledger.claim(&failed, "p1", T0 + 99, &RULES).await;
    let blocked = f.ledger.claim(&unknown, "p1", T0 + 99, &RULES).await;
    let listed = f.ledger.unresolved().await.unwrap();

    assert_eq!(replayed.unwrap_err().name(), "Business.OcrFailed");
    assert_eq!(blocked.unwrap_err().name(), "Ambiguous.Unresolved");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].operation_id, unknown);
    assert_eq!(listed[0].owner.as_deref(), Some("ops-oncall"));
    assert_eq!(listed[0].next_action.as_deref(), Some("look up job-7"));
}

#[tokio::test]
async fn a_resolved_operation_leaves_the_sparse_index_and_is_decided_once() {
    let f = fixture().await;
    let unknown = op();
    let a = fence_of(&f.ledger.claim(&unknown, "p1", T0, &RULES).await.unwrap());
    f.ledger
        .mark_unresolved(&unknown, a, "ops-oncall", "look up job-7", T0 + 1)
        .await
        .unwrap();
    let listed_before = f.ledger.unresolved().await.unwrap().len();
    let resolve = |by: &str| Write::Resolve {
        by: by.into(),
        note: "job-7 found".into(),
    };

    f.ledger
        .write(&unknown, a, resolve("olivia"), T0 + 2)
        .await
        .unwrap();
    let repeated = f.ledger.write(&unknown, a, resolve("olivia"), T0 + 3).await;
    let other = f.ledger.write(&unknown, a, resolve("oscar"), T0 + 3).await;

    assert_eq!(listed_before, 1, "the index held it while unresolved");
    assert!(f.ledger.unresolved().await.unwrap().is_empty());
    let rec = f.ledger.get(&unknown).await.unwrap().unwrap();
    assert_eq!(rec.status, LedgerStatus::Resolved);
    assert_eq!(rec.resolved_by.as_deref(), Some("olivia"));
    assert_eq!(rec.resolution.as_deref(), Some("job-7 found"));
    assert!(
        repeated.is_ok(),
        "the same write after a lost answer: {repeated:?}"
    );
    assert_eq!(other.unwrap_err().name(), "Conflict.FencedOut");
    let blocked = f.ledger.claim(&unknown, "p1", T0 + 99, &RULES).await;
    assert_eq!(blocked.unwrap_err().name(), "Conflict.AlreadyDecided");
}

#[tokio::test]
async fn claim_past_retention_is_refused_until_an_operator_decides() {
    let f = fixture().await;
    let op = op();
    f.claim_and_complete(&op).await;
    let never_finished = self::op();
    f.ledger
        .claim(&never_finished, "p1", T0, &RULES)
        .await
        .unwrap();

    let done = f.ledger.claim(&op, "p1", T0 + 86_401, &RULES).await;
    let held = f
        .ledger
        .claim(&never_finished, "p1", T0 + 86_401, &RULES)
        .await;

    assert_eq!(done.unwrap_err().name(), "Conflict.RetentionExpired");
    assert_eq!(held.unwrap_err().name(), "Conflict.RetentionExpired");
    assert_eq!(
        f.ledger.get(&never_finished).await.unwrap().unwrap().fence,
        1
    );
}

#[tokio::test]
async fn store_errors_are_transient_and_leave_no_claim_behind() {
    // A region of its own, so the fault cannot touch the other tests.
    const REGION: &str = "me-central-1";
    let f = fixture_in(REGION).await;
    let op = op();
    let rule = json!([{
        "service": "dynamodb", "operation": "UpdateItem", "region": REGION, "probability": 1,
        "error": {"statusCode": 400, "code": "ProvisionedThroughputExceededException"}
    }]);

    util::chaos(Method::PATCH, "faults", &rule).await;
    let during = f.ledger.claim(&op, "p1", T0, &RULES).await;
    util::chaos(Method::DELETE, "faults", &rule).await;
    let stored = f
        .client
        .get_item()
        .table_name(&f.table)
        .key(
            "operationId",
            aws_sdk_dynamodb::types::AttributeValue::S(op.as_str().into()),
        )
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    let after = f.ledger.claim(&op, "p1", T0 + 1, &RULES).await;

    let err = during.unwrap_err();
    assert_eq!(err.family(), Family::Transient, "{err:?}");
    assert_eq!(err.name(), "Transient.Dependency");
    assert!(stored.item().is_none());
    assert_eq!(after, Ok(Claimed::Fresh { fence: 1 }));
}
