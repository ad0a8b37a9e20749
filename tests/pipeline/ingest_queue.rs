//! Ingest's queue (issue 13), on the deployed stack: the inbox rule sends uploads to
//! IngestQueue, whose event source mapping feeds ingest in batches with partial failures, and
//! whose redrive policy ends in IngestFailureQueue; a message that is no upload event is set
//! aside there at once, with its error's name, and nothing else happens to it. (Pacing of the
//! executions: `quotas.rs`; a transient failure redelivered until it lands in the failure
//! queue: the soak's `sweep.rs`.)

use std::time::{Duration, Instant};

use docket_e2e::stack::Stack;
use docket_e2e::util;
use serde_json::Value;

/// The queue's name: the last part of its URL (an ARN ends with it too).
fn queue_name(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or_default()
}

#[tokio::test]
async fn the_inbox_rule_feeds_ingest_through_its_queue_whose_failures_end_in_the_failure_queue() {
    let stack = Stack::load().await;
    let queue = queue_name(stack.out("IngestQueueUrl")).to_string();
    let failures = queue_name(stack.out("IngestFailureQueueUrl")).to_string();
    assert!(!queue.is_empty() && !failures.is_empty());

    // the rule's one target is the queue
    let events = aws_sdk_eventbridge::Client::new(&util::aws().await);
    let rule = stack
        .out("InboxRuleArn")
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let targets = events
        .list_targets_by_rule()
        .rule(&rule)
        .send()
        .await
        .expect("the inbox rule's targets");
    let arns: Vec<&str> = targets.targets().iter().map(|t| t.arn()).collect();
    assert_eq!(arns.len(), 1, "{arns:?}");
    assert!(arns[0].ends_with(&format!(":{queue}")), "{arns:?}");

    // the queue moves a message that failed five deliveries to the failure queue
    let sqs = aws_sdk_sqs::Client::new(&util::aws().await);
    let attributes = sqs
        .get_queue_attributes()
        .queue_url(stack.out("IngestQueueUrl"))
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
        .send()
        .await
        .expect("the queue's attributes");
    let redrive = attributes
        .attributes()
        .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::RedrivePolicy))
        .expect("a redrive policy");
    let redrive: Value = serde_json::from_str(redrive).unwrap();
    let target = redrive["deadLetterTargetArn"].as_str().unwrap_or_default();
    assert!(target.ends_with(&format!(":{failures}")), "{redrive}");
    // (ingest sets a message aside itself on its last delivery: docket_core::redelivery)
    assert_eq!(
        redrive["maxReceiveCount"].to_string(),
        docket_core::redelivery::DELIVERIES.to_string(),
        "{redrive}"
    );

    // ingest reads the queue, reporting each failed message on its own
    let mappings = stack
        .lambda
        .list_event_source_mappings()
        .function_name(stack.out("IngestFunctionName"))
        .send()
        .await
        .expect("ingest's event source mappings");
    let mappings = mappings.event_source_mappings();
    assert_eq!(mappings.len(), 1, "{mappings:?}");
    let mapping = &mappings[0];
    assert!(
        mapping
            .event_source_arn()
            .is_some_and(|a| a.ends_with(&format!(":{queue}"))),
        "{mapping:?}"
    );
    let partial = aws_sdk_lambda::types::FunctionResponseType::ReportBatchItemFailures;
    assert_eq!(mapping.function_response_types(), [partial]);
}

#[tokio::test]
async fn a_queued_message_that_is_no_upload_event_is_set_aside_at_once_with_its_error() {
    let stack = Stack::load().await;
    let sqs = aws_sdk_sqs::Client::new(&util::aws().await);
    let marker = format!("not-an-event-{}", docket_e2e::stack::tenant());
    let body = serde_json::json!({ "marker": marker }).to_string();

    // when a message that is no Object Created event reaches ingest through its queue
    sqs.send_message()
        .queue_url(stack.out("IngestQueueUrl"))
        .message_body(&body)
        .send()
        .await
        .expect("send to the ingest queue");

    // then it is set aside on the failure queue, on its first delivery (no backoff: a retry
    // would fail the same way), with its body and the error's name
    let failures = stack.out("IngestFailureQueueUrl");
    let deadline = Instant::now() + Duration::from_secs(60);
    let record = loop {
        let page = sqs
            .receive_message()
            .queue_url(failures)
            .max_number_of_messages(10)
            .visibility_timeout(5)
            .send()
            .await
            .expect("read the failure queue");
        let ours = page.messages().iter().find_map(|m| {
            let record: Value = serde_json::from_str(m.body()?).ok()?;
            (record["requestPayload"]["marker"] == marker.as_str())
                .then(|| (record, m.receipt_handle().unwrap_or_default().to_string()))
        });
        if let Some(found) = ours {
            break found;
        }
        assert!(
            Instant::now() < deadline,
            "{marker} never reached {failures}"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let (record, receipt) = record;
    assert_eq!(
        record["responsePayload"]["errorType"], "Fatal.BadInput",
        "{record}"
    );
    assert_eq!(
        record["requestContext"]["approximateInvokeCount"], 1,
        "{record}"
    );
    assert_eq!(
        record["requestContext"]["condition"], "SetAside",
        "{record}"
    );

    sqs.delete_message()
        .queue_url(failures)
        .receipt_handle(receipt)
        .send()
        .await
        .expect("remove the test's record");
}
