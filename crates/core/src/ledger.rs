//! The operation ledger: one record per [`OperationId`], claimed and moved on by conditional
//! writes only, so that retries, duplicate deliveries and late holders cannot repeat or overwrite
//! an effect.
//!
//! The model follows Powertools' DynamoDB idempotency layer (a claim is a conditional write that
//! succeeds on a missing or expired record; a refusal carries the old item, so no second read is
//! needed) and goes further where a pipeline needs it:
//!
//! - a **fence** counts claims; every later write is conditional on the writer's fence, so a
//!   holder whose lease was taken over cannot land a late write ([`Error::FencedOut`]);
//! - **accepted**: a provider holds the work (its job id is recorded), so a takeover reconciles
//!   that job instead of starting another;
//! - **failed** records the error's taxonomy name and replays it; **unresolved** names an owner
//!   and a next action and stops every automatic attempt ([`Error::Unresolved`]); **resolved**
//!   records that owner's decision ([`Write::Resolve`], `docket ops resolve`): who, and why;
//! - **retention** is explicit: a record past `expires_at` is never silently reused, even before
//!   DynamoDB's TTL deletes it ([`Error::RetentionExpired`]); Powertools instead overwrites it.
//!
//! [`decide_claim`] and [`decide_write`] are the whole decision; the in-memory ledger applies them
//! under a lock, the DynamoDB one expresses them as condition expressions and feeds refused items
//! (returned with the refusal) back into them to name the outcome.

use serde::{Deserialize, Serialize};

use crate::error::{ErrorKind, Family};
use crate::ids::OperationId;
use crate::Error;

/// Where an operation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LedgerStatus {
    /// Claimed; the holder is working and holds a lease.
    InProgress,
    /// A provider holds the work (its job id is recorded); the holder still holds a lease.
    Accepted,
    /// Done; the result pointer and hash are recorded.
    Completed,
    /// Ended with a named (non-transient) error, replayed to every later claim.
    Failed,
    /// The outcome could not be established; an owner must decide.
    Unresolved,
    /// An operator decided an unresolved operation (who and why are recorded); no automatic
    /// attempt follows.
    Resolved,
}

impl LedgerStatus {
    /// The name stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            LedgerStatus::InProgress => "in_progress",
            LedgerStatus::Accepted => "accepted",
            LedgerStatus::Completed => "completed",
            LedgerStatus::Failed => "failed",
            LedgerStatus::Unresolved => "unresolved",
            LedgerStatus::Resolved => "resolved",
        }
    }

    /// The status named `s` (as stored).
    pub fn parse(s: &str) -> Result<Self, Error> {
        [
            LedgerStatus::InProgress,
            LedgerStatus::Accepted,
            LedgerStatus::Completed,
            LedgerStatus::Failed,
            LedgerStatus::Unresolved,
            LedgerStatus::Resolved,
        ]
        .into_iter()
        .find(|status| status.as_str() == s)
        .ok_or_else(|| Error::Internal(format!("unknown ledger status {s:?}")))
    }

    /// Whether a holder may still be working (the only statuses a lease applies to).
    pub fn is_held(self) -> bool {
        matches!(self, LedgerStatus::InProgress | LedgerStatus::Accepted)
    }
}

/// One entry of an operation's history: a claim, or a write by the holder of `fence`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    /// When (unix seconds).
    pub at: i64,
    /// The fence of the claim this entry belongs to.
    pub fence: u64,
    /// What happened (ids and names only, never document content).
    pub note: String,
}

/// The ledger record of one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationRecord {
    /// The operation (the table key).
    pub operation_id: OperationId,
    /// The parameters' fingerprint at the first claim; another one is a conflict.
    pub fingerprint: String,
    /// Where it stands.
    pub status: LedgerStatus,
    /// Until when (unix seconds, inclusive) the holder's claim is live.
    pub lease_expires_at: i64,
    /// The lease length of the claim, used again when the holder extends it
    /// ([`Ledger::accept`](crate::ports::Ledger::accept)).
    pub lease_seconds: i64,
    /// The number of claims so far: the current holder's fence.
    pub fence: u64,
    /// The provider's job id once a provider holds the work.
    pub provider_job_id: Option<String>,
    /// Every claim and write, oldest first.
    pub attempts: Vec<Attempt>,
    /// Where the result is (`s3://…`), once completed.
    pub result_pointer: Option<String>,
    /// The result's hash, once completed.
    pub result_hash: Option<String>,
    /// The taxonomy name of the error it failed with, as stored (read back with
    /// [`ErrorKind::from_name`]; an unknown name is a corrupt record, reported when replayed).
    pub error: Option<String>,
    /// Who must decide an unresolved operation.
    pub owner: Option<String>,
    /// What that owner should do next.
    pub next_action: Option<String>,
    /// The operator who resolved it (the id of their verified operator role session).
    pub resolved_by: Option<String>,
    /// Their note: what they found and decided.
    pub resolution: Option<String>,
    /// The first claim (unix seconds).
    pub created_at: i64,
    /// End of retention (unix seconds; DynamoDB's TTL attribute). After it, a claim is refused.
    pub expires_at: i64,
}

