//! ingest's queue (SQS), as its consumer acts on a message whose handling failed
//! ([`docket_core::redelivery`]): delivered again later (its visibility timeout set to the
//! backoff), sent again as a new message (no turn at the pacer), or set aside on the failure
//! queue with the error's name. Handled messages are
//! deleted by the event source mapping (`ReportBatchItemFailures`), not here.

use aws_sdk_sqs::types::MessageAttributeValue;
use aws_sdk_sqs::Client;
use docket_core::redelivery::REQUEUES_ATTRIBUTE;
use docket_core::Error;
use serde_json::{json, Value};

use crate::errors::classify;

/// The queue a batch came from and the queue its failures are set aside on.
#[derive(Debug, Clone)]
pub struct QueuedEvents {
    client: Client,
    queue_url: String,
    failure_url: String,
}

impl QueuedEvents {
    /// Messages of `queue_url`, set aside on `failure_url`, with `faults` injected (none outside
    /// tests and local runs).
    pub fn with_faults(
        config: &aws_config::SdkConfig,
        queue_url: String,
        failure_url: String,
        faults: &crate::Faults,
    ) -> Self {
        let builder = aws_sdk_sqs::config::Builder::from(config);
        QueuedEvents {
            client: Client::from_conf(crate::with_faults(builder, faults).build()),
            queue_url,
            failure_url,
        }
    }

    /// Hides the message received as `receipt` for `seconds` more: SQS delivers it again then
    /// (the event source mapping does not delete a message reported as failed).
    pub async fn retry_later(&self, receipt: &str, seconds: i32) -> Result<(), Error> {
        self.client
            .change_message_visibility()
            .queue_url(&self.queue_url)
            .receipt_handle(receipt)
            .visibility_timeout(seconds)
            .send()
            .await
            .map_err(|e| classify("sqs ChangeMessageVisibility", e))?;
        Ok(())
    }

    /// Sends `body` to the queue again as a new message, delivered in `seconds` (at most 900),
    /// with `requeues` as its [`REQUEUES_ATTRIBUTE`].
    pub async fn requeue(&self, body: &str, seconds: i32, requeues: u32) -> Result<(), Error> {
        let count = MessageAttributeValue::builder()
            .data_type("Number")
            .string_value(requeues.to_string())
            .build()
            .map_err(|e| Error::Internal(format!("sqs message attribute: {e}")))?;
        self.client
            .send_message()
            .queue_url(&self.queue_url)
            .message_body(body)
            .message_attributes(REQUEUES_ATTRIBUTE, count)
            .delay_seconds(seconds.clamp(0, 900))
            .send()
            .await
            .map_err(|e| classify("sqs SendMessage", e))?;
        Ok(())
    }

    /// Sends [`set_aside_record`] of `body` to the failure queue.
    pub async fn set_aside(&self, body: &str, error: &Error, receives: u32) -> Result<(), Error> {
        let record = set_aside_record(body, error, receives);
        self.client
            .send_message()
            .queue_url(&self.failure_url)
            .message_body(record.to_string())
            .send()
            .await
            .map_err(|e| classify("sqs SendMessage", e))?;
        Ok(())
    }
}

/// A set-aside message as the failure queue keeps it: the shape of Lambda's on-failure record
/// (the event under `requestPayload`, the error under `responsePayload`), which is what
/// `docket ops sweep` reads there. A body that is not JSON is kept as a string.
pub fn set_aside_record(body: &str, error: &Error, receives: u32) -> Value {
    let event = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.into()));
    json!({
        "requestContext": {"condition": "SetAside", "approximateInvokeCount": receives},
        "requestPayload": event,
        "responsePayload": {"errorType": error.name(), "errorMessage": error.to_string()},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_aside_event_keeps_its_body_and_names_the_error() {
        let error = Error::BadInput("not an Object Created event".into());
        let record = set_aside_record(r#"{"detail": {"x": 1}}"#, &error, 2);
        assert_eq!(record["requestPayload"]["detail"]["x"], 1);
        assert_eq!(record["responsePayload"]["errorType"], "Fatal.BadInput");
        assert_eq!(record["requestContext"]["approximateInvokeCount"], 2);
        let raw = set_aside_record("not json", &error, 1);
        assert_eq!(raw["requestPayload"], "not json");
    }
}
