//! For unit tests of the adapters: a DynamoDB client whose requests never leave the process. An
//! interceptor keeps each serialized request body and stops the request before it is sent.

use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{
    BehaviorVersion, ConfigBag, Credentials, Intercept, Region, RuntimeComponents,
};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::Client;
use serde_json::Value;

/// The bodies of the requests a [`captured_client`] tried to send, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Capture(pub(crate) Arc<Mutex<Vec<Value>>>);

impl Intercept for Capture {
    fn name(&self) -> &'static str {
        "Capture"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let body = context.request().body().bytes().unwrap_or_default();
        self.0.lock().unwrap().push(serde_json::from_slice(body)?);
        Err("captured; not sent".into())
    }
}

/// A client that captures instead of sending, and what it captured.
pub(crate) fn captured_client() -> (Client, Capture) {
    let capture = Capture::default();
    let conf = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("k", "s", None, None, "test"))
        .interceptor(capture.clone())
        .build();
    (Client::from_conf(conf), capture)
}
