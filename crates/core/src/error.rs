//! The one error taxonomy. Every error has a stable name `Family.Name`; a Lambda reports it as its
//! `errorType`, and the state machines' Retry/Catch match on exactly these names. The families say
//! what a caller may do:
//!
//! - `Transient.*`: nothing is known to be wrong with the request; retry with backoff (bounded).
//! - `Business.*`: the document or decision is not acceptable; never retried, caught and recorded.
//! - `Ambiguous.*`: a provider may or may not have done the work; reconcile before any new attempt.
//! - `Conflict.*`: the request contradicts what is recorded; an operator decides.
//! - `Fatal.*`: a bug or misconfiguration; not retried, visible as a failure.

use std::fmt;

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
    /// The document has more pages than the configured limit (`limits.max_pages`).
    #[error("too many pages: {pages} pages, limit {limit}")]
    TooManyPages {
        /// The document's pages.
        pages: u32,
        /// The configured limit.
        limit: u32,
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
    /// The downstream consumer already holds an invoice with the same issuer and number under
    /// another document.
    #[error("duplicate invoice: {0}")]
    DuplicateInvoice(String),
    /// A void named a receipt the downstream consumer does not have.
    #[error("unknown receipt: {0}")]
    UnknownReceipt(String),
    /// A dependency did not finish or answer within the workflow's deadline: the OCR job past
    /// its poll limit, the consumer's receipt past `ReceiptTimeoutSeconds`. Step Functions
    /// calls it `States.Timeout`, a name a Fail state may not end with ([`ErrorKind::of_caught`]).
    #[error("timed out: {0}")]
    TimedOut(String),
    /// A provider's quota is booked: every call slot within the admission horizon, or every
    /// job slot, is taken (`crate::admission`). Nothing was asked of the provider; come back.
    #[error("quota full: {0}")]
    QuotaFull(String),
}

/// Declares [`ErrorKind`] from one table of `Variant => Family` rows: the variant is the name's
/// second part, so every stable name (`Family.Variant`), the family and [`ErrorKind::ALL`] come
/// from this one list.
macro_rules! error_kinds {
    ($($kind:ident => $family:ident,)*) => {
        /// What an [`Error`] is, without its detail: the taxonomy as data. Its stable name is the
        /// Lambda `errorType` the state machines match and the name the ledger records.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorKind {
            $(
                #[doc = concat!("`", stringify!($family), ".", stringify!($kind), "`: see [`Error::", stringify!($kind), "`].")]
                $kind,
            )*
        }

        impl ErrorKind {
            /// Every kind, in the table's order.
            pub const ALL: [ErrorKind; [$(ErrorKind::$kind),*].len()] = [$(ErrorKind::$kind),*];

            /// The stable `Family.Name`.
            pub fn name(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => concat!(stringify!($family), ".", stringify!($kind)),)*
                }
            }

            /// What a caller may do with it.
            pub fn family(self) -> Family {
                match self {
                    $(ErrorKind::$kind => Family::$family,)*
                }
            }
        }
    };
}

error_kinds! {
    Dependency => Transient,
    InProgress => Transient,
    DocumentInvalid => Business,
    UnsupportedDocumentType => Business,
    DocumentTooLarge => Business,
    TooManyPages => Business,
    EmptyDocument => Business,
    BadKey => Business,
    OcrFailed => Business,
    OutcomeUnknown => Ambiguous,
    Unresolved => Ambiguous,
    ParametersChanged => Conflict,
    StaleVersion => Conflict,
    FencedOut => Conflict,
    RetentionExpired => Conflict,
    BadInput => Fatal,
    Internal => Fatal,
    ReviewNotFound => Business,
    ReviewRejected => Business,
    AlreadyDecided => Conflict,
    ReviewExpired => Conflict,
    DuplicateInvoice => Business,
    UnknownReceipt => Conflict,
    TimedOut => Transient,
    QuotaFull => Transient,
}

impl ErrorKind {
    /// The kind named `name` (a stable `Family.Name`), if there is one.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The kind of an error a state machine's Catch caught (`name`: its `Error`): ours as it
    /// is; the platform's in the taxonomy, since a Fail state may not end with a `States.*`
    /// name. A deadline (`States.Timeout`, `States.HeartbeatTimeout`, a function's
    /// `Sandbox.Timedout`) is `TimedOut`; a Lambda service error past its retries
    /// (`Lambda.*`) is `Dependency`; anything else (`States.TaskFailed`, `States.Runtime`, an
    /// unknown name) is `Internal`.
    pub fn of_caught(name: &str) -> ErrorKind {
        match name {
            "States.Timeout" | "States.HeartbeatTimeout" | "Sandbox.Timedout" => {
                ErrorKind::TimedOut
            }
            lambda if lambda.starts_with("Lambda.") => ErrorKind::Dependency,
            other => ErrorKind::from_name(other).unwrap_or(ErrorKind::Internal),
        }
    }

