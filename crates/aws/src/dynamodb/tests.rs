//! Every DynamoDB client's retries ([`crate::dynamodb_client`]), against a local HTTP server
//! playing DynamoDB: a request refused for throughput is sent again, up to the bound and no
//! further.

use aws_sdk_dynamodb::types::AttributeValue;

use crate::stand_in::{sdk_config, Answer, StandIn};
use crate::DYNAMODB_MAX_ATTEMPTS;

/// DynamoDB's answer to a request over a partition's throughput.
fn throttled() -> Answer {
    let body = r#"{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                   "message":"The level of configured provisioned throughput for the table was exceeded."}"#;
    (400, vec![], body.to_string())
}

/// A DynamoDB client as the adapters build it in a Lambda, at `127.0.0.1:port`.
async fn client(port: u16) -> aws_sdk_dynamodb::Client {
    crate::dynamodb_client(&sdk_config(port).await, &crate::Faults::none())
}

async fn get(client: &aws_sdk_dynamodb::Client) -> bool {
    client
        .get_item()
        .table_name("t")
        .key("pk", AttributeValue::S("k".into()))
        .send()
        .await
        .is_ok()
}

#[tokio::test]
async fn a_request_refused_for_throughput_succeeds_on_its_last_attempt() {
    let last = DYNAMODB_MAX_ATTEMPTS as usize - 1;
    let server = StandIn::answering(move |n| {
        if n < last {
            throttled()
        } else {
            (200, vec![], "{}".into())
        }
    });

    assert!(
        get(&client(server.port).await).await,
        "answered on the last attempt"
    );
    assert_eq!(server.seen().len(), DYNAMODB_MAX_ATTEMPTS as usize);
}

#[tokio::test]
async fn a_request_refused_every_time_is_sent_no_more_than_the_bound() {
    let server = StandIn::answering(|_| throttled());

    assert!(!get(&client(server.port).await).await, "refused every time");
    assert_eq!(server.seen().len(), DYNAMODB_MAX_ATTEMPTS as usize);
}
