//! The config store on DynamoDB, on a table as the template defines it: a config is put once
//! under its fingerprint (a second publish writes nothing), read back whole and checked, kept in
//! memory once read (a second read sends nothing), and listed newest first.

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::Client;
use docket_aws::config::DynamoConfigs;
use docket_core::config::PipelineConfig;
use docket_core::ports::{ConfigStore, Published};
use docket_e2e::resource;
use docket_e2e::util;

use crate::requests::Requests;
use crate::saga::as_in_template;

#[tokio::test]
async fn a_config_is_published_once_read_back_checked_and_kept_once_read() {
    let sdk = util::aws().await;
    let table = resource::table(&Client::new(&sdk), "configs", |t| {
        as_in_template("ConfigTable", t)
    })
    .await;
    let requests = Requests::default();
    let builder = aws_sdk_dynamodb::config::Builder::from(&sdk)
        .retry_config(RetryConfig::disabled())
        .interceptor(requests.clone());
    let client = Client::from_conf(builder.build());
    let configs = DynamoConfigs::new(client.clone(), table.to_string());
    let builtin = PipelineConfig::builtin();
    let mut stricter = builtin.clone();
    stricter.validation.min_confidence = 0.99;

    let first = configs
        .publish(&builtin, "docket/deploy", "2026-12-02T01:00:00Z")
        .await;
    let again = configs
        .publish(&builtin, "someone", "2026-12-02T02:00:00Z")
        .await;
    let other = configs
        .publish(&stricter, "docket/cli", "2026-12-02T03:00:00Z")
        .await;
    assert_eq!(first.unwrap(), Published::New);
    assert_eq!(again.unwrap(), Published::Already);
    assert_eq!(other.unwrap(), Published::New);

    // A fresh adapter (another function) reads it back whole, once.
    let reader = DynamoConfigs::new(client, table.to_string());
    requests.take();
    let read = reader.get(&stricter.fingerprint()).await.unwrap();
    let read_again = reader.get(&stricter.fingerprint()).await.unwrap();
    assert_eq!(read.as_ref(), Some(&stricter));
    assert_eq!(read_again, read);
    assert_eq!(requests.take().get("GetItem"), Some(&1), "kept once read");
    assert_eq!(reader.get("cfg-0000000000000000").await.unwrap(), None);

    let listed = reader.list().await.unwrap();
    let order: Vec<_> = listed.iter().map(|c| c.fingerprint.as_str()).collect();
    let (f1, f2) = (builtin.fingerprint(), stricter.fingerprint());
    assert_eq!(order, [f2.as_str(), f1.as_str()], "newest first");
    assert_eq!(
        listed[1].published_by, "docket/deploy",
        "the first publish stands"
    );
}
