//! Review tasks on DynamoDB (LocalStack) through `DynamoReviewStore`: one task per run however
//! often it is opened (the newest token kept), the first decision wins and the others see it
//! without a second read, a tenant sees only its tasks, no read returns the token, and expiry
//! stops at a delivered decision.

use std::collections::BTreeMap;

use aws_config::SdkConfig;
use aws_sdk_dynamodb::types::{
    AttributeValue, GlobalSecondaryIndex, KeyType, Projection, ProjectionType, Select,
};
use aws_sdk_dynamodb::Client;
use docket_aws::faults::{Faults, Rule};
use docket_aws::review::{DynamoReviewStore, BY_TENANT, INDEX_ATTRIBUTES, KEY, TOKEN_ATTRIBUTE};
use docket_core::ids::{DocumentId, RunId, SourceVersion, Tenant};
use docket_core::model::fields::FieldName;
use docket_core::model::run::ObjectRef;
use docket_core::model::run::TaskToken;
use docket_core::ports::ReviewStore;
use docket_core::review::{
    task_id_for, ExpireOutcome, Expiry, FieldSource, OpenTask, Opened, Refusal, ReviewDecision,
    ReviewField, ReviewStatus, ReviewTask, Reviewer, Verdict,
};
use docket_core::validate::Reason;
use docket_core::Error;
use docket_e2e::resource::{self, Resource};
use docket_e2e::util;

use crate::dynamodb::{key, string_attribute};
use crate::requests::{counting_client, Requests};

struct Fixture {
    config: SdkConfig,
    store: DynamoReviewStore,
    requests: Requests,
    client: Client,
    table: Resource,
}

/// A fresh review table as the CloudFormation one must be: hash key `taskId`; index
/// `by-tenant` (hash `tenant`, range `createdAt`) projecting the task's attributes, not the
/// token. The store's client counts its requests and does not retry.
async fn fixture() -> Fixture {
    let config = util::aws().await;
    let client = Client::new(&config);
    let table = resource::table(&client, "reviews", |table| {
        table
            .attribute_definitions(string_attribute(KEY))
            .attribute_definitions(string_attribute("tenant"))
            .attribute_definitions(string_attribute("createdAt"))
            .key_schema(key(KEY, KeyType::Hash))
            .global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name(BY_TENANT)
                    .key_schema(key("tenant", KeyType::Hash))
                    .key_schema(key("createdAt", KeyType::Range))
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::Include)
                            .set_non_key_attributes(Some(
                                INDEX_ATTRIBUTES.iter().map(|a| a.to_string()).collect(),
                            ))
                            .build(),
                    )
                    .build()
                    .unwrap(),
            )
    })
    .await;
    let (counted, requests) = counting_client(&config);
    Fixture {
        store: DynamoReviewStore::from_client(counted, &table),
        config,
        requests,
        client,
        table,
    }
}

fn tenant() -> Tenant {
    Tenant::parse(&util::unique("t")).unwrap()
}

/// A pending task of `tenant`, created at second `created` of the day.
fn task(tenant: &Tenant, created: u32) -> ReviewTask {
    let document_id = DocumentId::new(tenant, &util::unique("invoice"));
    let source = SourceVersion {
        version_id: "v1".into(),
        sha256: "ab".repeat(32),
    };
    let run_id = RunId::new(&document_id, &source, "cfg-review", 0);
    ReviewTask {
        task_id: task_id_for(&run_id),
        tenant: tenant.clone(),
        reasons: vec![Reason {
            code: "low_confidence".into(),
            field: Some(FieldName::TotalAmount),
            detail: "total_amount confidence 0.55 is below the minimum 0.80".into(),
        }],
        fields: BTreeMap::from([(
            FieldName::TotalAmount,
            ReviewField {
                value: "1234.50".into(),
                confidence: 0.55,
                source: FieldSource::Extracted { page: 1, line: 7 },
            },
        )]),
        document: ObjectRef::new("raw", format!("inbox/{tenant}/{document_id}.pdf")),
        ocr: ObjectRef::new("normalized", format!("{run_id}/ocr.json")),
        report: ObjectRef::new("derived", format!("{run_id}/validation.json")),
        created_at: format!("2026-03-20T10:{:02}:{:02}.000Z", created / 60, created % 60),
        deadline: "2026-03-21T10:00:00.000Z".into(),
        status: ReviewStatus::Pending,
        decision: None,
        delivered_at: None,
        expiry: None,
        document_id,
        run_id,
    }
}

/// A token that no task field could contain by accident.
fn token(n: u32) -> String {
    format!(
        "AAAAKgAAAAIAAAAAAAAAA-secret-token-{n}-{}",
        util::unique("x")
    )
}

