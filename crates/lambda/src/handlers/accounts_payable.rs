//! accounts-payable: the reference downstream consumer, fed by its SQS queue (a rule on the
//! stack's bus sends it `document.accepted` and `document.retracted` from `docket.route`). Each
//! message is one EventBridge event whose `detail` is the saga's event body (ids only); it is
//! applied once by `detail.eventId` (`docket_core::steps::payable`) and answered on the bus. A
//! refusal (`Business.DuplicateInvoice`, …) is an answer; a failure (throttling, a publication
//! that failed after the commit, a message that does not parse) is a batch item failure, which
//! SQS redelivers (and, after the queue's `maxReceiveCount`, moves to the dead-letter queue).
//!
//! It also answers a compensation's direct requests (`lambda:Invoke`, the shapes of
//! [`docket_aws::downstream::Request`]): `receiptFor`, `fence` and `void`, each one call of
//! [`Downstream`] on its book, answered as JSON or failed with the taxonomy's `errorType`. A
//! payload with `Records` is an SQS batch; any other is a request, and one that is not (an unknown
//! action, a missing or extra field) is `Fatal.BadInput`.

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use docket_aws::downstream::{ReceiptAnswer, Request, VoidAnswer};
use docket_aws::events::EventBridgeAnswers;
use docket_aws::payable::DynamoPayable;
use docket_core::ports::{AnswerBus, Downstream, PayableBook};
use docket_core::saga::sink::{Answer, Raced, Reads, Seen, Writes};
use docket_core::saga::{EventBody, EventId, ReceiptId, Voided};
use docket_core::steps::payable;
use docket_core::Error;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::{answer, parse, span, traced, Failure};

/// The consumer's book and the bus it answers on.
pub struct Deps {
    /// `ACCOUNTS_PAYABLE_TABLE`.
    pub book: DynamoPayable,
    /// `EVENT_BUS_NAME`.
    pub answers: EventBridgeAnswers,
}

impl Deps {
    /// From `ACCOUNTS_PAYABLE_TABLE`, `EVENT_BUS_NAME` and the process's injected faults.
    pub async fn from_env() -> Result<Self, Error> {
        let sdk = docket_aws::load_config().await;
        let faults = docket_aws::configured_faults()?;
        Ok(Deps {
            book: DynamoPayable::with_faults(
                &sdk,
                docket_aws::env("ACCOUNTS_PAYABLE_TABLE")?,
                &faults,
            ),
            answers: EventBridgeAnswers::with_faults(
                &sdk,
                docket_aws::env("EVENT_BUS_NAME")?,
                &faults,
            ),
        })
    }
}

impl PayableBook for Deps {
    async fn seen(&self, reads: &Reads) -> Result<Seen, Error> {
        self.book.seen(reads).await
    }
    async fn commit(&self, writes: &Writes) -> Result<Result<(), Raced>, Error> {
        self.book.commit(writes).await
    }
}

impl AnswerBus for Deps {
    async fn answer(&self, answer: &Answer) -> Result<(), Error> {
        self.answers.answer(answer).await
    }
}

impl Downstream for Deps {
    async fn receipt_for(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        self.book.receipt_for(event).await
    }
    async fn fence(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        self.book.fence(event).await
    }
    async fn void(&self, receipt: &ReceiptId, reason: &str) -> Result<Voided, Error> {
        self.book.void(receipt, reason).await
    }
}

/// An EventBridge event as the rule's SQS target delivers it (the fields the consumer reads).
#[derive(Debug, Deserialize)]
pub struct Envelope {
    /// `docket.route`.
    pub source: String,
    /// The event's kind, which must agree with `detail.kind`.
    #[serde(rename = "detail-type")]
    pub detail_type: String,
    /// The saga's event body.
    pub detail: EventBody,
}

/// Answers one invocation: an SQS batch (a payload with `Records`, see [`batch`]) or a direct
/// request (see [`request`]).
pub async fn handle(
    ports: &(impl PayableBook + AnswerBus + Downstream),
    payload: Value,
) -> Result<Value, Failure> {
    if payload.get("Records").is_some() {
        let event = match parse::<SqsEvent>(payload) {
            Ok(event) => event,
            Err(e) => return traced(span("accounts-payable", "", "", ""), async { Err(e) }).await,
        };
        return batch(ports, event).await;
    }
    match parse::<Request>(payload) {
        Ok(r) => request(ports, &r).await,
        Err(e) => traced(span("accounts-payable", "", "", ""), async { Err(e) }).await,
    }
}

