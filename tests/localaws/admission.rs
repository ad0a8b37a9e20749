//! OCR admission's records on DynamoDB (LocalStack): the pacer and the slot semaphore through
//! `DynamoAdmission`, with many callers at once, as Lambdas in a burst would be. What each
//! caller was told is checked against the records left in the table.

use std::collections::BTreeSet;
use std::sync::Arc;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, KeySchemaElement, KeyType, ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;
use docket_aws::admission::DynamoAdmission;
use docket_core::admission::pacer::{Pace, Taken};
use docket_core::admission::slots::{Acquired, Released};
use docket_core::ports::Admission;
use docket_e2e::resource::{self, Resource};
use docket_e2e::util;

const NOW: i64 = 1_700_000_000;

async fn fixture() -> (Arc<DynamoAdmission>, Client, Resource) {
    let client = Client::new(&util::aws().await);
    let table = resource::table(&client, "admission", |t| {
        t.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("sk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("sk")
                .key_type(KeyType::Range)
                .build()
                .unwrap(),
        )
    })
    .await;
    let admission = Arc::new(DynamoAdmission::new(client.clone(), table.to_string()));
    (admission, client, table)
}

/// The items of the pool's partition: (the count, the leases' holders).
async fn pool_items(client: &Client, table: &str, pool: &str) -> (i64, BTreeSet<String>) {
    let items = client
        .query()
        .table_name(table)
        .consistent_read(true)
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(
            ":pk",
            aws_sdk_dynamodb::types::AttributeValue::S(format!("pool#{pool}")),
        )
        .send()
        .await
        .unwrap();
    let (mut held, mut holders) = (0, BTreeSet::new());
    for item in items.items() {
        match item["sk"].as_s().unwrap().as_str() {
            "count" => held = item["held"].as_n().unwrap().parse().unwrap(),
            _ => {
                holders.insert(item["holder"].as_s().unwrap().clone());
            }
        }
    }
    (held, holders)
}

/// `n` callers at once, each taking a slot of `pacer` at `now_ms`.
async fn burst(admission: &Arc<DynamoAdmission>, pace: Pace, n: usize, now_ms: i64) -> Vec<i64> {
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..n {
        let admission = admission.clone();
        calls.spawn(async move {
            admission
                .take_slot("DetectDocumentText", &pace, now_ms)
                .await
        });
    }
    calls
        .join_all()
        .await
        .into_iter()
        .map(|taken| match taken.expect("a slot") {
            Taken::Slot { at_ms } => at_ms,
            busy => panic!("busy within the horizon: {busy:?}"),
        })
        .collect()
}

/// The requests of `operation` on `table` that crossed the wire.
async fn on_table(operation: &str, table: &str) -> usize {
    let subject = docket_core::ids::sha256_hex(table.as_bytes());
    util::wire_requests("dynamodb", operation, &subject)
        .await
        .len()
}

#[tokio::test]
async fn callers_at_once_each_get_a_slot_of_their_own_spaced_by_the_pace_in_one_write() {
    let (admission, _client, table) = fixture().await;
    let pace = Pace::for_quota(25, 50, 50, 60_000);
    // An idle pacer: the first guess (advance) finds no item, one restart wins, and the
    // others advance after it. At most three writes each, no read.
    let mut slots = burst(&admission, pace, 40, NOW * 1000).await;
    let idle_writes = on_table("UpdateItem", &table).await;
    assert!(
        (40..=3 * 40).contains(&idle_writes),
        "{idle_writes} writes for 40 slots of an idle pacer"
    );
    // A busy pacer (its next slot ahead, within the horizon): one write a slot, no read.
    slots.extend(burst(&admission, pace, 60, NOW * 1000).await);
    let busy_writes = on_table("UpdateItem", &table).await - idle_writes;
    assert_eq!(busy_writes, 60, "one write a slot when the pacer is busy");
    assert_eq!(on_table("GetItem", &table).await, 0, "no reads");

    slots.sort_unstable();
    assert_eq!(slots.len(), 100);
    assert_eq!(slots[0], NOW * 1000, "the idle pacer's first slot is now");
    for pair in slots.windows(2) {
        assert_eq!(pair[1] - pair[0], pace.interval_ms, "slots {pair:?}");
    }
}

