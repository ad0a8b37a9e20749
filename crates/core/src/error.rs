//! The one error taxonomy. Every error has a stable name `Family.Name`; a Lambda reports it as its
//! `errorType`, and the state machines' Retry/Catch match on exactly these names. The families say
//! what a caller may do:
//!
//! - `Transient.*`: nothing is known to be wrong with the request; retry with backoff (bounded).
//! - `Business.*`: the document or decision is not acceptable; never retried, caught and recorded.
//! - `Ambiguous.*`: a provider may or may not have done the work; reconcile before any new attempt.
//! - `Conflict.*`: the request contradicts what is recorded; an operator decides.
//! - `Fatal.*`: a bug or misconfiguration; not retried, visible as a failure.

use serde::{Deserialize, Serialize};

/// What a caller may do with an error (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Family {
    /// Retry with backoff.
    Transient,
    /// Record and stop; never retry.
    Business,
    /// Reconcile with the provider before anything else.
    Ambiguous,
    /// Route to an operator.
    Conflict,
    /// A bug or misconfiguration.
    Fatal,
}

/// Every error a docket step can end with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A dependency (AWS service, network) failed in a way that may pass: throttling, 5xx, timeout
    /// before the request was sent.
    #[error("dependency unavailable: {0}")]
    Dependency(String),
    /// The same operation is being performed by someone else right now.
    #[error("operation in progress: {0}")]
    InProgress(String),
    /// The document fails validation; the reasons are in the validation report.
    #[error("document invalid: {0}")]
    DocumentInvalid(String),
    /// The object's bytes are not a supported document type (PDF, PNG, JPEG, TIFF).
    #[error("unsupported document type: {0}")]
    UnsupportedDocumentType(String),
    /// The object is larger than the configured limit.
    #[error("document too large: {size} bytes, limit {limit}")]
    DocumentTooLarge {
        /// The object's size.
        size: u64,
        /// The configured limit.
        limit: u64,
    },
    /// The object has no bytes, or a document header and nothing else.
    #[error("empty document")]
    EmptyDocument,
    /// The object key cannot name a document (traversal, empty segments, no tenant).
    #[error("bad object key: {0}")]
    BadKey(String),
    /// The OCR provider could not read the document.
    #[error("OCR failed: {0}")]
    OcrFailed(String),
    /// A provider may have accepted work whose outcome could not be established.
    #[error("outcome unknown: {0}")]
    OutcomeUnknown(String),
    /// An ambiguous outcome that could not be established within its bounded reconciliation:
    /// the operation is unresolved, with an owner and a next action; nothing retries it.
    #[error("unresolved: {0}")]
    Unresolved(String),
    /// The same operation id was used with different parameters.
    #[error("parameters changed for operation {0}")]
    ParametersChanged(String),
    /// A result for an older source version than the one already accepted.
    #[error("stale: {0}")]
    StaleVersion(String),
    /// A holder whose lease on an operation was taken over tried to write (its fence is old).
    #[error("fenced out: {0}")]
    FencedOut(String),
    /// The operation's record is past its retention window: running it again is an explicit
    /// recovery decision for an operator, never automatic.
    #[error("retention expired: {0}")]
    RetentionExpired(String),
    /// The input to a step is malformed (a bug in the caller or the state machine).
    #[error("bad input: {0}")]
    BadInput(String),
    /// Anything else that is a bug or misconfiguration.
    #[error("internal: {0}")]
    Internal(String),
    /// The review task does not exist, or belongs to another tenant (the same answer, so that it
    /// reveals nothing).
    #[error("not found: {0}")]
    ReviewNotFound(String),
    /// A reviewer rejected the document (the `SendTaskFailure` error of a review).
    #[error("rejected by review: {0}")]
    ReviewRejected(String),
    /// The review task was decided already; the first decision stands.
    #[error("already decided: {0}")]
    AlreadyDecided(String),
    /// The review task expired: the workflow stopped waiting before a decision was delivered.
    #[error("review expired: {0}")]
    ReviewExpired(String),
}