    /// An error of this kind with `detail` (a recorded error coming back, e.g. from the ledger).
    /// `DocumentTooLarge` and `TooManyPages` come back without their sizes (0, 0) and `EmptyDocument` without the
    /// detail: the name is what callers and the state machines match on.
    pub fn with_detail(self, detail: impl Into<String>) -> Error {
        let d = detail.into();
        match self {
            ErrorKind::Dependency => Error::Dependency(d),
            ErrorKind::InProgress => Error::InProgress(d),
            ErrorKind::DocumentInvalid => Error::DocumentInvalid(d),
            ErrorKind::UnsupportedDocumentType => Error::UnsupportedDocumentType(d),
            ErrorKind::DocumentTooLarge => Error::DocumentTooLarge { size: 0, limit: 0 },
            ErrorKind::TooManyPages => Error::TooManyPages { pages: 0, limit: 0 },
            ErrorKind::EmptyDocument => Error::EmptyDocument,
            ErrorKind::BadKey => Error::BadKey(d),
            ErrorKind::OcrFailed => Error::OcrFailed(d),
            ErrorKind::OutcomeUnknown => Error::OutcomeUnknown(d),
            ErrorKind::Unresolved => Error::Unresolved(d),
            ErrorKind::ParametersChanged => Error::ParametersChanged(d),
            ErrorKind::StaleVersion => Error::StaleVersion(d),
            ErrorKind::FencedOut => Error::FencedOut(d),
            ErrorKind::RetentionExpired => Error::RetentionExpired(d),
            ErrorKind::BadInput => Error::BadInput(d),
            ErrorKind::Internal => Error::Internal(d),
            ErrorKind::ReviewNotFound => Error::ReviewNotFound(d),
            ErrorKind::ReviewRejected => Error::ReviewRejected(d),
            ErrorKind::AlreadyDecided => Error::AlreadyDecided(d),
            ErrorKind::ReviewExpired => Error::ReviewExpired(d),
            ErrorKind::DuplicateInvoice => Error::DuplicateInvoice(d),
            ErrorKind::UnknownReceipt => Error::UnknownReceipt(d),
            ErrorKind::TimedOut => Error::TimedOut(d),
            ErrorKind::QuotaFull => Error::QuotaFull(d),
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Error {
    /// Its kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Dependency(_) => ErrorKind::Dependency,
            Error::InProgress(_) => ErrorKind::InProgress,
            Error::DocumentInvalid(_) => ErrorKind::DocumentInvalid,
            Error::UnsupportedDocumentType(_) => ErrorKind::UnsupportedDocumentType,
            Error::DocumentTooLarge { .. } => ErrorKind::DocumentTooLarge,
            Error::TooManyPages { .. } => ErrorKind::TooManyPages,
            Error::EmptyDocument => ErrorKind::EmptyDocument,
            Error::BadKey(_) => ErrorKind::BadKey,
            Error::OcrFailed(_) => ErrorKind::OcrFailed,
            Error::OutcomeUnknown(_) => ErrorKind::OutcomeUnknown,
            Error::Unresolved(_) => ErrorKind::Unresolved,
            Error::ParametersChanged(_) => ErrorKind::ParametersChanged,
            Error::StaleVersion(_) => ErrorKind::StaleVersion,
            Error::FencedOut(_) => ErrorKind::FencedOut,
            Error::RetentionExpired(_) => ErrorKind::RetentionExpired,
            Error::BadInput(_) => ErrorKind::BadInput,
            Error::Internal(_) => ErrorKind::Internal,
            Error::ReviewNotFound(_) => ErrorKind::ReviewNotFound,
            Error::ReviewRejected(_) => ErrorKind::ReviewRejected,
            Error::AlreadyDecided(_) => ErrorKind::AlreadyDecided,
            Error::ReviewExpired(_) => ErrorKind::ReviewExpired,
            Error::DuplicateInvoice(_) => ErrorKind::DuplicateInvoice,
            Error::UnknownReceipt(_) => ErrorKind::UnknownReceipt,
            Error::TimedOut(_) => ErrorKind::TimedOut,
            Error::QuotaFull(_) => ErrorKind::QuotaFull,
        }
    }

    /// The stable `Family.Name`, used as Lambda `errorType` and in ASL Retry/Catch.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// What a caller may do with it.
    pub fn family(&self) -> Family {
        self.kind().family()
    }
}

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
            Error::TooManyPages { pages: 2, limit: 1 },
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
            Error::DuplicateInvoice("x".into()),
            Error::UnknownReceipt("x".into()),
            Error::TimedOut("x".into()),
            Error::QuotaFull("x".into()),
        ]
    }

    #[test]
    fn a_caught_error_becomes_a_name_a_fail_state_may_end_with() {
        for (caught, kind) in [
            ("Business.DuplicateInvoice", ErrorKind::DuplicateInvoice),
            ("States.Timeout", ErrorKind::TimedOut),
            ("States.HeartbeatTimeout", ErrorKind::TimedOut),
            ("Sandbox.Timedout", ErrorKind::TimedOut),
            ("Lambda.ServiceException", ErrorKind::Dependency),
            ("States.TaskFailed", ErrorKind::Internal),
            ("Nope.Nothing", ErrorKind::Internal),
        ] {
            assert_eq!(ErrorKind::of_caught(caught), kind, "{caught}");
            assert!(!ErrorKind::of_caught(caught).name().starts_with("States."));
        }
    }

    #[test]
    fn every_error_has_a_listed_name_and_the_list_has_no_extra() {
        let names: Vec<_> = one_of_each().iter().map(Error::name).collect();
        let all: Vec<_> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, all);
    }

    #[test]
    fn every_kind_maps_back_to_itself_by_name_and_with_a_detail() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.name()), Some(kind));
            assert_eq!(kind.with_detail("d").name(), kind.name());
            assert_eq!(kind.with_detail("d").kind(), kind);
        }
        assert_eq!(ErrorKind::from_name("Nope.Nothing"), None);
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
        for kind in ErrorKind::ALL {
            let prefix = format!("{:?}.", kind.family());
            assert!(kind.name().starts_with(&prefix), "{kind}");
        }
    }
}