/// What a successful claim grants.
#[derive(Debug, Clone, PartialEq)]
pub enum Claimed {
    /// No record existed: the caller holds the operation with this fence.
    Fresh {
        /// The caller's fence (1).
        fence: u64,
    },
    /// The previous holder's lease expired: the caller holds the operation with a fence one
    /// higher. If `previous` is [`LedgerStatus::Accepted`] (or any status with a provider job
    /// id), a provider may hold the work: reconcile that job before any new attempt.
    TakenOver {
        /// The caller's fence (previous + 1).
        fence: u64,
        /// The record as the previous holder left it.
        previous: OperationRecord,
    },
    /// Completed before: return its recorded result, repeat nothing.
    AlreadyDone(OperationRecord),
}

/// Lease and retention lengths for a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseRules {
    /// How long a claim is live without progress (seconds); after it, another caller takes over.
    pub lease_seconds: i64,
    /// How long the record is kept (seconds from the claim); becomes the TTL attribute.
    pub retention_seconds: i64,
}

/// The error recorded as `name` by [`Write::Fail`], with `detail`. An unknown name is a corrupt
/// record: [`Error::Internal`].
pub(crate) fn recorded_error(name: &str, detail: String) -> Error {
    match ErrorKind::from_name(name) {
        Some(kind) => kind.with_detail(detail),
        None => Error::Internal(format!("unknown recorded error {name:?}: {detail}")),
    }
}

/// What a claim of `op` with `fingerprint` at `now` leads to, given its current record. The
/// order of the checks is the contract:
///
/// 1. no record → [`Claimed::Fresh`] with fence 1;
/// 2. past retention (`now > expires_at`) → [`Error::RetentionExpired`], whatever it holds;
/// 3. another fingerprint → [`Error::ParametersChanged`] (nothing is overwritten);
/// 4. completed → [`Claimed::AlreadyDone`]; failed → its recorded error; unresolved →
///    [`Error::Unresolved`]; resolved → [`Error::AlreadyDecided`] (an operator closed it);
/// 5. in progress or accepted with a live lease (`lease_expires_at >= now`) →
///    [`Error::InProgress`]; with an expired one → [`Claimed::TakenOver`] with fence + 1.
///
/// A claim writes only in cases 1 and 5-expired; the DynamoDB condition is exactly those.
pub fn decide_claim(
    existing: Option<&OperationRecord>,
    op: &OperationId,
    fingerprint: &str,
    now: i64,
) -> Result<Claimed, Error> {
    let Some(rec) = existing else {
        return Ok(Claimed::Fresh { fence: 1 });
    };
    if now > rec.expires_at {
        return Err(Error::RetentionExpired(format!(
            "operation {op}: record retained until {}, now {now}; re-running it is an operator's decision",
            rec.expires_at
        )));
    }
    if rec.fingerprint != fingerprint {
        return Err(Error::ParametersChanged(format!(
            "{op}: recorded {}, requested {fingerprint}",
            rec.fingerprint
        )));
    }
    match rec.status {
        LedgerStatus::Completed => Ok(Claimed::AlreadyDone(rec.clone())),
        LedgerStatus::Failed => {
            let name = rec.error.as_deref().unwrap_or(ErrorKind::Internal.name());
            Err(recorded_error(
                name,
                format!("operation {op} failed earlier with {name}"),
            ))
        }
        LedgerStatus::Unresolved => Err(Error::Unresolved(format!(
            "operation {op} is unresolved; owner {}, next action: {}",
            rec.owner.as_deref().unwrap_or("?"),
            rec.next_action.as_deref().unwrap_or("?")
        ))),
        LedgerStatus::Resolved => Err(Error::AlreadyDecided(format!(
            "operation {op} was resolved by operator {}; no automatic attempt follows",
            rec.resolved_by.as_deref().unwrap_or("?")
        ))),
        LedgerStatus::InProgress | LedgerStatus::Accepted if rec.lease_expires_at >= now => {
            Err(Error::InProgress(format!(
                "operation {op} is {} under fence {} until {}",
                rec.status.as_str(),
                rec.fence,
                rec.lease_expires_at
            )))
        }
        LedgerStatus::InProgress | LedgerStatus::Accepted => Ok(Claimed::TakenOver {
            fence: rec.fence + 1,
            previous: rec.clone(),
        }),
    }
}

