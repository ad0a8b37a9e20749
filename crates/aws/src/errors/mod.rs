//! SDK errors into the taxonomy. Only what is known to pass is `Transient.Dependency`; a request
//! that may have been sent and whose answer was lost is reported as such, so callers reconcile
//! instead of assuming nothing happened.
//!
//! The SDK says of `SdkError::DispatchFailure` "an HTTP response was not received. The request
//! MAY have been sent": a connection that broke or timed out after it was established may have
//! carried the whole request. Only a failure to establish the connection (DNS resolution or
//! connect) proves that nothing reached the service; for an effect every other dispatch failure
//! is `Ambiguous.OutcomeUnknown`. A read may be repeated freely, so for it any dispatch failure
//! stays transient.

use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::client::dns::ResolveDnsError;
use aws_smithy_runtime_api::client::result::DispatchFailure;
use aws_smithy_types::error::display::DisplayErrorContext;
use docket_core::Error;

/// Error codes AWS services use for throttling and transient server trouble.
const TRANSIENT_CODES: &[&str] = &[
    "ThrottlingException",
    "Throttling",
    "ThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "RequestThrottled",
    "SlowDown",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "InternalError",
    "InternalServerError",
    "InternalFailure",
    "InternalServerErrorException",
    "LimitExceededException",
    "TransactionConflict",
    "TransactionInProgressException",
];

/// The service error code, if the service answered.
pub fn code<E: ProvideErrorMetadata, R>(err: &SdkError<E, R>) -> Option<&str> {
    match err {
        SdkError::ServiceError(e) => e.err().code(),
        _ => None,
    }
}

/// Classifies an SDK error of a read `what`. Service answers with a throttling/5xx code and
/// failures to send are transient; a timeout or broken response after sending is transient too,
/// but callers whose operation has an effect must treat it as [`Error::OutcomeUnknown`]
/// (see [`classify_effect`]).
pub fn classify<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    what: &str,
    err: SdkError<E, R>,
) -> Error {
    match &err {
        SdkError::ServiceError(e) => {
            let code = e.err().code().unwrap_or("Unknown");
            if TRANSIENT_CODES.contains(&code) {
                Error::Dependency(format!("{what}: {code}"))
            } else {
                Error::Internal(format!(
                    "{what}: {code}: {}",
                    e.err().message().unwrap_or("")
                ))
            }
        }
        SdkError::ConstructionFailure(_) => Error::Internal(format!("{what}: {err:?}")),
        SdkError::DispatchFailure(e) => Error::Dependency(format!("{what}: {}", dispatch(e))),
        _ => Error::Dependency(format!("{what}: {}", short(&err))),
    }
}

/// Like [`classify`], for a call with an effect: if the request may have reached the service
/// (timeout, unreadable response, or a dispatch failure after the connection was established),
/// the outcome is unknown rather than merely transient.
pub fn classify_effect<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    what: &str,
    err: SdkError<E, R>,
) -> Error {
    match &err {
        SdkError::TimeoutError(_) | SdkError::ResponseError(_) => {
            Error::OutcomeUnknown(format!("{what}: {}", short(&err)))
        }
        SdkError::DispatchFailure(e) if !never_sent(e) => {
            Error::OutcomeUnknown(format!("{what}: {}", dispatch(e)))
        }
        _ => classify(what, err),
    }
}

/// Whether a dispatch failure proves the request never left: somewhere in its cause is a failed
/// DNS resolution or a failed connect (the HTTP client's own "connect" error), so no connection
/// ever carried it. A pooled connection that breaks is not a connect error.
pub fn never_sent(failure: &DispatchFailure) -> bool {
    let Some(connector) = failure.as_connector_error() else {
        return false;
    };
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(connector);
    while let Some(err) = next {
        let connect = err
            .downcast_ref::<hyper_util::client::legacy::Error>()
            .is_some_and(|e| e.is_connect());
        if connect || err.is::<ResolveDnsError>() {
            return true;
        }
        next = err.source();
    }
    false
}

/// What a dispatch failure is, in words, and the connector's causes (connection refused, reset,
/// DNS...; they hold no payload).
fn dispatch(failure: &DispatchFailure) -> String {
    let what = if never_sent(failure) {
        "could not be sent (no connection)"
    } else if failure.is_timeout() {
        "timed out after it may have been sent"
    } else {
        "failed after it may have been sent"
    };
    match failure.as_connector_error() {
        Some(cause) => format!("{what}: {}", DisplayErrorContext(cause)),
        None => what.to_string(),
    }
}

fn short<E: std::fmt::Debug, R: std::fmt::Debug>(err: &SdkError<E, R>) -> &'static str {
    match err {
        SdkError::ConstructionFailure(_) => "request could not be built",
        SdkError::TimeoutError(_) => "timed out",
        SdkError::DispatchFailure(_) => "could not be sent",
        SdkError::ResponseError(_) => "response unreadable",
        SdkError::ServiceError(_) => "service error",
        _ => "unknown SDK error",
    }
}

#[cfg(test)]
mod tests;
