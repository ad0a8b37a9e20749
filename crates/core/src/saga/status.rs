//! Where a compensation stands and how a compensated saga ended: stable names, stored in the
//! journal and shown to operators.

use serde::{Deserialize, Serialize};

/// Where the compensation of one effect stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompensationStatus {
    /// Nothing to undo (the effect did not happen, or something newer superseded it).
    NotRequired,
    /// To be compensated.
    Pending,
    /// Claimed and tried at least once (`attempts`), not yet committed.
    Attempted,
    /// Undone.
    Committed,
    /// Could not be undone within its bound: an open obligation of `owner`.
    FailedManualReview,
}

impl CompensationStatus {
    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            CompensationStatus::NotRequired => "not-required",
            CompensationStatus::Pending => "pending",
            CompensationStatus::Attempted => "attempted",
            CompensationStatus::Committed => "committed",
            CompensationStatus::FailedManualReview => "failed-manual-review",
        }
    }
}

/// How a compensated saga ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SagaEnd {
    /// Every effect that happened was undone.
    #[serde(rename = "compensated")]
    Compensated,
    /// A compensation failed for good: an owner must act (never a silent success).
    #[serde(rename = "compensation_failed")]
    CompensationFailed,
    /// Nothing had happened (or everything was superseded): nothing to undo.
    #[serde(rename = "not-required")]
    NotRequired,
}

impl SagaEnd {
    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            SagaEnd::Compensated => "compensated",
            SagaEnd::CompensationFailed => "compensation_failed",
            SagaEnd::NotRequired => "not-required",
        }
    }
}
