//! A review task as recorded (without its token), what it shows of the fields, and the outcomes
//! of opening, deciding and expiring it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::corrections::overlay;
use super::{task_id_for, ReviewDecision, TaskId, Verdict};
use crate::ids::{DocumentId, RunId, Tenant};
use crate::model::fields::{Extraction, Field, FieldName};
use crate::model::run::{ObjectRef, RunInput, TaskToken};
use crate::validate::{Decision, Reason, ValidationReport};
use crate::Error;

/// Where a review task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    /// Waiting for a reviewer.
    Pending,
    /// A reviewer decided; the decision is recorded (and delivered once `deliveredAt` is set).
    Decided,
    /// The workflow stopped waiting before a decision was delivered.
    Expired,
}

impl ReviewStatus {
    /// Every status.
    pub const ALL: [ReviewStatus; 3] = [
        ReviewStatus::Pending,
        ReviewStatus::Decided,
        ReviewStatus::Expired,
    ];

    /// The name stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewStatus::Pending => "pending",
            ReviewStatus::Decided => "decided",
            ReviewStatus::Expired => "expired",
        }
    }

    /// The status named `s` (as stored).
    pub fn parse(s: &str) -> Result<Self, Error> {
        ReviewStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| Error::Internal(format!("unknown review status {s:?}")))
    }
}

/// Where a field's value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldSource {
    /// Extraction found it at this place of the OCR.
    Extracted {
        /// 1-based page number.
        page: u32,
        /// Index of the line within its page.
        line: usize,
    },
    /// A reviewer entered or confirmed it.
    Reviewer {
        /// The reviewer's id.
        id: String,
    },
}

/// A field as a reviewer sees it, and as the workflow gets it back after an approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewField {
    /// The normalized value (or the raw text extraction could not normalize).
    pub value: String,
    /// 0.0..=1.0; 1.0 once a reviewer set it.
    pub confidence: f64,
    /// Where the value comes from.
    pub source: FieldSource,
}

impl From<&Field> for ReviewField {
    fn from(f: &Field) -> Self {
        ReviewField {
            value: f.value.clone(),
            confidence: f.confidence,
            source: FieldSource::Extracted {
                page: f.page,
                line: f.line,
            },
        }
    }
}

/// The fields of an extraction, as a review task shows them.
pub fn review_fields(extraction: &Extraction) -> BTreeMap<FieldName, ReviewField> {
    extraction
        .fields
        .iter()
        .map(|(name, field)| (*name, ReviewField::from(field)))
        .collect()
}

/// Why a task was expired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Expiry {
    /// A name, not prose: `TaskTimedOut`, `InvalidToken` (Step Functions' answer to the
    /// callback), `States.Timeout` (the workflow's own timeout), `deadline`.
    pub reason: String,
    /// When it was recorded (RFC 3339).
    pub at: String,
}

/// The pending review task that was opened first: what the oldest-open-review metric reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OldestPending {
    /// The task.
    pub task_id: TaskId,
    /// Its tenant.
    pub tenant: Tenant,
    /// Its run (and, through it, its document).
    pub run_id: RunId,
    /// When it was opened (RFC 3339).
    pub created_at: String,
}

/// A review task, as reviewers and operators see it. The task token is not part of it (see
/// [`OpenTask`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewTask {
    /// The task (a function of the run).
    pub task_id: TaskId,
    /// The tenant; only its reviewers may see or decide the task.
    pub tenant: Tenant,
    /// The document.
    pub document_id: DocumentId,
    /// The run that waits.
    pub run_id: RunId,
    /// Why validation asked for a person, as in the validation report.
    pub reasons: Vec<Reason>,
    /// The extracted fields with their confidence.
    pub fields: BTreeMap<FieldName, ReviewField>,
    /// The raw document version.
    pub document: ObjectRef,
    /// Its normalized OCR.
    pub ocr: ObjectRef,
    /// The validation report.
    pub report: ObjectRef,
    /// When the task was first opened (RFC 3339).
    pub created_at: String,
    /// When the workflow stops waiting (RFC 3339): the current attempt's timeout.
    pub deadline: String,
    /// Where it stands.
    pub status: ReviewStatus,
    /// The decision, once decided (kept when a decided task expires).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<ReviewDecision>,
    /// When Step Functions acknowledged the decision's callback (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_at: Option<String>,
    /// Why and when it expired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<Expiry>,
}

impl ReviewTask {
    /// The pending task of the run `input` whose validation `report` (stored at `report_ref`,
    /// with its OCR at `ocr`) needs review, opened at `now` and waited for until `deadline`.
    pub fn new(
        input: &RunInput,
        report: &ValidationReport,
        ocr: ObjectRef,
        report_ref: ObjectRef,
        now: OffsetDateTime,
        deadline: OffsetDateTime,
    ) -> Result<Self, Error> {
        let Decision::NeedsReview { reasons } = &report.decision else {
            return Err(Error::BadInput(format!(
                "run {} does not need review: its validation decided {}",
                input.run_id,
                decision_name(&report.decision)
            )));
        };
        if deadline <= now {
            return Err(Error::BadInput(format!(
                "review deadline {} is not after {}",
                rfc3339(deadline),
                rfc3339(now)
            )));
        }
        Ok(ReviewTask {
            task_id: task_id_for(&input.run_id),
            tenant: input.tenant.clone(),
            document_id: input.document_id.clone(),
            run_id: input.run_id.clone(),
            reasons: reasons.clone(),
            fields: review_fields(&report.extraction),
            document: input.raw.clone(),
            ocr,
            report: report_ref,
            created_at: rfc3339(now),
            deadline: rfc3339(deadline),
            status: ReviewStatus::Pending,
            decision: None,
            delivered_at: None,
            expiry: None,
        })
    }