impl Error {
    /// The stable `Family.Name`, used as Lambda `errorType` and in ASL Retry/Catch.
    pub fn name(&self) -> &'static str {
        match self {
            Error::Dependency(_) => "Transient.Dependency",
            Error::InProgress(_) => "Transient.InProgress",
            Error::DocumentInvalid(_) => "Business.DocumentInvalid",
            Error::UnsupportedDocumentType(_) => "Business.UnsupportedDocumentType",
            Error::DocumentTooLarge { .. } => "Business.DocumentTooLarge",
            Error::EmptyDocument => "Business.EmptyDocument",
            Error::BadKey(_) => "Business.BadKey",
            Error::OcrFailed(_) => "Business.OcrFailed",
            Error::OutcomeUnknown(_) => "Ambiguous.OutcomeUnknown",
            Error::Unresolved(_) => "Ambiguous.Unresolved",
            Error::ParametersChanged(_) => "Conflict.ParametersChanged",
            Error::StaleVersion(_) => "Conflict.StaleVersion",
            Error::FencedOut(_) => "Conflict.FencedOut",
            Error::RetentionExpired(_) => "Conflict.RetentionExpired",
            Error::BadInput(_) => "Fatal.BadInput",
            Error::Internal(_) => "Fatal.Internal",
            Error::ReviewNotFound(_) => "Business.ReviewNotFound",
            Error::ReviewRejected(_) => "Business.ReviewRejected",
            Error::AlreadyDecided(_) => "Conflict.AlreadyDecided",
            Error::ReviewExpired(_) => "Conflict.ReviewExpired",
        }
    }

    /// The family of [`Error::name`].
    pub fn family(&self) -> Family {
        match self.name().split('.').next() {
            Some("Transient") => Family::Transient,
            Some("Business") => Family::Business,
            Some("Ambiguous") => Family::Ambiguous,
            Some("Conflict") => Family::Conflict,
            _ => Family::Fatal,
        }
    }
}

/// Every error name, for linting the state machines against the taxonomy.
pub const ALL_NAMES: &[&str] = &[
    "Transient.Dependency",
    "Transient.InProgress",
    "Business.DocumentInvalid",
    "Business.UnsupportedDocumentType",
    "Business.DocumentTooLarge",
    "Business.EmptyDocument",
    "Business.BadKey",
    "Business.OcrFailed",
    "Ambiguous.OutcomeUnknown",
    "Ambiguous.Unresolved",
    "Conflict.ParametersChanged",
    "Conflict.StaleVersion",
    "Conflict.FencedOut",
    "Conflict.RetentionExpired",
    "Fatal.BadInput",
    "Fatal.Internal",
    "Business.ReviewNotFound",
    "Business.ReviewRejected",
    "Conflict.AlreadyDecided",
    "Conflict.ReviewExpired",
];

/// Result with the taxonomy's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn one_of_each() -> Vec<Error> {
        vec![
            Error::Dependency("x".into()),
            Error::InProgress("x".into()),
            Error::DocumentInvalid("x".into()),
            Error::UnsupportedDocumentType("x".into()),
            Error::DocumentTooLarge { size: 2, limit: 1 },
            Error::EmptyDocument,
            Error::BadKey("x".into()),
            Error::OcrFailed("x".into()),
            Error::OutcomeUnknown("x".into()),
            Error::Unresolved("x".into()),
            Error::ParametersChanged("x".into()),
            Error::StaleVersion("x".into()),
            Error::FencedOut("x".into()),
            Error::RetentionExpired("x".into()),
            Error::BadInput("x".into()),
            Error::Internal("x".into()),
            Error::ReviewNotFound("x".into()),
            Error::ReviewRejected("x".into()),
            Error::AlreadyDecided("x".into()),
            Error::ReviewExpired("x".into()),
        ]
    }

    #[test]
    fn every_error_has_a_listed_name_and_the_list_has_no_extra() {
        let names: Vec<_> = one_of_each().iter().map(Error::name).collect();
        assert_eq!(names, ALL_NAMES);
    }

    #[test]
    fn families_follow_the_name_prefix() {
        assert_eq!(Error::Dependency("x".into()).family(), Family::Transient);
        assert_eq!(Error::EmptyDocument.family(), Family::Business);
        assert_eq!(
            Error::OutcomeUnknown("x".into()).family(),
            Family::Ambiguous
        );
        assert_eq!(Error::StaleVersion("x".into()).family(), Family::Conflict);
        assert_eq!(Error::Internal("x".into()).family(), Family::Fatal);
    }
}
