//! Human review (issue 5): a `needs_review` validation decision opens a review task, and the
//! workflow waits on a Step Functions task token (`lambda:invoke.waitForTaskToken`) until a
//! reviewer decides or the deadline passes.
//!
//! ```text
//!   open ──► pending ──decide (first wins)──► decided ──mark_delivered──► decided + deliveredAt
//!               │                                │
//!               └──expire──► expired ◄──expire───┘  (only while the decision is not delivered)
//! ```
//!
//! The rules, which [`memory::MemoryReviewStore`] applies under a lock and
//! `docket_aws::review::DynamoReviewStore` expresses as condition expressions:
//!
//! - **The task id is a function of the run** ([`task_id_for`]): a retried open finds the task.
//! - **Opening is idempotent** ([`reopen`]): a first open creates a `pending` task. A retried open
//!   of a still-pending task keeps the task (its content and creation time) but stores the new
//!   token and deadline: Step Functions issues a new token for every attempt of the Task, the old
//!   attempt's token is dead, and the new attempt's timeout is the one that counts. A retried open
//!   of a decided or expired task writes nothing (the new token is not stored) and returns the
//!   task as recorded; never a second task.
//! - **The token is server-side only**: [`TaskToken`] is not `Serialize`, its `Debug`/`Display`
//!   print `TaskToken(<redacted>)`, it is not a field of [`ReviewTask`], and only
//!   [`ReviewStore::token`] reads it back (for the adapter that calls Step Functions).
//! - **Who may act**: the reviewer's tenant (from the authenticated caller) must be the task's;
//!   otherwise the answer is the same `Business.ReviewNotFound` as for a missing task, so another
//!   tenant cannot even learn that a task exists ([`authorize`]).
//! - **The first decision wins** ([`apply_decision`]): `pending` → `decided` by one conditional
//!   write; a concurrent or repeated decision is refused with the task as recorded
//!   ([`Refusal::AlreadyDecided`] carries the winner's decision). Only the winner sends the one
//!   `SendTaskSuccess` / `SendTaskFailure` (`Business.ReviewRejected`); a loser never does. The
//!   very same decision written again (a retry after a lost acknowledgement) is acknowledged, not
//!   refused, so that the winner still sends.
//! - **Delivery is recorded** ([`ReviewStore::mark_delivered`]): once Step Functions acknowledged
//!   the callback, `deliveredAt` is set, and the decision can no longer be expired.
//! - **Expiring** ([`expire`]) moves `pending` (the deadline passed, the workflow stopped waiting)
//!   or `decided` whose decision was *not delivered* (Step Functions answered the callback with
//!   `TaskTimedOut` / `InvalidToken`, or it was never sent) to `expired`; the decision stays in
//!   the record for audit ("decided too late"). A delivered decision is never expired: the
//!   workflow has acted on it. Caveat for the caller: `TaskTimedOut` also means "already
//!   closed", so after a callback whose answer was lost (`Ambiguous.OutcomeUnknown`, or an SDK
//!   retry after a timeout), a `TaskTimedOut` before the deadline may be the first attempt's
//!   success: reconcile with the execution's history before expiring.
//!
//! [`ReviewStore::token`]: crate::ports::ReviewStore::token
//! [`ReviewStore::mark_delivered`]: crate::ports::ReviewStore::mark_delivered

pub mod identity;
pub mod memory;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::config::PipelineConfig;
use crate::ids::{canonical_json, sha256_hex, DocumentId, RunId, Tenant};
use crate::model::fields::{Extraction, Field, FieldName};
use crate::model::run::{ObjectRef, RunInput, TaskToken};
use crate::validate::{self, Decision, Reason, ValidationReport, BAD_FORMAT};
use crate::Error;

pub use memory::MemoryReviewStore;

/// The longest free text (comment, rejection reason) a reviewer may send.
pub const MAX_TEXT_CHARS: usize = 2000;

/// A review task: `rev-` + 32 hex, derived from the run ([`task_id_for`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TaskId(String);

