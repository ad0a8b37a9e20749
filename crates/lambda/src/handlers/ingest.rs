//! ingest: the EventBridge S3 "Object Created" event of an inbox upload → run record and
//! execution (or a quarantine copy with the reason). See `docket_core::steps::ingest`.
//!
//! The events come through ingest's SQS queue (the inbox rule's target), in batches of the
//! event source mapping: each message is ingested on its own, all of a batch at once (their
//! executions' starts take turns at the pacer, `docket_core::admitted::starts`), and the answer
//! names the messages to deliver again (`ReportBatchItemFailures`). A message whose handling
//! failed transiently is hidden for a backoff first; one whose start had no turn at the pacer
//! or no job slot is sent again as a new message (its deliveries are not spent waiting; the
//! message counts how often, and each wait is longer); one that failed otherwise (a body that
//! is no event, a misconfiguration) is set aside on the failure queue with the error's name
//! (`docket_core::redelivery`). A payload without `Records` is one event,
//! ingested directly (`docket ops sweep --resubmit`) and answered with its outcome.

use std::future::Future;

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use chrono::SecondsFormat;
use docket_aws::sqs::QueuedEvents;
use docket_core::ports::{HasBlobs, HasStore, HasWorkflow};
use docket_core::redelivery::{after_failure, AfterFailure, REQUEUES_ATTRIBUTE};
use docket_core::steps::ingest::{self, IngestOutcome, ObjectCreated};
use docket_core::steps::Context;
use docket_core::Error;
use serde_json::{json, Value};

use crate::events::ObjectCreatedEvent;
use crate::{answer, parse, span, traced, Failure};

/// What ingest runs on.
pub type Deps = crate::Deps<crate::deps::Ingest>;

/// The queue a batch came from, as ingest acts on a message whose handling failed.
pub trait Redeliver: Send + Sync {
    /// Delivers the message received as `receipt` again in `seconds`.
    fn retry_later(
        &self,
        receipt: &str,
        seconds: i32,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// Sends `body` to the queue again as a new message, delivered in `seconds`, carrying
    /// `requeues` (`docket_core::redelivery::REQUEUES_ATTRIBUTE`).
    fn requeue(
        &self,
        body: &str,
        seconds: i32,
        requeues: u32,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// Keeps `body` on the failure queue with `error`, after `receives` deliveries.
    fn set_aside(
        &self,
        body: &str,
        error: &Error,
        receives: u32,
    ) -> impl Future<Output = Result<(), Error>> + Send;
}

impl Redeliver for QueuedEvents {
    async fn retry_later(&self, receipt: &str, seconds: i32) -> Result<(), Error> {
        QueuedEvents::retry_later(self, receipt, seconds).await
    }
    async fn requeue(&self, body: &str, seconds: i32, requeues: u32) -> Result<(), Error> {
        QueuedEvents::requeue(self, body, seconds, requeues).await
    }
    async fn set_aside(&self, body: &str, error: &Error, receives: u32) -> Result<(), Error> {
        QueuedEvents::set_aside(self, body, error, receives).await
    }
}

/// Answers one invocation: an SQS batch (a payload with `Records`) or one event.
pub async fn handle(
    ports: &(impl HasBlobs + HasStore + HasWorkflow),
    queue: &impl Redeliver,
    ctx: &Context,
    payload: Value,
) -> Result<Value, Failure> {
    if payload.get("Records").is_none() {
        let outcome = match parse::<ObjectCreatedEvent>(payload) {
            Ok(event) => ingest_one(ports, ctx, event).await?,
            Err(e) => return traced(span("ingest", "", "", ""), async { Err(e) }).await,
        };
        return answer(&outcome);
    }
    let batch = match parse::<SqsEvent>(payload) {
        Ok(batch) => batch,
        Err(e) => return traced(span("ingest", "", "", ""), async { Err(e) }).await,
    };
    let handled = batch
        .records
        .iter()
        .map(|message| one_message(ports, queue, ctx, message));
    let failed: Vec<Value> = futures_util::future::join_all(handled)
        .await
        .into_iter()
        .flatten()
        .map(|id| json!({ "itemIdentifier": id }))
        .collect();
    Ok(json!({ "batchItemFailures": failed }))
}

/// Ingests one upload. The event has no run yet: the span's ids are empty.
async fn ingest_one(
    ports: &(impl HasBlobs + HasStore + HasWorkflow),
    ctx: &Context,
    event: ObjectCreatedEvent,
) -> Result<IngestOutcome, Failure> {
    let created = object_created(event);
    traced(span("ingest", "", "", ""), async {
        let outcome = ingest::handle(ports, ctx, &created).await?;
        tracing::info!(outcome = ?outcome, "ingested");
        Ok(outcome)
    })
    .await
}

/// Ingests one queued message; `Some(its id)` when it is to be delivered again.
async fn one_message(
    ports: &(impl HasBlobs + HasStore + HasWorkflow),
    queue: &impl Redeliver,
    ctx: &Context,
    message: &SqsMessage,
) -> Option<String> {
    let id = message.message_id.clone().unwrap_or_default();
    let body = message.body.as_deref().unwrap_or_default();
    let receives = message
        .attributes
        .get("ApproximateReceiveCount")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let requeues = message
        .message_attributes
        .get(REQUEUES_ATTRIBUTE)
        .and_then(|a| a.string_value.as_deref())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let failed = match serde_json::from_str::<ObjectCreatedEvent>(body) {
        Ok(event) => ingest_one(ports, ctx, event).await.err()?.0,
        Err(e) => {
            let e = Error::BadInput(format!("message {id}: not an Object Created event: {e}"));
            traced(span("ingest", "", "", ""), async { Err::<(), _>(e) })
                .await
                .err()?
                .0
        }
    };
    let after = after_failure(&failed, &id, receives, requeues);
    let acted = match after {
        AfterFailure::RetryIn(seconds) => {
            let receipt = message.receipt_handle.as_deref().unwrap_or_default();
            queue.retry_later(receipt, seconds).await
        }
        AfterFailure::Requeue { seconds, requeues } => queue.requeue(body, seconds, requeues).await,
        AfterFailure::SetAside => queue.set_aside(body, &failed, receives).await,
    };
    let work = async {
        match &acted {
            Ok(()) => {
                tracing::warn!(messageId = id, receives, requeues, after = ?after, "not ingested")
            }
            // Delivered again after the queue's visibility timeout all the same.
            Err(e) => tracing::error!(messageId = id, error = e.name(), "queue: {e}"),
        }
    };
    tracing::Instrument::instrument(work, span("ingest", "", "", "")).await;
    // A message sent again or set aside is done with (deleted); any other comes back.
    match (after, acted) {
        (AfterFailure::SetAside | AfterFailure::Requeue { .. }, Ok(())) => None,
        _ => Some(id),
    }
}

/// What ingest reads of the event. The time is written back as EventBridge writes it (RFC 3339,
/// UTC as `Z`, fractional seconds only when present): it orders the versions of a key.
pub(crate) fn object_created(event: ObjectCreatedEvent) -> ObjectCreated {
    let object = event.detail.object;
    ObjectCreated {
        bucket: event.detail.bucket.name,
        key: object.key,
        version_id: object.version_id,
        sequencer: object.sequencer,
        time: event
            .time
            .map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true)),
    }
}
