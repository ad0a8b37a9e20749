//! The downstream consumer as a compensation asks it ([`Downstream`]): a synchronous
//! `lambda:Invoke` (`RequestResponse`) of the consumer's function (accounts-payable) with a
//! direct request ([`Request`]), never a read of its table. The request and answer shapes are
//! defined here, and the function serves them with the same types.
//!
//! Errors: a function error whose `errorType` is a taxonomy name (`Conflict.UnknownReceipt`,
//! `Transient.Dependency`, …) is that error; any other function error (a crash, a timeout,
//! `Runtime.*`) is `Transient.Dependency`. An Invoke that failed is classified as a read
//! ([`classify`]): `receipt_for` reads, and `fence` and `void` are idempotent, so a lost answer
//! is retried rather than reconciled. An answer that is not the expected shape (the wrong
//! function configured) is `Fatal.Internal`.

use aws_sdk_lambda::error::SdkError;
use aws_sdk_lambda::operation::invoke::InvokeError;
use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::InvocationType;
use aws_sdk_lambda::Client;
use docket_core::error::ErrorKind;
use docket_core::ports::Downstream;
use docket_core::saga::{EventId, ReceiptId, Voided};
use docket_core::Error;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::errors::{classify, code};

/// A direct request to the consumer: its function's payload besides the SQS batches of the bus's
/// events. `{"action":"receiptFor","eventId":…}`, `{"action":"fence","eventId":…}` (both
/// answered by [`ReceiptAnswer`]) and `{"action":"void","receiptId":…,"reason":…}` (answered by
/// [`VoidAnswer`]). No other field is accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum Request {
    /// [`Downstream::receipt_for`].
    ReceiptFor {
        /// The event.
        event_id: EventId,
    },
    /// [`Downstream::fence`].
    Fence {
        /// The event.
        event_id: EventId,
    },
    /// [`Downstream::void`].
    Void {
        /// The receipt to void.
        receipt_id: ReceiptId,
        /// Why (kept on the receipt; a second void answers it).
        reason: String,
    },
}

impl Request {
    /// The action's name, as in the payload.
    pub fn action(&self) -> &'static str {
        match self {
            Request::ReceiptFor { .. } => "receiptFor",
            Request::Fence { .. } => "fence",
            Request::Void { .. } => "void",
        }
    }
}

/// The answer to `receiptFor` and `fence`: `{"receiptId": "rc-…"}` or `{"receiptId": null}`
/// (the field is required: an answer without it is not this one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReceiptAnswer {
    /// The receipt the consumer holds for the event, if it applied it.
    #[serde(deserialize_with = "Option::deserialize")]
    pub receipt_id: Option<ReceiptId>,
}

/// The answer to `void`: `{"voided": true, "alreadyVoided": null}` when this request voided the
/// receipt, `{"voided": false, "alreadyVoided": "<why>"}` when it was voided before (both fields
/// required).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VoidAnswer {
    /// This request voided the receipt.
    pub voided: bool,
    /// It was voided before, with this reason.
    #[serde(deserialize_with = "Option::deserialize")]
    pub already_voided: Option<String>,
}

impl From<&Voided> for VoidAnswer {
    fn from(v: &Voided) -> Self {
        match v {
            Voided::Voided => VoidAnswer {
                voided: true,
                already_voided: None,
            },
            Voided::AlreadyVoided(why) => VoidAnswer {
                voided: false,
                already_voided: Some(why.clone()),
            },
        }
    }
}

impl TryFrom<VoidAnswer> for Voided {
    type Error = Error;

    fn try_from(a: VoidAnswer) -> Result<Voided, Error> {
        match a {
            VoidAnswer {
                voided: true,
                already_voided: None,
            } => Ok(Voided::Voided),
            VoidAnswer {
                voided: false,
                already_voided: Some(why),
            } => Ok(Voided::AlreadyVoided(why)),
            other => Err(Error::Internal(format!(
                "a void answered voided={} alreadyVoided={:?}",
                other.voided, other.already_voided
            ))),
        }
    }
}

