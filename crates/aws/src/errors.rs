//! SDK errors into the taxonomy. Only what is known to pass is `Transient.Dependency`; a request
//! that may have been sent and whose answer was lost is reported as such, so callers reconcile
//! instead of assuming nothing happened.

use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
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

/// Classifies an SDK error of operation `what`. Service answers with a throttling/5xx code and
/// failures to send are transient; a timeout or broken response after sending is transient too,
/// but callers whose operation is not idempotent must treat it as [`Error::OutcomeUnknown`]
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
        // The connector's error says why (connection refused, DNS, TLS...); it holds no payload.
        SdkError::DispatchFailure(e) => {
            Error::Dependency(format!("{what}: could not be sent: {e:?}"))
        }
        _ => Error::Dependency(format!("{what}: {}", short(&err))),
    }
}

/// Like [`classify`], for a call with an effect: if the request may have reached the service
/// (timeout or unreadable response), the outcome is unknown rather than merely transient.
pub fn classify_effect<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    what: &str,
    err: SdkError<E, R>,
) -> Error {
    match &err {
        SdkError::TimeoutError(_) | SdkError::ResponseError(_) => {
            Error::OutcomeUnknown(format!("{what}: {}", short(&err)))
        }
        _ => classify(what, err),
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
