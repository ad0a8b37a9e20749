//! A reviewer and their decision: approve (with corrections) or reject, its field-level diff, and
//! what of it the audit log records.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use time::OffsetDateTime;

use super::corrections::{check_corrections, diff, overlay};
use super::{rfc3339, ReviewField, ReviewTask, TaskId};
use crate::config::PipelineConfig;
use crate::ids::{canonical_json, sha256_hex, Tenant};
use crate::model::fields::FieldName;
use crate::Error;

/// The longest free text (comment, rejection reason) a reviewer may send.
pub const MAX_TEXT_CHARS: usize = 2000;

/// Who decides: the identity and tenant of the authenticated caller, never from the request
/// body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reviewer {
    /// A stable id of the person (e.g. the identity provider's subject or e-mail).
    pub id: String,
    /// The tenant they act for.
    pub tenant: Tenant,
}

impl Reviewer {
    /// A reviewer; the id must be 1..=256 characters without control characters.
    pub fn new(id: impl Into<String>, tenant: Tenant) -> Result<Self, Error> {
        let id = id.into();
        let n = id.chars().count();
        if n == 0 || n > 256 || id.chars().any(char::is_control) {
            return Err(Error::BadInput(
                "a reviewer id has 1 to 256 characters and no control characters".into(),
            ));
        }
        Ok(Reviewer { id, tenant })
    }
}

/// What the reviewer decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The document goes on, with these fields set by the reviewer.
    Approve {
        /// Field → value the reviewer entered (checked, trimmed); a field not listed keeps
        /// the extracted value.
        corrections: BTreeMap<FieldName, String>,
        /// An optional note.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
    },
    /// The document is rejected: the workflow fails the run with `Business.ReviewRejected`.
    Reject {
        /// Why, for the record.
        reason: String,
    },
}

/// A field's value and confidence, one side of a [`FieldChange`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldValue {
    /// The value.
    pub value: String,
    /// Its confidence.
    pub confidence: f64,
}

/// One field changed by a review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    /// The field.
    pub field: FieldName,
    /// Before the review; `None` when extraction had not found it.
    pub before: Option<FieldValue>,
    /// After the review.
    pub after: FieldValue,
}

/// A reviewer's decision on a task, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewDecision {
    /// Who decided.
    pub reviewer: Reviewer,
    /// When (RFC 3339).
    pub decided_at: String,
    /// Approve (with corrections) or reject.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The field-level diff of the corrections (empty for a rejection).
    pub changes: Vec<FieldChange>,
}

impl ReviewDecision {
    /// An approval of `task` by `reviewer` with `corrections` (field name → value as entered),
    /// checked by [`apply_corrections`](super::apply_corrections) and diffed. Returns the
    /// decision and the corrected fields (what the workflow continues with).
    pub fn approve(
        task: &ReviewTask,
        reviewer: &Reviewer,
        corrections: &BTreeMap<String, String>,
        comment: Option<&str>,
        config: &PipelineConfig,
        now: OffsetDateTime,
    ) -> Result<(ReviewDecision, BTreeMap<FieldName, ReviewField>), Error> {
        let checked = check_corrections(corrections, config)?;
        let corrected = overlay(&task.fields, &checked, reviewer);
        let comment = comment
            .map(|c| text("comment", c))
            .transpose()?
            .filter(|c| !c.is_empty());
        let decision = ReviewDecision {
            reviewer: reviewer.clone(),
            decided_at: rfc3339(now),
            verdict: Verdict::Approve {
                corrections: checked,
                comment,
            },
            changes: diff(&task.fields, &corrected),
        };
        Ok((decision, corrected))
    }

    /// A rejection by `reviewer`; the reason is required.
    pub fn reject(
        reviewer: &Reviewer,
        reason: &str,
        now: OffsetDateTime,
    ) -> Result<ReviewDecision, Error> {
        let reason = text("rejection reason", reason)?;
        if reason.is_empty() {
            return Err(Error::BadInput("a rejection needs a reason".into()));
        }
        Ok(ReviewDecision {
            reviewer: reviewer.clone(),
            decided_at: rfc3339(now),
            verdict: Verdict::Reject { reason },
            changes: Vec::new(),
        })
    }

    /// Whether it is an approval.
    pub fn is_approval(&self) -> bool {
        matches!(self.verdict, Verdict::Approve { .. })
    }

    /// `approved by <id> at <time>` / `rejected by ...`: ids and times only, for messages.
    pub fn summary(&self) -> String {
        let what = if self.is_approval() {
            "approved"
        } else {
            "rejected"
        };
        format!("{what} by {} at {}", self.reviewer.id, self.decided_at)
    }

    /// The audit entry's detail for this decision on `task`. The audit log carries no document
    /// content, so the diff appears as the changed field names with their confidences; the
    /// values stay in the review record, and `decisionSha256` (of the canonical JSON of the
    /// decision) ties the entry to exactly that record.
    pub fn audit_detail(&self, task: &TaskId) -> Value {
        let changes: Vec<Value> = self
            .changes
            .iter()
            .map(|c| {
                json!({
                    "field": c.field,
                    "added": c.before.is_none(),
                    "confidenceBefore": c.before.as_ref().map(|b| b.confidence),
                    "confidenceAfter": c.after.confidence,
                })
            })
            .collect();
        let recorded = serde_json::to_value(self).expect("decisions serialize");
        json!({
            "taskId": task,
            "reviewer": self.reviewer.id,
            "tenant": self.reviewer.tenant,
            "verdict": if self.is_approval() { "approve" } else { "reject" },
            "decidedAt": self.decided_at,
            "changes": changes,
            "decisionSha256": sha256_hex(canonical_json(&recorded).as_bytes()),
        })
    }
}

/// Trimmed free text of at most [`MAX_TEXT_CHARS`], without control characters other than line
/// breaks and tabs: the text is shown in terminals and logs, where escape sequences would act.
fn text(what: &str, s: &str) -> Result<String, Error> {
    let s = s.trim();
    if s.chars().count() > MAX_TEXT_CHARS {
        return Err(Error::BadInput(format!(
            "{what} is longer than {MAX_TEXT_CHARS} characters"
        )));
    }
    if s.chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        return Err(Error::BadInput(format!(
            "{what} contains control characters"
        )));
    }
    Ok(s.to_string())
}