#[tokio::test]
async fn past_the_horizon_a_caller_is_busy_and_writes_nothing_more() {
    let (admission, client, table) = fixture().await;
    // A horizon of two slots: the third caller at the same instant is told to come back.
    let pace = Pace::for_quota(25, 50, 50, 100);
    let first = burst(&admission, pace, 3, NOW * 1000).await;
    assert_eq!(first.len(), 3);
    let busy = Taken::Busy {
        retry_at_ms: NOW * 1000 + 3 * pace.interval_ms - 100,
    };
    // Another process, which has seen nothing: one advance, refused, and no more.
    let writes = on_table("UpdateItem", &table).await;
    let cold = DynamoAdmission::new(client.clone(), table.to_string());
    let answer = cold
        .take_slot("DetectDocumentText", &pace, NOW * 1000)
        .await;
    assert_eq!(answer.expect("an answer"), busy);
    assert_eq!(on_table("UpdateItem", &table).await - writes, 1);
    // The process that took the slots remembers where it left the pacer: no write at all.
    let answer = admission
        .take_slot("DetectDocumentText", &pace, NOW * 1000)
        .await;
    assert_eq!(answer.expect("an answer"), busy);
    assert_eq!(on_table("UpdateItem", &table).await - writes, 1);
}

#[tokio::test]
async fn a_warm_caller_writes_once_whether_the_pacer_is_idle_or_busy() {
    let (admission, client, table) = fixture().await;
    let pace = Pace::for_quota(25, 50, 50, 5_000);
    let at = |ms: i64| NOW * 1000 + ms;
    let take = |now| {
        let admission = admission.clone();
        async move { admission.take_slot("DetectDocumentText", &pace, now).await }
    };
    // A process that has seen nothing guesses busy: no item, so a second write (the restart).
    assert_eq!(take(at(0)).await.unwrap(), Taken::Slot { at_ms: at(0) });
    assert_eq!(on_table("UpdateItem", &table).await, 2);
    // Idle since: it remembers where it left the pacer, and restarts at once.
    assert_eq!(
        take(at(10_000)).await.unwrap(),
        Taken::Slot { at_ms: at(10_000) }
    );
    assert_eq!(on_table("UpdateItem", &table).await, 3);
    // Busy: it advances at once.
    let next = at(10_000) + pace.interval_ms;
    assert_eq!(take(at(10_001)).await.unwrap(), Taken::Slot { at_ms: next });
    assert_eq!(on_table("UpdateItem", &table).await, 4);
    // Another process moved the pacer on meanwhile: the remembered value is refused, and the
    // item the refusal returns gives the slot after it.
    let other = DynamoAdmission::new(client.clone(), table.to_string());
    let theirs = other
        .take_slot("DetectDocumentText", &pace, at(10_002))
        .await;
    assert_eq!(
        theirs.unwrap(),
        Taken::Slot {
            at_ms: next + pace.interval_ms
        }
    );
    assert_eq!(
        take(at(10_003)).await.unwrap(),
        Taken::Slot {
            at_ms: next + 2 * pace.interval_ms
        }
    );
    assert_eq!(on_table("GetItem", &table).await, 0, "no reads");
}