fn open(task: &ReviewTask, token: &str) -> OpenTask {
    OpenTask {
        task: task.clone(),
        token: TaskToken::new(token).unwrap(),
    }
}

fn approval(id: &str, tenant: &Tenant, second: u32) -> ReviewDecision {
    ReviewDecision {
        reviewer: Reviewer::new(id, tenant.clone()).unwrap(),
        decided_at: format!("2026-03-20T11:00:{second:02}.000Z"),
        verdict: Verdict::Approve {
            corrections: BTreeMap::from([(FieldName::TotalAmount, "1243.50".to_string())]),
            comment: None,
        },
        changes: vec![],
    }
}

fn expiry(reason: &str) -> Expiry {
    Expiry {
        reason: reason.into(),
        at: "2026-03-21T10:00:01.000Z".into(),
    }
}

/// The items of the table with this task id, read raw (every attribute).
async fn raw_items(f: &Fixture, task: &ReviewTask) -> Vec<BTreeMap<String, AttributeValue>> {
    let out = f
        .client
        .query()
        .table_name(&f.table)
        .key_condition_expression("taskId = :id")
        .expression_attribute_values(":id", AttributeValue::S(task.task_id.to_string()))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    out.items()
        .iter()
        .map(|i| i.clone().into_iter().collect())
        .collect()
}

#[tokio::test]
async fn opening_twice_keeps_one_task_and_stores_the_second_opens_token() {
    // given a task opened by the first attempt of the Task
    let f = fixture().await;
    let tenant = tenant();
    let first = task(&tenant, 0);
    let (t1, t2) = (token(1), token(2));
    let created = f.store.open(open(&first, &t1)).await.unwrap();
    f.requests.take();
    // when the Task is retried: a new token, a later deadline, a later clock
    let mut retried = first.clone();
    retried.deadline = "2026-03-22T10:00:00.000Z".into();
    retried.created_at = "2026-03-20T10:30:00.000Z".into();
    let reopened = f.store.open(open(&retried, &t2)).await.unwrap();
    let cost = f.requests.take();
    // then there is still one task, created by the first open, waiting until the new deadline,
    // and its token is the second one
    assert_eq!(created, Opened::Created(first.clone()));
    let mut expected = first.clone();
    expected.deadline = retried.deadline.clone();
    assert_eq!(reopened, Opened::Reopened(expected.clone()));
    assert_eq!(cost, BTreeMap::from([("UpdateItem".to_string(), 1)]));
    assert_eq!(raw_items(&f, &first).await.len(), 1);
    assert_eq!(f.store.get(&first.task_id).await.unwrap(), Some(expected));
    assert_eq!(f.store.list(Some(&tenant), None).await.unwrap().len(), 1);
    let stored = f.store.token(&first.task_id).await.unwrap().unwrap();
    assert_eq!(stored.expose(), t2);
}

#[tokio::test]
async fn opening_a_decided_task_again_writes_nothing_and_keeps_its_token() {
    let f = fixture().await;
    let tenant = tenant();
    let t = task(&tenant, 0);
    let (t1, t2) = (token(1), token(2));
    f.store.open(open(&t, &t1)).await.unwrap();
    let decided = f
        .store
        .decide(&t.task_id, &approval("alice", &tenant, 1))
        .await
        .unwrap()
        .unwrap();

    let again = f.store.open(open(&t, &t2)).await.unwrap();

    assert_eq!(again, Opened::Closed(decided));
    let stored = f.store.token(&t.task_id).await.unwrap().unwrap();
    assert_eq!(stored.expose(), t1);
}