impl TaskId {
    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Accepts an id read back from storage or input, if it has the right shape.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let ok = s.len() == 36
            && s.starts_with("rev-")
            && s[4..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| TaskId(s.to_string()))
            .ok_or_else(|| Error::BadInput(format!("not a review task id: {s:?}")))
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for TaskId {
    type Error = Error;

    fn try_from(s: String) -> Result<Self, Error> {
        TaskId::parse(&s)
    }
}

impl From<TaskId> for String {
    fn from(id: TaskId) -> String {
        id.0
    }
}

/// The review task of `run`: one per run, so a retried open (a new attempt of the Task, a
/// duplicate invocation) finds the same task instead of creating a second one.
pub fn task_id_for(run: &RunId) -> TaskId {
    let h = sha256_hex(format!("review:{run}").as_bytes());
    TaskId(format!("rev-{}", &h[..32]))
}

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
    /// checked by [`apply_corrections`] and diffed. Returns the decision and the corrected
    /// fields (what the workflow continues with).
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

/// The answer for a task that does not exist or belongs to another tenant (the same answer,
/// so that it reveals nothing).
pub fn not_found(task: &TaskId) -> Error {
    Error::ReviewNotFound(format!("review task {task} not found"))
}

/// Checks that `reviewer` may see and decide `task`: same tenant. Otherwise
/// `Business.ReviewNotFound`, exactly as for a task that does not exist.
pub fn authorize(reviewer: &Reviewer, task: &ReviewTask) -> Result<(), Error> {
    if reviewer.tenant == task.tenant {
        Ok(())
    } else {
        Err(not_found(&task.task_id))
    }
}

/// The fields after `corrections` (field name → value as entered) by `reviewer`: every
/// corrected field is set to the trimmed value with confidence 1.0 and the reviewer as its
/// source; the others are kept. An unknown field name, an empty value or one that is not
/// well-formed (an amount is a decimal with two decimals, a date ISO `yyyy-mm-dd`, a currency a
/// code the config knows, issuer and invoice number as validation requires) is
/// `Fatal.BadInput` naming the field and the expected form (never the value: no document
/// content in errors).
pub fn apply_corrections(
    fields: &BTreeMap<FieldName, ReviewField>,
    corrections: &BTreeMap<String, String>,
    reviewer: &Reviewer,
    config: &PipelineConfig,
) -> Result<BTreeMap<FieldName, ReviewField>, Error> {
    let checked = check_corrections(corrections, config)?;
    Ok(overlay(fields, &checked, reviewer))
}

/// The field-level diff from `before` to `after`: every field of `after` that is new or whose
/// value or confidence differs, in field order. (Corrections never remove a field, so removals
/// are not represented.)
pub fn diff(
    before: &BTreeMap<FieldName, ReviewField>,
    after: &BTreeMap<FieldName, ReviewField>,
) -> Vec<FieldChange> {
    after
        .iter()
        .filter_map(|(name, a)| {
            let b = before.get(name);
            let same = b.is_some_and(|b| b.value == a.value && b.confidence == a.confidence);
            (!same).then(|| FieldChange {
                field: *name,
                before: b.map(|b| FieldValue {
                    value: b.value.clone(),
                    confidence: b.confidence,
                }),
                after: FieldValue {
                    value: a.value.clone(),
                    confidence: a.confidence,
                },
            })
        })
        .collect()
}

/// What a reviewer's `decision` on `task` leads to at `now`, before anything is written:
/// another tenant's reviewer gets `Business.ReviewNotFound` (the error); a decided or expired
/// task, or a pending one past its deadline, is a [`Refusal`]; otherwise the decided task,
/// which the store then records with [`ReviewStore::decide`](crate::ports::ReviewStore::decide)
/// (where a concurrent decision can
/// still win).
pub fn decide(
    task: &ReviewTask,
    decision: ReviewDecision,
    now: OffsetDateTime,
) -> Result<Result<ReviewTask, Refusal>, Error> {
    authorize(&decision.reviewer, task)?;
    if task.status == ReviewStatus::Pending && now > parse_time("deadline", &task.deadline)? {
        return Ok(Err(Refusal::Expired(task.clone())));
    }
    apply_decision(task, decision)
}

/// The store's rule for recording `decision` on `task` as recorded (the DynamoDB condition is
/// `#status = :pending AND #tenant = :tenant`): a pending task of the reviewer's tenant becomes
/// decided; a decided one is [`Refusal::AlreadyDecided`], an expired one [`Refusal::Expired`];
/// another tenant's is `Business.ReviewNotFound`. The very same decision repeated (its
/// acknowledgement was lost and the write is retried; `decidedAt` makes a decision unique to
/// one request) is acknowledged with the task as recorded, so that the retrying winner still
/// sends its callback. No clock: the deadline is [`decide`]'s.
pub fn apply_decision(
    task: &ReviewTask,
    decision: ReviewDecision,
) -> Result<Result<ReviewTask, Refusal>, Error> {
    authorize(&decision.reviewer, task)?;
    Ok(match task.status {
        ReviewStatus::Pending => {
            let mut decided = task.clone();
            decided.status = ReviewStatus::Decided;
            decided.decision = Some(decision);
            Ok(decided)
        }
        ReviewStatus::Decided if task.decision.as_ref() == Some(&decision) => Ok(task.clone()),
        ReviewStatus::Decided => Err(Refusal::AlreadyDecided(task.clone())),
        ReviewStatus::Expired => Err(Refusal::Expired(task.clone())),
    })
}

/// What an open of `new` finds when `existing` is recorded under the same task id: a pending
/// task is [`Opened::Reopened`] with the new deadline (the store also replaces the token); a
/// decided or expired one is [`Opened::Closed`]. A task of another run or tenant under the same
/// id is a corrupt record: `Fatal.Internal`, nothing written.
pub fn reopen(existing: &ReviewTask, new: &OpenTask) -> Result<Opened, Error> {
    if existing.run_id != new.task.run_id || existing.tenant != new.task.tenant {
        return Err(Error::Internal(format!(
            "review task {} is recorded for another run or tenant",
            existing.task_id
        )));
    }
    Ok(match existing.status {
        ReviewStatus::Pending => {
            let mut task = existing.clone();
            task.deadline = new.task.deadline.clone();
            Opened::Reopened(task)
        }
        ReviewStatus::Decided | ReviewStatus::Expired => Opened::Closed(existing.clone()),
    })
}

/// The rule for expiring `task` (the DynamoDB condition is `#status = :pending OR (#status =
/// :decided AND attribute_not_exists(#deliveredAt))`): pending, or decided without delivery →
/// expired with `expiry` (a decision is kept); decided and delivered →
/// [`ExpireOutcome::Delivered`]; expired → [`ExpireOutcome::AlreadyExpired`], except that the
/// very same expiry repeated (a lost acknowledgement) is acknowledged as
/// [`ExpireOutcome::Expired`].
pub fn expire(task: &ReviewTask, expiry: &Expiry) -> ExpireOutcome {
    match (task.status, &task.delivered_at) {
        (ReviewStatus::Expired, _) if task.expiry.as_ref() == Some(expiry) => {
            ExpireOutcome::Expired(task.clone())
        }
        (ReviewStatus::Expired, _) => ExpireOutcome::AlreadyExpired(task.clone()),
        (ReviewStatus::Decided, Some(_)) => ExpireOutcome::Delivered(task.clone()),
        (ReviewStatus::Pending, _) | (ReviewStatus::Decided, None) => {
            let mut expired = task.clone();
            expired.status = ReviewStatus::Expired;
            expired.expiry = Some(expiry.clone());
            ExpireOutcome::Expired(expired)
        }
    }
}

/// The rule for recording delivery at `at` (the DynamoDB condition is `#status = :decided`): a
/// decided task gets `deliveredAt` (a repeat keeps the first time); a pending one is a bug
/// (`Fatal.Internal`: nothing was decided to deliver); an expired one means Step Functions
/// acknowledged a decision the record gave up on: `Conflict.ReviewExpired`, for an operator.
pub fn deliver(task: &ReviewTask, at: &str) -> Result<ReviewTask, Error> {
    match task.status {
        ReviewStatus::Decided => {
            let mut delivered = task.clone();
            delivered.delivered_at.get_or_insert_with(|| at.to_string());
            Ok(delivered)
        }
        ReviewStatus::Pending => Err(Error::Internal(format!(
            "review task {} has no decision to deliver",
            task.task_id
        ))),
        ReviewStatus::Expired => Err(Error::ReviewExpired(format!(
            "review task {} is expired, but Step Functions acknowledged its decision",
            task.task_id
        ))),
    }
}

/// Parses the reviewer's corrections: known field names, trimmed well-formed values.
fn check_corrections(
    corrections: &BTreeMap<String, String>,
    config: &PipelineConfig,
) -> Result<BTreeMap<FieldName, String>, Error> {
    let mut checked = BTreeMap::new();
    for (name, value) in corrections {
        let field = FieldName::ALL
            .into_iter()
            .find(|f| f.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<_> = FieldName::ALL.iter().map(|f| f.as_str()).collect();
                Error::BadInput(format!(
                    "cannot correct unknown field {name:?}; fields are {}",
                    known.join(", ")
                ))
            })?;
        let value = value.trim();
        check_value(field, value, config)?;
        checked.insert(field, value.to_string());
    }
    Ok(checked)
}