/// The note of the attempt a claim appends. It is the same for a fresh claim and a takeover
/// (the DynamoDB claim is one write that cannot know which it is); the fence tells them apart.
pub const CLAIM_NOTE: &str = "claimed";

/// The record after a successful claim with `fence` (`previous` is `None` for a fresh one): the
/// history, creation time and provider job id of a taken-over record are kept.
pub fn claimed_record(
    previous: Option<&OperationRecord>,
    op: &OperationId,
    fingerprint: &str,
    fence: u64,
    now: i64,
    rules: &LeaseRules,
) -> OperationRecord {
    let attempt = Attempt {
        at: now,
        fence,
        note: CLAIM_NOTE.to_string(),
    };
    let mut rec = previous.cloned().unwrap_or_else(|| OperationRecord {
        operation_id: op.clone(),
        fingerprint: fingerprint.to_string(),
        status: LedgerStatus::InProgress,
        lease_expires_at: 0,
        lease_seconds: 0,
        fence: 0,
        provider_job_id: None,
        attempts: Vec::new(),
        result_pointer: None,
        result_hash: None,
        error: None,
        owner: None,
        next_action: None,
        resolved_by: None,
        resolution: None,
        created_at: now,
        expires_at: 0,
    });
    rec.status = LedgerStatus::InProgress;
    rec.fence = fence;
    rec.lease_seconds = rules.lease_seconds;
    rec.lease_expires_at = now + rules.lease_seconds;
    rec.expires_at = now + rules.retention_seconds;
    rec.attempts.push(attempt);
    rec
}

/// A write by the holder of a fence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// In progress → accepted.
    Accept {
        /// The provider's job id.
        job_id: String,
    },
    /// In progress → in progress, lease given up: the holder asked the provider and could not
    /// learn whether it accepted the work (a lost answer). The next claim takes over at once
    /// and asks again with the same idempotency token; [`ambiguous_attempts`] counts these.
    Ambiguous,
    /// In progress → in progress, lease given up: the holder asked the provider nothing (its
    /// turn under the provider's quotas did not come, `Transient.QuotaFull`). The next claim
    /// takes over at once; nothing is counted against the operation.
    Yield,
    /// In progress or accepted → completed.
    Complete {
        /// Where the result is.
        result_pointer: String,
        /// The result's hash.
        result_hash: String,
    },
    /// In progress or accepted → failed.
    Fail {
        /// What it failed with (recorded by its name).
        error: ErrorKind,
    },
    /// In progress or accepted → unresolved.
    MarkUnresolved {
        /// Who decides.
        owner: String,
        /// What they should do.
        next_action: String,
    },
    /// Unresolved → resolved: an operator's decision (`steps::resolve`). Not a holder's write:
    /// the operator writes with the fence they read, so that no claim can slip in between.
    Resolve {
        /// The operator (their verified id).
        by: String,
        /// What they found and decided.
        note: String,
    },
}

/// The note of the attempt a [`Write::Ambiguous`] appends.
pub const AMBIGUOUS_NOTE: &str = "provider outcome unknown; lease released";

/// The note of the attempt a [`Write::Yield`] appends.
pub const YIELD_NOTE: &str = "provider not asked (quota full); lease released";

/// How many times holders of `rec` could not establish the provider's outcome.
pub fn ambiguous_attempts(rec: &OperationRecord) -> usize {
    rec.attempts
        .iter()
        .filter(|a| a.note == AMBIGUOUS_NOTE)
        .count()
}