#[tokio::test]
async fn a_pool_never_holds_more_slots_than_its_limit_and_gives_them_back_once() {
    let (admission, client, table) = fixture().await;
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..24 {
        let admission = admission.clone();
        // Every holder asks twice (a retry racing its first attempt), all at once.
        for _ in 0..2 {
            let admission = admission.clone();
            calls.spawn(async move {
                let holder = format!("op-{i}");
                let got = admission.acquire("jobs", &holder, 5, NOW, 600).await;
                (holder, got.expect("an answer"))
            });
        }
    }
    let answers = calls.join_all().await;
    let holding: BTreeSet<String> = answers
        .iter()
        .filter(|(_, a)| !matches!(a, Acquired::Full { .. }))
        .map(|(h, _)| h.clone())
        .collect();
    assert_eq!(holding.len(), 5, "{answers:?}");
    let (held, holders) = pool_items(&client, &table, "jobs").await;
    assert_eq!((held, &holders), (5, &holding));

    // Giving back, twice each: two slots free, the count follows the leases.
    for holder in holding.iter().take(2) {
        assert!(matches!(
            admission.release("jobs", holder).await.unwrap(),
            Released::Given
        ));
        assert_eq!(
            admission.release("jobs", holder).await.unwrap(),
            Released::NotHeld
        );
    }
    let (held, holders) = pool_items(&client, &table, "jobs").await;
    assert_eq!((held, holders.len()), (3, 3));
    // Taken and given back without reading the count or a lease first: callers at once do not
    // race on the count item.
    assert_eq!(on_table("GetItem", &table).await, 0, "no reads");
}

#[tokio::test]
async fn a_crashed_holders_slot_is_reclaimed_after_its_lease_and_a_renewed_one_is_kept() {
    let (admission, client, table) = fixture().await;
    admission
        .acquire("jobs", "op-crashed", 2, NOW, 60)
        .await
        .unwrap();
    admission
        .acquire("jobs", "op-alive", 2, NOW, 60)
        .await
        .unwrap();
    assert!(matches!(
        admission
            .acquire("jobs", "op-waiting", 2, NOW, 60)
            .await
            .unwrap(),
        Acquired::Full { held: 2 }
    ));
    // The live holder renews; the crashed one does not.
    admission
        .acquire("jobs", "op-alive", 2, NOW + 50, 60)
        .await
        .unwrap();
    assert!(admission
        .reclaim("jobs", NOW + 59)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        admission.reclaim("jobs", NOW + 60).await.unwrap(),
        vec!["op-crashed".to_string()]
    );
    let (held, holders) = pool_items(&client, &table, "jobs").await;
    assert_eq!(
        (held, holders.into_iter().collect::<Vec<_>>()),
        (1, vec!["op-alive".to_string()])
    );
    assert!(matches!(
        admission
            .acquire("jobs", "op-waiting", 2, NOW + 61, 60)
            .await
            .unwrap(),
        Acquired::Taken { .. }
    ));
    assert_eq!(pool_items(&client, &table, "jobs").await.0, 2);
}

#[tokio::test]
async fn recorded_quotas_come_back_as_written_and_a_quota_of_zero_is_never_written() {
    use docket_core::admission::{Quotas, START_TEXT_DETECTION};
    let (admission, client, table) = fixture().await;
    assert_eq!(admission.quotas("textract").await.unwrap(), None);

    let mut raised = Quotas::textract_defaults();
    raised.tps.insert(START_TEXT_DETECTION.into(), 40);
    raised.max_jobs = 900;
    admission.set_quotas("textract", &raised).await.unwrap();
    assert_eq!(
        admission.quotas("textract").await.unwrap(),
        Some(raised.clone())
    );

    let mut zero = raised.clone();
    zero.max_jobs = 0;
    let refused = admission.set_quotas("textract", &zero).await.unwrap_err();
    assert_eq!(refused.name(), "Fatal.BadInput");
    // The item in the table is still the raised one.
    let item = client
        .get_item()
        .table_name(table.to_string())
        .key(
            "pk",
            aws_sdk_dynamodb::types::AttributeValue::S("quotas#textract".into()),
        )
        .key(
            "sk",
            aws_sdk_dynamodb::types::AttributeValue::S("current".into()),
        )
        .send()
        .await
        .unwrap();
    let stored = item.item().unwrap()["quotas"].as_s().unwrap().clone();
    assert!(stored.contains("\"maxJobs\":900"), "{stored}");
}