/// Answers a compensation's request, in the span of its event or receipt id (its operation):
/// `receiptFor` and `fence` with [`ReceiptAnswer`] (`{"receiptId": …|null}`), `void` with
/// [`VoidAnswer`] (`{"voided": true|false, "alreadyVoided": why|null}`).
pub async fn request(ports: &impl Downstream, request: &Request) -> Result<Value, Failure> {
    let operation = match request {
        Request::ReceiptFor { event_id } | Request::Fence { event_id } => event_id.to_string(),
        Request::Void { receipt_id, .. } => receipt_id.to_string(),
    };
    let action = request.action();
    let work = async {
        let receipt = |receipt_id: Option<ReceiptId>| {
            let receipt = receipt_id.as_ref().map(ToString::to_string);
            tracing::info!(action, receipt, "answered");
            Reply::Receipt(ReceiptAnswer { receipt_id })
        };
        Ok(match request {
            Request::ReceiptFor { event_id } => receipt(ports.receipt_for(event_id).await?),
            Request::Fence { event_id } => receipt(ports.fence(event_id).await?),
            Request::Void { receipt_id, reason } => {
                let voided = ports.void(receipt_id, reason).await?;
                let already_voided = matches!(voided, Voided::AlreadyVoided(_));
                tracing::info!(action, already_voided, "answered");
                Reply::Void(VoidAnswer::from(&voided))
            }
        })
    };
    let span = span(&format!("accounts-payable.{action}"), "", "", &operation);
    answer(&traced(span, work).await?)
}

/// A direct request's answer.
#[derive(Serialize)]
#[serde(untagged)]
enum Reply {
    Receipt(ReceiptAnswer),
    Void(VoidAnswer),
}

/// Applies every message of the batch; answers `{"batchItemFailures": [...]}` with the ids of
/// the messages to redeliver (`ReportBatchItemFailures`).
pub async fn batch(
    ports: &(impl PayableBook + AnswerBus),
    event: SqsEvent,
) -> Result<Value, Failure> {
    let mut failures = Vec::new();
    for message in &event.records {
        if one(ports, message).await.is_err() {
            let id = message.message_id.clone().unwrap_or_default();
            failures.push(json!({ "itemIdentifier": id }));
        }
    }
    Ok(json!({ "batchItemFailures": failures }))
}

async fn one(ports: &(impl PayableBook + AnswerBus), message: &SqsMessage) -> Result<(), Failure> {
    let envelope = match envelope(message) {
        Ok(e) => e,
        Err(e) => {
            let id = message.message_id.as_deref().unwrap_or("");
            return traced(span("accounts-payable", "", "", id), async { Err(e) }).await;
        }
    };
    let body = &envelope.detail;
    let span = span(
        "accounts-payable",
        body.document_id.as_str(),
        body.run_id.as_str(),
        body.event_id.as_str(),
    );
    traced(span, async {
        let answer = payable::apply_and_answer(ports, body).await?;
        let error = match &answer {
            Answer::Refused { error, .. } => Some(error.as_str()),
            _ => None,
        };
        tracing::info!(
            kind = body.kind.name(),
            answer = answer.detail_type(),
            error,
            "answered"
        );
        Ok(())
    })
    .await
}

/// The message's event; a body that is not one (or whose detail-type disagrees with its
/// detail) is `Fatal.BadInput`, never echoed.
fn envelope(message: &SqsMessage) -> Result<Envelope, Error> {
    let body = message.body.as_deref().unwrap_or("");
    let value: Value = serde_json::from_str(body)
        .map_err(|e| Error::BadInput(format!("message body is not JSON: {e}")))?;
    let envelope: Envelope = parse(value)?;
    if envelope.detail_type != envelope.detail.kind.name() {
        return Err(Error::BadInput(format!(
            "detail-type {} disagrees with the detail's kind {}",
            envelope.detail_type,
            envelope.detail.kind.name()
        )));
    }
    Ok(envelope)
}

#[cfg(test)]
mod tests;