    /// The fields the workflow continues with after an approval (the recorded corrections over
    /// the extracted fields); `None` unless the recorded decision is an approval.
    pub fn approved_fields(&self) -> Option<BTreeMap<FieldName, ReviewField>> {
        match &self.decision {
            Some(ReviewDecision {
                reviewer,
                verdict: Verdict::Approve { corrections, .. },
                ..
            }) => Some(overlay(&self.fields, corrections, reviewer)),
            _ => None,
        }
    }
}

/// A task to open, with the token of the Task attempt that waits for it. Not `Serialize`: the
/// token never leaves the process except towards the store and Step Functions.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenTask {
    /// The task.
    pub task: ReviewTask,
    /// The waiting attempt's token.
    pub token: TaskToken,
}

impl OpenTask {
    /// Checks that the task can be opened: pending, with no decision, delivery or expiry.
    pub fn check(&self) -> Result<(), Error> {
        let t = &self.task;
        if t.status != ReviewStatus::Pending
            || t.decision.is_some()
            || t.delivered_at.is_some()
            || t.expiry.is_some()
        {
            return Err(Error::BadInput(format!(
                "review task {} can only be opened pending and undecided",
                t.task_id
            )));
        }
        Ok(())
    }
}

/// What an open did.
#[derive(Debug, Clone, PartialEq)]
pub enum Opened {
    /// No task existed: created, pending, with this token.
    Created(ReviewTask),
    /// A retried open of a still-pending task: the same task, its token and deadline replaced
    /// by the new attempt's.
    Reopened(ReviewTask),
    /// The task is decided or expired already: nothing was written (the new token is not
    /// stored). The caller fails or answers the new attempt from the recorded state.
    Closed(ReviewTask),
}

impl Opened {
    /// The task as it now stands.
    pub fn task(&self) -> &ReviewTask {
        match self {
            Opened::Created(t) | Opened::Reopened(t) | Opened::Closed(t) => t,
        }
    }
}

/// Why a decision was not recorded, with the task as recorded.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Someone decided first; their decision (in the task) stands.
    AlreadyDecided(ReviewTask),
    /// The task expired, or its deadline passed (the task may still read `pending` then).
    Expired(ReviewTask),
}

impl Refusal {
    /// The task as recorded.
    pub fn task(&self) -> &ReviewTask {
        match self {
            Refusal::AlreadyDecided(t) | Refusal::Expired(t) => t,
        }
    }

    /// The answer for the reviewer: `Conflict.AlreadyDecided` naming who decided what and when,
    /// or `Conflict.ReviewExpired` naming why. Ids, names and times only.
    pub fn error(&self) -> Error {
        match self {
            Refusal::AlreadyDecided(t) => Error::AlreadyDecided(format!(
                "review task {} was already {}",
                t.task_id,
                t.decision
                    .as_ref()
                    .map(ReviewDecision::summary)
                    .unwrap_or_else(|| "decided".into())
            )),
            Refusal::Expired(t) => Error::ReviewExpired(match &t.expiry {
                Some(e) => format!(
                    "review task {} expired at {}: {}",
                    t.task_id, e.at, e.reason
                ),
                None => format!(
                    "review task {} passed its deadline {}",
                    t.task_id, t.deadline
                ),
            }),
        }
    }
}

/// What an expiry did.
#[derive(Debug, Clone, PartialEq)]
pub enum ExpireOutcome {
    /// Moved to `expired` now (from pending, or from decided without delivery).
    Expired(ReviewTask),
    /// It was expired already, for another reason; nothing written.
    AlreadyExpired(ReviewTask),
    /// Its decision was delivered to the workflow: not expired, nothing written.
    Delivered(ReviewTask),
}

impl ExpireOutcome {
    /// The task as it now stands.
    pub fn task(&self) -> &ReviewTask {
        match self {
            ExpireOutcome::Expired(t)
            | ExpireOutcome::AlreadyExpired(t)
            | ExpireOutcome::Delivered(t) => t,
        }
    }
}

fn decision_name(d: &Decision) -> &'static str {
    match d {
        Decision::AutoApprove => "auto_approve",
        Decision::NeedsReview { .. } => "needs_review",
        Decision::Invalid { .. } => "invalid",
    }
}

/// An instant as stored: RFC 3339 in UTC with exactly three decimals, so that the strings sort
/// as the instants do (`createdAt` is the tenant index's sort key).
pub fn rfc3339(t: OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC)
        .format(time::macros::format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        ))
        .expect("every UTC instant of years 0..=9999 formats")
}

pub(super) fn parse_time(what: &str, s: &str) -> Result<OffsetDateTime, Error> {
    OffsetDateTime::parse(s, &Rfc3339)
        .map_err(|_| Error::Internal(format!("review {what} {s:?} is not RFC 3339")))
}