impl Write {
    /// The statuses the write moves from.
    pub fn from_statuses(&self) -> &'static [LedgerStatus] {
        match self {
            Write::Accept { .. } | Write::Ambiguous | Write::Yield => &[LedgerStatus::InProgress],
            Write::Resolve { .. } => &[LedgerStatus::Unresolved],
            _ => &[LedgerStatus::InProgress, LedgerStatus::Accepted],
        }
    }

    /// The status the write moves to.
    pub fn to_status(&self) -> LedgerStatus {
        match self {
            Write::Accept { .. } => LedgerStatus::Accepted,
            Write::Ambiguous | Write::Yield => LedgerStatus::InProgress,
            Write::Complete { .. } => LedgerStatus::Completed,
            Write::Fail { .. } => LedgerStatus::Failed,
            Write::MarkUnresolved { .. } => LedgerStatus::Unresolved,
            Write::Resolve { .. } => LedgerStatus::Resolved,
        }
    }

    /// The note of the attempt it appends.
    pub fn note(&self) -> String {
        match self {
            Write::Accept { job_id } => format!("accepted by provider as job {job_id}"),
            Write::Ambiguous => AMBIGUOUS_NOTE.to_string(),
            Write::Yield => YIELD_NOTE.to_string(),
            Write::Complete { result_hash, .. } => format!("completed, result hash {result_hash}"),
            Write::Fail { error } => format!("failed with {error}"),
            Write::MarkUnresolved { owner, .. } => format!("unresolved, owner {owner}"),
            Write::Resolve { by, .. } => format!("resolved by operator {by}"),
        }
    }

    /// Whether `rec` already shows this very write by the same fence (its acknowledgement was
    /// lost and the holder repeats it): then the repeat succeeds without writing again.
    fn already_in(&self, rec: &OperationRecord) -> bool {
        rec.status == self.to_status()
            && match self {
                Write::Accept { job_id } => rec.provider_job_id.as_ref() == Some(job_id),
                // Never "already applied": their status is the one they move from.
                Write::Ambiguous | Write::Yield => false,
                Write::Complete {
                    result_pointer,
                    result_hash,
                } => {
                    rec.result_pointer.as_ref() == Some(result_pointer)
                        && rec.result_hash.as_ref() == Some(result_hash)
                }
                Write::Fail { error } => rec.error.as_deref() == Some(error.name()),
                Write::MarkUnresolved { owner, next_action } => {
                    rec.owner.as_ref() == Some(owner)
                        && rec.next_action.as_ref() == Some(next_action)
                }
                Write::Resolve { by, note } => {
                    rec.resolved_by.as_ref() == Some(by) && rec.resolution.as_ref() == Some(note)
                }
            }
    }
}

/// Whether a write must be applied or was applied already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteDecision {
    /// The writer holds the operation in a status the write moves from: write.
    Apply,
    /// The same write by the same fence is already recorded: succeed, write nothing.
    AlreadyApplied,
}

/// What a write by the holder of `fence` leads to, given the current record. The write applies
/// only when the record's fence is the writer's and its status one the write moves from (the
/// DynamoDB condition); the same write repeated by the same holder is acknowledged; anything else
/// is [`Error::FencedOut`] (a newer claim exists, the operation moved on, or there is no record).
/// A `Transient.*` failure name is refused as a bug ([`Error::Internal`]).
pub fn decide_write(
    existing: Option<&OperationRecord>,
    op: &OperationId,
    fence: u64,
    write: &Write,
) -> Result<WriteDecision, Error> {
    check_write(op, write)?;
    let Some(rec) = existing else {
        return Err(Error::FencedOut(format!("operation {op} has no record")));
    };
    if rec.fence != fence {
        return Err(Error::FencedOut(format!(
            "operation {op}: fence {fence} was taken over by fence {}",
            rec.fence
        )));
    }
    if write.from_statuses().contains(&rec.status) {
        return Ok(WriteDecision::Apply);
    }
    if write.already_in(rec) {
        return Ok(WriteDecision::AlreadyApplied);
    }
    Err(Error::FencedOut(format!(
        "operation {op}: fence {fence} cannot move it from {} to {}",
        rec.status.as_str(),
        write.to_status().as_str()
    )))
}

/// Refuses a write that no record can make valid: a `Transient.*` failure name (a transient
/// error is not an outcome; the lease runs out and a retry takes over).
pub fn check_write(op: &OperationId, write: &Write) -> Result<(), Error> {
    match write {
        Write::Fail { error } if error.family() == Family::Transient => Err(Error::Internal(
            format!("operation {op}: {error} is transient, not an outcome to record"),
        )),
        _ => Ok(()),
    }
}

/// Applies a write [`decide_write`] allowed: the new status and fields, one attempt appended.
pub fn apply_write(rec: &mut OperationRecord, fence: u64, write: &Write, now: i64) {
    rec.status = write.to_status();
    match write {
        Write::Accept { job_id } => {
            rec.provider_job_id = Some(job_id.clone());
            rec.lease_expires_at = now + rec.lease_seconds;
        }
        Write::Ambiguous | Write::Yield => rec.lease_expires_at = now - 1,
        Write::Complete {
            result_pointer,
            result_hash,
        } => {
            rec.result_pointer = Some(result_pointer.clone());
            rec.result_hash = Some(result_hash.clone());
        }
        Write::Fail { error } => rec.error = Some(error.name().to_string()),
        Write::MarkUnresolved { owner, next_action } => {
            rec.owner = Some(owner.clone());
            rec.next_action = Some(next_action.clone());
        }
        Write::Resolve { by, note } => {
            rec.resolved_by = Some(by.clone());
            rec.resolution = Some(note.clone());
        }
    }
    rec.attempts.push(Attempt {
        at: now,
        fence,
        note: write.note(),
    });
}

#[cfg(test)]
mod tests;
