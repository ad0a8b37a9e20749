//! The requests as they go on the wire: an interceptor keeps the serialized body and stops
//! the request before it is sent.

use std::collections::BTreeMap;

use docket_core::ids::{DocumentId, RunId};
use docket_core::model::fields::FieldName;
use docket_core::model::run::ObjectRef;
use docket_core::review::{task_id_for, FieldSource, ReviewField, Reviewer, Verdict};
use docket_core::validate::Reason;
use serde_json::Value;

use super::*;
use crate::capture::{captured_client, Capture};

fn store() -> (DynamoReviewStore, Capture) {
    let (client, capture) = captured_client();
    (DynamoReviewStore::from_client(client, "reviews"), capture)
}

const TOKEN: &str = "AAAA-the-secret-task-token";

fn task() -> ReviewTask {
    let tenant = Tenant::parse("acme").unwrap();
    let document_id = DocumentId::new(&tenant, "a.pdf");
    let run_id = RunId::new(
        &document_id,
        &docket_core::ids::SourceVersion {
            version_id: "v1".into(),
            sha256: "ab".repeat(32),
        },
        "cfg",
        0,
    );
    ReviewTask {
        task_id: task_id_for(&run_id),
        tenant,
        document_id,
        run_id,
        reasons: vec![Reason {
            code: "low_confidence".into(),
            field: Some(FieldName::TotalAmount),
            detail: "low".into(),
        }],
        fields: BTreeMap::from([(
            FieldName::TotalAmount,
            ReviewField {
                value: "1234.50".into(),
                confidence: 0.55,
                source: FieldSource::Extracted { page: 1, line: 7 },
            },
        )]),
        document: ObjectRef::new("raw", "inbox/acme/a.pdf"),
        ocr: ObjectRef::new("normalized", "ocr.json"),
        report: ObjectRef::new("derived", "validation.json"),
        created_at: "2026-03-20T09:46:40.000Z".into(),
        deadline: "2026-03-21T09:46:40.000Z".into(),
        status: ReviewStatus::Pending,
        decision: None,
        delivered_at: None,
        expiry: None,
    }
}

fn decision() -> ReviewDecision {
    ReviewDecision {
        reviewer: Reviewer::new("alice", Tenant::parse("acme").unwrap()).unwrap(),
        decided_at: "2026-03-20T10:00:00.000Z".into(),
        verdict: Verdict::Reject {
            reason: "duplicate".into(),
        },
        changes: vec![],
    }
}

fn sent(capture: &Capture) -> Vec<Value> {
    capture.0.lock().unwrap().clone()
}

