//! EventBridge: the downstream consumer's answers (`PutEvents` on the stack's bus, source
//! `docket.downstream`, the answer's ids as `detail`).

use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use aws_sdk_eventbridge::Client;
use docket_core::ports::AnswerBus;
use docket_core::saga::sink::rules::ANSWER_SOURCE;
use docket_core::saga::sink::Answer;
use docket_core::Error;

use crate::errors::classify;

/// Publishes answers on `bus`.
#[derive(Debug, Clone)]
pub struct EventBridgeAnswers {
    client: Client,
    bus: String,
}

impl EventBridgeAnswers {
    /// Answers on `bus` (a name or ARN), with `faults` injected (tests and local runs only).
    pub fn with_faults(
        config: &aws_config::SdkConfig,
        bus: impl Into<String>,
        faults: &crate::Faults,
    ) -> Self {
        let builder = aws_sdk_eventbridge::config::Builder::from(config);
        EventBridgeAnswers {
            client: Client::from_conf(crate::with_faults(builder, faults).build()),
            bus: bus.into(),
        }
    }
}

impl AnswerBus for EventBridgeAnswers {
    async fn answer(&self, answer: &Answer) -> Result<(), Error> {
        let entry = PutEventsRequestEntry::builder()
            .event_bus_name(&self.bus)
            .source(ANSWER_SOURCE)
            .detail_type(answer.detail_type())
            .detail(answer.detail().to_string())
            .build();
        let out = self
            .client
            .put_events()
            .entries(entry)
            .send()
            .await
            .map_err(|e| classify("events PutEvents", e))?;
        // PutEvents answers 200 with per-entry failures (throttling, internal): publish again
        // by redelivery.
        match out.entries().first().and_then(|e| e.error_code()) {
            Some(code) => Err(Error::Dependency(format!("events PutEvents entry: {code}"))),
            None if out.failed_entry_count() > 0 => Err(Error::Dependency(
                "events PutEvents: an entry failed".into(),
            )),
            None => Ok(()),
        }
    }
}