/// The day validation is run at to check a value's form; range checks, which depend on it,
/// are ignored.
const FORM_CHECK_DAY: time::Date = time::macros::date!(2000 - 01 - 01);

fn check_value(field: FieldName, value: &str, config: &PipelineConfig) -> Result<(), Error> {
    let expected = match field {
        FieldName::Issuer => "a company name (2 or more letters, at most 200 characters)",
        FieldName::InvoiceNumber => "an invoice number (1 to 64 characters, no spaces)",
        FieldName::InvoiceDate => "an ISO date yyyy-mm-dd",
        FieldName::TotalAmount => "a decimal amount with two decimals, e.g. 1250.00",
        FieldName::Currency => "a three-letter ISO 4217 code the config knows",
    };
    let bad = || {
        Error::BadInput(format!(
            "correction of {field} must be {expected}; the value given is not"
        ))
    };
    if value.is_empty() || value.chars().any(char::is_control) {
        return Err(bad());
    }
    // One definition of well-formed: validation's. A probe extraction holding only this value
    // is validated, and only a `bad_format` reason on this field counts.
    let mut probe = Extraction::default();
    probe.fields.insert(
        field,
        Field {
            value: value.to_string(),
            confidence: 1.0,
            page: 1,
            line: 0,
        },
    );
    let report = validate::validate(&probe, &config.validation, FORM_CHECK_DAY);
    let malformed = match &report.decision {
        Decision::AutoApprove => false,
        Decision::NeedsReview { reasons } | Decision::Invalid { reasons } => reasons
            .iter()
            .any(|r| r.field == Some(field) && r.code == BAD_FORMAT),
    };
    // Any code the config recognises, not only the allowed ones: a recognised but disallowed
    // currency is exactly what a reviewer may approve.
    let unknown_currency = field == FieldName::Currency
        && !config
            .extraction
            .currency_codes
            .iter()
            .chain(&config.validation.allowed_currencies)
            .any(|c| c == value);
    if malformed || unknown_currency {
        return Err(bad());
    }
    Ok(())
}

/// `fields` with `corrections` set by `reviewer` (confidence 1.0).
fn overlay(
    fields: &BTreeMap<FieldName, ReviewField>,
    corrections: &BTreeMap<FieldName, String>,
    reviewer: &Reviewer,
) -> BTreeMap<FieldName, ReviewField> {
    let mut out = fields.clone();
    for (name, value) in corrections {
        out.insert(
            *name,
            ReviewField {
                value: value.clone(),
                confidence: 1.0,
                source: FieldSource::Reviewer {
                    id: reviewer.id.clone(),
                },
            },
        );
    }
    out
}

/// Trimmed free text of at most [`MAX_TEXT_CHARS`].
fn text(what: &str, s: &str) -> Result<String, Error> {
    let s = s.trim();
    if s.chars().count() > MAX_TEXT_CHARS {
        return Err(Error::BadInput(format!(
            "{what} is longer than {MAX_TEXT_CHARS} characters"
        )));
    }
    Ok(s.to_string())
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

fn parse_time(what: &str, s: &str) -> Result<OffsetDateTime, Error> {
    OffsetDateTime::parse(s, &Rfc3339)
        .map_err(|_| Error::Internal(format!("review {what} {s:?} is not RFC 3339")))
}

#[cfg(test)]
mod tests;
