//! No lost uploads (issue "Recover and observe"): an upload whose ingest fails on every delivery
//! from its queue (five, backing off) lands on ingest's failure queue; `docket ops sweep`
//! lists it (no run, no quarantine copy, its event queued), and `--resubmit` processes it once
//! and drains the queue.

use std::time::{Duration, Instant};

use docket_e2e::reviewers::{docket, json_of, Session};
use docket_e2e::stack::s;
use serde_json::{json, Value};

use crate::faults::{assert_each_fired, FaultsOn};
use crate::{drop_invoices, duplicates, patient_stack, settle, Read, RUN_DEADLINE};

/// The queue's messages, visible or being read.
async fn depth(sqs: &aws_sdk_sqs::Client, url: &str) -> usize {
    use aws_sdk_sqs::types::QueueAttributeName as A;
    let attributes = sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(A::ApproximateNumberOfMessages)
        .attribute_names(A::ApproximateNumberOfMessagesNotVisible)
        .send()
        .await
        .expect("queue attributes");
    let map = attributes.attributes().cloned().unwrap_or_default();
    [
        A::ApproximateNumberOfMessages,
        A::ApproximateNumberOfMessagesNotVisible,
    ]
    .iter()
    .map(|a| {
        map.get(a)
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
    })
    .sum()
}

fn ours<'a>(sweep: &'a Value, key: &str) -> Vec<&'a Value> {
    sweep["lost"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["key"] == key)
        .collect()
}

#[tokio::test]
async fn an_upload_whose_ingest_fails_every_attempt_is_queued_listed_and_resubmitted_once() {
    let stack = patient_stack().await;
    let sqs = aws_sdk_sqs::Client::new(&docket_e2e::util::aws().await);
    let queue = stack.out("IngestFailureQueueUrl").to_string();
    let before = depth(&sqs, &queue).await;
    let since = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();

    // given an upload while every DynamoDB request is refused, so each ingest attempt fails
    let rules = json!([
        {"service": "dynamodb", "region": "us-east-1", "probability": 1.0,
         "error": {"statusCode": 400, "code": "ProvisionedThroughputExceededException"}}
    ]);
    let on = FaultsOn::on(&stack, rules, None).await;
    let (tenant, documents) = drop_invoices(&stack, 1, Read::AsJobs).await;
    let key = format!("inbox/{tenant}/inv-000.pdf");

    // when its deliveries run out (five, each after a longer backoff: at most 10 + 20 + 40 +
    // 80 s), the last sets its event aside on the failure queue
    let deadline = Instant::now() + Duration::from_secs(300);
    while depth(&sqs, &queue).await <= before {
        assert!(Instant::now() < deadline, "nothing reached {queue}");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let fired = on.chaos_fired();
    on.off().await;
    assert_each_fired(
        "Chaos-API",
        &["dynamodb ProvisionedThroughputExceededException".into()],
        &fired,
    );
    assert!(stack.runs(&documents[0]).await.is_empty(), "no run yet");

    // then the sweep lists the upload as lost, with its event queued
    let operator = Session { env: Vec::new() };
    let listed = json_of(&docket(&operator, &["ops", "sweep", "--since", &since]).await);
    let lost = ours(&listed, &key);
    assert_eq!(lost.len(), 1, "{listed:#}");
    assert_eq!(lost[0]["queued"], "IngestFailureQueue", "{listed:#}");
    // set aside by ingest with its error's name, not moved without one by the queue
    assert_eq!(lost[0]["error"], "Transient.Dependency", "{listed:#}");

    // when the operator resubmits, then it is processed once and the queue is drained
    let swept = docket(
        &operator,
        &["ops", "sweep", "--since", &since, "--resubmit"],
    )
    .await;
    let swept = json_of(&swept);
    assert_eq!(
        swept["resubmitted"].as_array().map(Vec::len),
        Some(1),
        "{swept:#}"
    );
    let drained = swept["drained"].as_array().unwrap();
    assert!(
        drained.iter().any(|d| d["key"] == key.as_str()),
        "{swept:#}"
    );
    let outcomes = settle(&stack, &documents, RUN_DEADLINE).await;
    let statuses: Vec<String> = outcomes[0].runs.iter().map(|r| s(r, "status")).collect();
    assert_eq!(statuses, ["completed"]);
    let problems = duplicates(&stack, &outcomes[0]).await;
    assert!(problems.is_empty(), "{problems:#?}");
    // (the sweep also drains older events whose upload is accounted for by now)
    let left = depth(&sqs, &queue).await;
    let from_this_queue = drained
        .iter()
        .filter(|d| d["queue"] == "IngestFailureQueue")
        .count();
    assert_eq!(
        left,
        before + 1 - from_this_queue,
        "the queue drained: {swept:#}"
    );

    // and a second sweep finds nothing lost and resubmits nothing
    let again = json_of(
        &docket(
            &operator,
            &["ops", "sweep", "--since", &since, "--resubmit"],
        )
        .await,
    );
    assert!(
        again["checked"].as_u64() >= Some(1),
        "the listing saw the upload: {again:#}"
    );
    assert!(ours(&again, &key).is_empty(), "{again:#}");
    assert_eq!(again["resubmitted"], json!([]));
}
