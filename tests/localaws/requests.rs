//! Counting the DynamoDB requests a client sends (the ledger's and review store's costs).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use aws_config::SdkConfig;
use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::Client;

/// Counts requests by operation (`X-Amz-Target`), as sent on the wire.
#[derive(Debug, Clone, Default)]
pub struct Requests(Arc<Mutex<BTreeMap<String, usize>>>);

impl Requests {
    /// The counts since the last call.
    pub fn take(&self) -> BTreeMap<String, usize> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl Intercept for Requests {
    fn name(&self) -> &'static str {
        "Requests"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let target = context
            .request()
            .headers()
            .get("x-amz-target")
            .unwrap_or("?");
        let op = target.rsplit('.').next().unwrap_or(target).to_string();
        *self.0.lock().unwrap().entry(op).or_default() += 1;
        Ok(())
    }
}

/// A DynamoDB client that counts its requests and does not retry (so each injected fault is seen
/// once), and its counter.
pub fn counting_client(config: &SdkConfig) -> (Client, Requests) {
    let requests = Requests::default();
    let conf = aws_sdk_dynamodb::config::Builder::from(config)
        .retry_config(RetryConfig::disabled())
        .interceptor(requests.clone())
        .build();
    (Client::from_conf(conf), requests)
}