#[tokio::test]
async fn open_is_one_conditional_update_that_creates_or_reopens_a_pending_task() {
    let (store, capture) = store();

    let _ = store
        .open(OpenTask {
            task: task(),
            token: TaskToken::new(TOKEN).unwrap(),
        })
        .await;

    let sent = sent(&capture);
    assert_eq!(sent.len(), 1);
    let body = &sent[0];
    assert_eq!(body["TableName"], "reviews");
    assert_eq!(body["Key"]["taskId"]["S"], task().task_id.as_str());
    assert_eq!(
        body["ConditionExpression"],
        "attribute_not_exists(#taskId) OR \
         (#status = :pending AND #runId = :runId AND #tenant = :tenant)"
    );
    assert_eq!(body["UpdateExpression"], OPEN_UPDATE);
    assert_eq!(body["ReturnValues"], "ALL_OLD");
    assert_eq!(body["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");
    let values = &body["ExpressionAttributeValues"];
    assert_eq!(values[":token"]["S"], TOKEN);
    assert_eq!(values[":pending"]["S"], "pending");
    assert_eq!(values[":deadline"]["S"], "2026-03-21T09:46:40.000Z");
    assert_eq!(body["ExpressionAttributeNames"]["#taskToken"], "taskToken");
    // every name and value is used (DynamoDB refuses unused ones)
    let expressions = format!(
        "{} {}",
        body["ConditionExpression"], body["UpdateExpression"]
    );
    for key in body["ExpressionAttributeNames"]
        .as_object()
        .unwrap()
        .keys()
        .chain(
            body["ExpressionAttributeValues"]
                .as_object()
                .unwrap()
                .keys(),
        )
    {
        assert!(expressions.contains(key.as_str()), "{key} unused");
    }
}

#[tokio::test]
async fn decide_expire_and_delivery_are_conditional_and_return_the_refusing_item() {
    let (store, capture) = store();
    let id = task().task_id;
    let expiry = Expiry {
        reason: "TaskTimedOut".into(),
        at: "2026-03-21T10:00:00.000Z".into(),
    };

    let _ = store.decide(&id, &decision()).await;
    let _ = store.mark_delivered(&id, "2026-03-20T10:00:01.000Z").await;
    let _ = store.expire(&id, &expiry).await;

    let sent = sent(&capture);
    let expressions: Vec<_> = sent
        .iter()
        .map(|b| {
            (
                b["ConditionExpression"].as_str().unwrap().to_string(),
                b["UpdateExpression"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        expressions,
        [
            (DECIDE_CONDITION, DECIDE_UPDATE),
            (DELIVER_CONDITION, DELIVER_UPDATE),
            (EXPIRE_CONDITION, EXPIRE_UPDATE),
        ]
        .map(|(c, u)| (c.to_string(), u.to_string()))
    );
    assert_eq!(DECIDE_CONDITION, "#status = :pending AND #tenant = :tenant");
    assert_eq!(
        EXPIRE_CONDITION,
        "#status = :pending OR (#status = :decided AND attribute_not_exists(#deliveredAt))"
    );
    for body in &sent {
        assert_eq!(body["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");
        assert_eq!(body["ReturnValues"], "ALL_NEW");
        assert_eq!(body["Key"]["taskId"]["S"], id.as_str());
    }
    assert_eq!(sent[0]["ExpressionAttributeValues"][":tenant"]["S"], "acme");
    let recorded: ReviewDecision = serde_json::from_str(
        sent[0]["ExpressionAttributeValues"][":decision"]["S"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(recorded, decision());
}

#[tokio::test]
async fn reads_project_the_task_attributes_and_only_token_reads_the_token() {
    let (store, capture) = store();
    let id = task().task_id;
    let tenant = Tenant::parse("acme").unwrap();

    let _ = store.get(&id).await;
    let _ = store.list(Some(&tenant), Some(ReviewStatus::Pending)).await;
    let _ = store.list(None, None).await;
    let _ = store.token(&id).await;

    let sent = sent(&capture);
    assert_eq!(sent.len(), 4);
    for body in &sent[..3] {
        let projection = body["ProjectionExpression"].as_str().unwrap();
        let names = body["ExpressionAttributeNames"].as_object().unwrap();
        let projected: Vec<_> = projection
            .split(", ")
            .map(|n| names[n].as_str().unwrap())
            .collect();
        assert_eq!(projected, TASK_ATTRIBUTES);
        assert!(!body.to_string().contains("taskToken"), "{body}");
    }
    assert_eq!(sent[0]["ConsistentRead"], true);
    assert_eq!(sent[1]["IndexName"], "by-tenant");
    assert_eq!(sent[1]["KeyConditionExpression"], "#tenant = :tenant");
    assert_eq!(sent[1]["FilterExpression"], STATUS_FILTER);
    assert_eq!(
        sent[1]["ExpressionAttributeValues"][":status"]["S"],
        "pending"
    );
    assert!(sent[2].get("FilterExpression").is_none());
    assert!(sent[2].get("ExpressionAttributeValues").is_none());
    assert_eq!(sent[3]["ProjectionExpression"], "#taskToken");
    assert_eq!(
        sent[3]["ExpressionAttributeNames"]["#taskToken"],
        "taskToken"
    );
}

#[test]
fn a_task_round_trips_through_its_item_and_the_token_is_never_read_into_it() {
    let mut decided = task();
    decided.status = ReviewStatus::Expired;
    decided.decision = Some(decision());
    decided.expiry = Some(Expiry {
        reason: "InvalidToken".into(),
        at: "2026-03-20T10:00:02.000Z".into(),
    });
    for t in [task(), decided] {
        let mut item = task_item(&t);
        assert!(!item.contains_key(TOKEN_ATTRIBUTE));
        let mut keys: Vec<_> = item.keys().map(String::as_str).collect();
        keys.retain(|k| !TASK_ATTRIBUTES.contains(k));
        assert!(
            keys.is_empty(),
            "attributes outside TASK_ATTRIBUTES: {keys:?}"
        );
        item.insert(TOKEN_ATTRIBUTE.into(), s(TOKEN));

        let back = task_from(&item).unwrap();

        assert_eq!(back, t);
        assert!(!serde_json::to_string(&back).unwrap().contains(TOKEN));
    }
}

#[test]
fn the_index_projects_every_task_attribute_but_the_keys_and_the_token() {
    let keys = [KEY, "tenant", "createdAt"];
    let mut expected: Vec<_> = TASK_ATTRIBUTES
        .iter()
        .filter(|a| !keys.contains(a))
        .collect();
    let mut index: Vec<_> = INDEX_ATTRIBUTES.iter().collect();
    expected.sort();
    index.sort();
    assert_eq!(index, expected);
    assert!(!INDEX_ATTRIBUTES.contains(&TOKEN_ATTRIBUTE));
}
