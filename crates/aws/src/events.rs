//! EventBridge, the stack's bus: route's saga publishes its events ([`EventBridgeBus`], source
//! [`EVENT_SOURCE`], the event body as `detail`), and the downstream consumer its answers
//! ([`EventBridgeAnswers`], source `docket.downstream`, the answer's ids as `detail`).

use aws_sdk_eventbridge::operation::put_events::PutEventsOutput;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use aws_sdk_eventbridge::Client;
use docket_core::ports::{AnswerBus, EventBus};
use docket_core::saga::sink::rules::ANSWER_SOURCE;
use docket_core::saga::sink::Answer;
use docket_core::saga::{EventBody, EventId, EVENT_SOURCE};
use docket_core::Error;

use crate::errors::classify;

/// A client of the bus, with `faults` injected (tests and local runs only).
fn client(config: &aws_config::SdkConfig, faults: &crate::Faults) -> Client {
    let builder = aws_sdk_eventbridge::config::Builder::from(config);
    Client::from_conf(crate::with_faults(builder, faults).build())
}

/// Sends one entry; its entry id. PutEvents answers 200 with per-entry failures (throttling,
/// internal): those are `Transient.Dependency`, to publish again.
async fn put_one(client: &Client, entry: PutEventsRequestEntry) -> Result<String, Error> {
    let out: PutEventsOutput = client
        .put_events()
        .entries(entry)
        .send()
        .await
        .map_err(|e| classify("events PutEvents", e))?;
    let first = out.entries().first();
    match first.and_then(|e| e.error_code()) {
        Some(code) => Err(Error::Dependency(format!("events PutEvents entry: {code}"))),
        None if out.failed_entry_count() > 0 => Err(Error::Dependency(
            "events PutEvents: an entry failed".into(),
        )),
        None => first
            .and_then(|e| e.event_id())
            .map(str::to_string)
            .ok_or_else(|| Error::Dependency("events PutEvents: no entry id".into())),
    }
}

/// Route's saga's events on `bus`.
#[derive(Debug, Clone)]
pub struct EventBridgeBus {
    client: Client,
    bus: String,
}

impl EventBridgeBus {
    /// Publishes on `bus` (a name or ARN), with `faults` injected (tests and local runs only).
    pub fn with_faults(
        config: &aws_config::SdkConfig,
        bus: impl Into<String>,
        faults: &crate::Faults,
    ) -> Self {
        EventBridgeBus {
            client: client(config, faults),
            bus: bus.into(),
        }
    }
}

impl EventBus for EventBridgeBus {
    async fn put(&self, body: &EventBody) -> Result<String, Error> {
        let detail = serde_json::to_string(body).expect("an event body serializes");
        let entry = PutEventsRequestEntry::builder()
            .event_bus_name(&self.bus)
            .source(EVENT_SOURCE)
            .detail_type(body.kind.name())
            .detail(detail)
            .build();
        put_one(&self.client, entry).await
    }

    /// Always `None`: EventBridge keeps no index of the events it accepted, so an uncertain
    /// publication is published again under the same event id, and the consumer applies it
    /// once (it dedups on `detail.eventId`).
    async fn find(&self, _event: &EventId) -> Result<Option<String>, Error> {
        Ok(None)
    }
}

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
        EventBridgeAnswers {
            client: client(config, faults),
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
        // A failed entry is published again by the message's redelivery.
        put_one(&self.client, entry).await.map(|_| ())
    }
}