/// A function error's payload, as the Lambda runtime writes it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FunctionError {
    error_type: String,
    #[serde(default)]
    error_message: String,
}

/// Lambda's own errors that pass, besides the throttling codes [`classify`] knows: the service
/// errors the state machines retry on every Task (`Lambda.ServiceException`).
const TRANSIENT_INVOKE_CODES: &[&str] = &["ServiceException"];

/// An Invoke that failed, classified as a read (see the module docs).
fn invoke_error<R: std::fmt::Debug>(what: &str, err: SdkError<InvokeError, R>) -> Error {
    match code(&err) {
        Some(c) if TRANSIENT_INVOKE_CODES.contains(&c) => Error::Dependency(format!("{what}: {c}")),
        _ => classify(what, err),
    }
}

/// The answer of `function` to a request: `payload` parsed as `T`, or, if the invocation
/// answered a function error (`function_error` is set), that error.
fn answer<T: DeserializeOwned>(
    function: &str,
    function_error: Option<&str>,
    payload: &[u8],
) -> Result<T, Error> {
    if let Some(unhandled) = function_error {
        return Err(match serde_json::from_slice::<FunctionError>(payload) {
            Ok(e) => match ErrorKind::from_name(&e.error_type) {
                Some(kind) => kind.with_detail(format!("{function}: {}", e.error_message)),
                None => Error::Dependency(format!(
                    "{function} failed: {}: {}",
                    e.error_type, e.error_message
                )),
            },
            Err(_) => Error::Dependency(format!("{function} failed ({unhandled})")),
        });
    }
    serde_json::from_slice(payload)
        .map_err(|e| Error::Internal(format!("{function} answered an unexpected payload: {e}")))
}

/// The consumer's function, invoked synchronously.
#[derive(Debug, Clone)]
pub struct LambdaDownstream {
    client: Client,
    function: String,
}

impl LambdaDownstream {
    /// Asks `function` (a name or ARN), with `faults` injected (tests and local runs only).
    pub fn with_faults(
        config: &aws_config::SdkConfig,
        function: impl Into<String>,
        faults: &crate::Faults,
    ) -> Self {
        let builder = aws_sdk_lambda::config::Builder::from(config);
        LambdaDownstream {
            client: Client::from_conf(crate::with_faults(builder, faults).build()),
            function: function.into(),
        }
    }

    async fn ask<T: DeserializeOwned>(&self, request: &Request) -> Result<T, Error> {
        let what = format!("lambda Invoke {} {}", self.function, request.action());
        let payload = serde_json::to_vec(request).map_err(|e| Error::Internal(e.to_string()))?;
        let out = self
            .client
            .invoke()
            .function_name(&self.function)
            .invocation_type(InvocationType::RequestResponse)
            .payload(Blob::new(payload))
            .send()
            .await
            .map_err(|e| invoke_error(&what, e))?;
        let payload = out.payload().map(Blob::as_ref).unwrap_or_default();
        answer(&what, out.function_error(), payload)
    }
}

impl Downstream for LambdaDownstream {
    async fn receipt_for(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        let request = Request::ReceiptFor {
            event_id: event.clone(),
        };
        Ok(self.ask::<ReceiptAnswer>(&request).await?.receipt_id)
    }

    async fn fence(&self, event: &EventId) -> Result<Option<ReceiptId>, Error> {
        let request = Request::Fence {
            event_id: event.clone(),
        };
        Ok(self.ask::<ReceiptAnswer>(&request).await?.receipt_id)
    }

    async fn void(&self, receipt: &ReceiptId, reason: &str) -> Result<Voided, Error> {
        let request = Request::Void {
            receipt_id: receipt.clone(),
            reason: reason.to_string(),
        };
        self.ask::<VoidAnswer>(&request).await?.try_into()
    }
}

#[cfg(test)]
mod tests;