#[tokio::test]
async fn concurrent_decisions_one_wins_and_the_others_see_its_decision_from_the_refusal() {
    // given a pending task and eight reviewers of its tenant
    let f = fixture().await;
    let tenant = tenant();
    let t = task(&tenant, 0);
    f.store.open(open(&t, &token(1))).await.unwrap();
    f.requests.take();
    // when they all decide at once
    let calls: Vec<_> = (0..8)
        .map(|i| {
            let (store, id) = (f.store.clone(), t.task_id.clone());
            let decision = approval(&format!("reviewer-{i}"), &tenant, i);
            tokio::spawn(async move { (decision.clone(), store.decide(&id, &decision).await) })
        })
        .collect();
    let mut results = Vec::new();
    for call in calls {
        results.push(call.await.unwrap());
    }
    let cost = f.requests.take();
    // then exactly one decision is recorded
    let winners: Vec<_> = results
        .iter()
        .filter(|(_, r)| matches!(r, Ok(Ok(_))))
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    let winner = &winners[0].0;
    let recorded = f.store.get(&t.task_id).await.unwrap().unwrap();
    assert_eq!(recorded.status, ReviewStatus::Decided);
    assert_eq!(recorded.decision.as_ref(), Some(winner));
    // and every other one is refused with the winner's decision, each by one request
    for (decision, result) in &results {
        match result {
            Ok(Ok(task)) => assert_eq!(task, &recorded),
            Ok(Err(Refusal::AlreadyDecided(seen))) => {
                assert_ne!(decision, winner);
                assert_eq!(seen, &recorded);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(cost, BTreeMap::from([("UpdateItem".to_string(), 8)]));
}

#[tokio::test]
async fn a_decision_by_another_tenant_or_on_a_missing_task_is_not_found() {
    let f = fixture().await;
    let tenant = tenant();
    let t = task(&tenant, 0);
    f.store.open(open(&t, &token(1))).await.unwrap();

    let foreign = f
        .store
        .decide(&t.task_id, &approval("mallory", &self::tenant(), 1))
        .await
        .unwrap_err();
    let missing = f
        .store
        .decide(&task(&tenant, 1).task_id, &approval("alice", &tenant, 1))
        .await
        .unwrap_err();

    assert_eq!(foreign.name(), "Business.ReviewNotFound");
    assert_eq!(missing.name(), "Business.ReviewNotFound");
    let recorded = f.store.get(&t.task_id).await.unwrap().unwrap();
    assert_eq!(recorded.status, ReviewStatus::Pending);
}

#[tokio::test]
async fn a_decision_whose_acknowledgement_was_lost_is_acknowledged_when_repeated() {
    // given a store whose first decision write lands but loses its answer
    let f = fixture().await;
    let tenant = tenant();
    let t = task(&tenant, 0);
    f.store.open(open(&t, &token(1))).await.unwrap();
    let faults = Faults::builder()
        .rule(Rule::lose_response("dynamodb", "UpdateItem").nth(1))
        .build();
    let lossy = DynamoReviewStore::with_faults(&f.config, &f.table, &faults);
    let decision = approval("alice", &tenant, 1);
    // when the decision is made, then repeated
    let lost = lossy.decide(&t.task_id, &decision).await;
    let repeated = lossy.decide(&t.task_id, &decision).await.unwrap();
    let other = lossy
        .decide(&t.task_id, &approval("bob", &tenant, 2))
        .await
        .unwrap();
    // then the first is ambiguous, the repeat is acknowledged, a different one refused
    assert!(matches!(lost, Err(Error::OutcomeUnknown(_))), "{lost:?}");
    let decided = repeated.unwrap();
    assert_eq!(decided.decision, Some(decision));
    assert_eq!(other, Err(Refusal::AlreadyDecided(decided)));
}

#[tokio::test]
async fn listing_by_tenant_returns_only_that_tenants_tasks_oldest_first() {
    let f = fixture().await;
    let (acme, globex) = (tenant(), tenant());
    let (late, early, pending) = (task(&acme, 20), task(&acme, 10), task(&acme, 30));
    let theirs = task(&globex, 0);
    for t in [&late, &early, &pending, &theirs] {
        f.store.open(open(t, &token(1))).await.unwrap();
    }
    for t in [&late, &early] {
        f.store
            .decide(&t.task_id, &approval("alice", &acme, 1))
            .await
            .unwrap()
            .unwrap();
    }

    let all = f.store.list(Some(&acme), None).await.unwrap();
    let decided = f
        .store
        .list(Some(&acme), Some(ReviewStatus::Decided))
        .await
        .unwrap();
    let everyone = f.store.list(None, None).await.unwrap();

    let ids = |ts: &[ReviewTask]| ts.iter().map(|t| t.task_id.clone()).collect::<Vec<_>>();
    assert_eq!(
        ids(&all),
        ids(&[early.clone(), late.clone(), pending.clone()])
    );
    assert!(all.iter().all(|t| t.tenant == acme));
    assert_eq!(ids(&decided), ids(&[early, late]));
    assert_eq!(everyone.len(), 4);
    assert!(everyone.iter().any(|t| t.tenant == globex));
}

#[tokio::test]
async fn no_read_but_token_returns_the_token_not_even_the_index() {
    // given tasks in every status, each with its own token
    let f = fixture().await;
    let tenant = tenant();
    let (pending, decided, expired) = (task(&tenant, 0), task(&tenant, 1), task(&tenant, 2));
    let tokens = [token(1), token(2), token(3)];
    for (t, tok) in [&pending, &decided, &expired].into_iter().zip(&tokens) {
        f.store.open(open(t, tok)).await.unwrap();
    }
    f.store
        .decide(&decided.task_id, &approval("alice", &tenant, 1))
        .await
        .unwrap()
        .unwrap();
    f.store
        .expire(&expired.task_id, &expiry("States.Timeout"))
        .await
        .unwrap();
    // when they are read every way a reviewer or operator can
    let mut returned = Vec::new();
    for t in [&pending, &decided, &expired] {
        returned.push(f.store.get(&t.task_id).await.unwrap().unwrap());
    }
    returned.extend(f.store.list(Some(&tenant), None).await.unwrap());
    for status in ReviewStatus::ALL {
        returned.extend(f.store.list(Some(&tenant), Some(status)).await.unwrap());
    }
    returned.extend(f.store.list(None, None).await.unwrap());
    // then no returned task, serialized, contains a token
    assert!(returned.len() >= 9);
    for t in &returned {
        let json = serde_json::to_string(t).unwrap();
        for tok in &tokens {
            assert!(!json.contains(tok.as_str()), "{json}");
        }
        assert!(!json.contains("taskToken"));
    }
    // and the index does not even hold it
    let index = f
        .client
        .query()
        .table_name(&f.table)
        .index_name(BY_TENANT)
        .key_condition_expression("tenant = :t")
        .expression_attribute_values(":t", AttributeValue::S(tenant.to_string()))
        .select(Select::AllProjectedAttributes)
        .send()
        .await
        .unwrap();
    assert_eq!(index.items().len(), 3);
    for item in index.items() {
        assert!(!item.contains_key(TOKEN_ATTRIBUTE), "{item:?}");
        assert!(item.contains_key("fields"));
    }
    // while the token read gives each its own
    for (t, tok) in [&pending, &decided, &expired].into_iter().zip(&tokens) {
        let stored = f.store.token(&t.task_id).await.unwrap().unwrap();
        assert_eq!(stored.expose(), tok);
    }
}

#[tokio::test]
async fn expiry_moves_pending_and_undelivered_decisions_and_stops_at_a_delivered_one() {
    // given a pending task, a decided one whose callback failed, and a delivered one
    let f = fixture().await;
    let tenant = tenant();
    let (pending, late, delivered) = (task(&tenant, 0), task(&tenant, 1), task(&tenant, 2));
    for t in [&pending, &late, &delivered] {
        f.store.open(open(t, &token(1))).await.unwrap();
    }
    for t in [&late, &delivered] {
        f.store
            .decide(&t.task_id, &approval("alice", &tenant, 1))
            .await
            .unwrap()
            .unwrap();
    }
    let acknowledged = f
        .store
        .mark_delivered(&delivered.task_id, "2026-03-20T11:00:02.000Z")
        .await
        .unwrap();
    let timed_out = expiry("TaskTimedOut");
    // when each is expired
    let from_pending = f.store.expire(&pending.task_id, &timed_out).await.unwrap();
    let from_late = f.store.expire(&late.task_id, &timed_out).await.unwrap();
    let from_delivered = f
        .store
        .expire(&delivered.task_id, &timed_out)
        .await
        .unwrap();
    f.requests.take();
    let repeated = f.store.expire(&late.task_id, &timed_out).await.unwrap();
    let other = f
        .store
        .expire(&late.task_id, &expiry("InvalidToken"))
        .await
        .unwrap();
    let cost = f.requests.take();
    let decide_late = f
        .store
        .decide(&pending.task_id, &approval("bob", &tenant, 5))
        .await
        .unwrap();
    // then pending and undelivered ones expire (the late decision kept for audit)
    let ExpireOutcome::Expired(p) = &from_pending else {
        panic!("expected Expired, got {from_pending:?}")
    };
    assert_eq!(p.status, ReviewStatus::Expired);
    assert_eq!(p.expiry.as_ref(), Some(&timed_out));
    let ExpireOutcome::Expired(l) = &from_late else {
        panic!("expected Expired, got {from_late:?}")
    };
    assert_eq!(l.status, ReviewStatus::Expired);
    assert_eq!(l.decision, Some(approval("alice", &tenant, 1)));
    // the delivered one does not
    assert_eq!(
        acknowledged.delivered_at.as_deref(),
        Some("2026-03-20T11:00:02.000Z")
    );
    assert_eq!(from_delivered, ExpireOutcome::Delivered(acknowledged));
    // a repeat is acknowledged, another reason is told it expired already, one request each
    assert_eq!(repeated, from_late);
    assert_eq!(other, ExpireOutcome::AlreadyExpired(l.clone()));
    assert_eq!(cost, BTreeMap::from([("UpdateItem".to_string(), 2)]));
    // and a decision on an expired task is refused as expired
    assert_eq!(decide_late, Err(Refusal::Expired(p.clone())));
    assert_eq!(
        f.store.get(&pending.task_id).await.unwrap().as_ref(),
        Some(p)
    );
}
