//! The per-run compensation journal: one entry per effect with its evidence, ids and
//! compensation status, and the pure transitions between them. Each transition refuses what
//! must never happen (a confirmed effect going back to uncertain, a second confirmation with
//! other ids, compensating an effect that did not happen) and answers `None` when the journal
//! already shows it (a repeat after a lost answer writes nothing).
//!
//! Every write of a journal is conditional on its version: [`Journal::next`] returns the journal
//! with `version + 1`, and the adapter writes it with `ConditionExpression: version = :v`
//! (`:v` = the new version − 1; `attribute_not_exists(runId)` for version 1). A writer that
//! loses the race re-reads and applies its transition again.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::compensate::ATTEMPT_LEASE_SECONDS;
use super::effect::{Effect, EffectIds, Evidence};
use super::status::{CompensationStatus, SagaEnd};
use crate::error::{ErrorKind, Family};
use crate::ids::{DocumentId, RunId};
use crate::Error;

/// One effect's line in the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalEntry {
    /// The effect.
    pub effect: Effect,
    /// Whether it happened.
    pub evidence: Evidence,
    /// The ids known of it.
    pub ids: EffectIds,
    /// Its compensation.
    pub compensation: CompensationStatus,
    /// Compensation attempts so far.
    pub attempts: u32,
    /// When the attempt in flight was claimed; cleared when it ends (committed, not required or
    /// failed). While it is set, and for [`ATTEMPT_LEASE_SECONDS`] after it, no other caller
    /// makes an attempt: the holder is still acting, or ran out of time by then.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::serde::rfc3339::option"
    )]
    pub attempt_since: Option<OffsetDateTime>,
    /// The taxonomy name of the last compensation failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Who owns a failed compensation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Why a compensation was not required (e.g. superseded by a newer run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The journal of one run's saga.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Journal {
    /// The run (the table key).
    pub run_id: RunId,
    /// Its document.
    pub document_id: DocumentId,
    /// Writes so far; the next write is conditional on it (see the module docs).
    pub version: u64,
    /// One entry per effect, in [`Effect::ALL`] order.
    pub entries: Vec<JournalEntry>,
    /// Why compensation began (the first reason stands); `None` while the saga runs forward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensation_reason: Option<String>,
    /// How the compensation ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<SagaEnd>,
}

/// Whether a tried effect happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It happened, with these ids.
    Happened(EffectIds),
    /// It did not (refused, or a look-up found nothing).
    DidNotHappen,
}

/// A change of the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// Before an effect: not-attempted → uncertain, with the ids known beforehand.
    Claim(Effect, EffectIds),
    /// After an effect or a look-up: uncertain → confirmed or not-attempted.
    Settle(Effect, Outcome),
    /// The consumer refused the effect (the error's name): uncertain or not-attempted →
    /// not-attempted, the refusal noted. A repeat of the same refusal changes nothing.
    Refused(Effect, String),
    /// Compensation begins: what happened or may have happened becomes `pending`.
    BeginCompensation(String),
    /// Before a compensation: pending/attempted → attempted, one more attempt, in flight from
    /// `at`. It carries the attempts its caller saw: if another caller claimed an attempt since,
    /// or an attempt is in flight (claimed less than [`ATTEMPT_LEASE_SECONDS`] before `at` and not
    /// ended), it is refused (`Transient.InProgress`), so two compensations never both act.
    Attempt {
        /// The effect to compensate.
        effect: Effect,
        /// The attempts its caller saw.
        seen: u32,
        /// Now.
        at: OffsetDateTime,
    },
    /// The compensation was applied: attempted → committed.
    Committed(Effect),
    /// Nothing to undo after all (the reason is noted): pending/attempted → not-required.
    NotRequired(Effect, String),
    /// The attempt failed with `error`. A `Transient.*` or `Ambiguous.*` failure stays
    /// `attempted` below `max_attempts`; at the bound, or for any other failure,
    /// `failed-manual-review` with `owner`.
    Failed {
        /// The effect whose compensation failed.
        effect: Effect,
        /// What it failed with.
        error: ErrorKind,
        /// The bound on attempts.
        max_attempts: u32,
        /// Who owns it when it fails for good.
        owner: String,
    },
    /// Records the end once no compensation is pending or attempted (or one failed for good).
    Finish,
}

fn refuse(journal: &Journal, effect: Effect, what: &str) -> Error {
    Error::Internal(format!(
        "saga journal of {}: {effect} {what}",
        journal.run_id
    ))
}

impl Journal {
    /// The journal of a run that has made no effect.
    pub fn new(run_id: &RunId) -> Journal {
        let entries = Effect::ALL
            .into_iter()
            .map(|effect| JournalEntry {
                effect,
                evidence: Evidence::NotAttempted,
                ids: EffectIds::default(),
                compensation: CompensationStatus::NotRequired,
                attempts: 0,
                attempt_since: None,
                last_error: None,
                owner: None,
                note: None,
            })
            .collect();
        Journal {
            run_id: run_id.clone(),
            document_id: run_id.document_id(),
            version: 0,
            entries,
            compensation_reason: None,
            end: None,
        }
    }

    /// The entry of `effect`.
    pub fn entry(&self, effect: Effect) -> &JournalEntry {
        &self.entries[effect as usize]
    }

    /// The end the compensation has reached, if it has: a failed-manual-review entry ends it
    /// (earlier effects stay pending for the owner); otherwise every entry must be settled.
    pub fn reached_end(&self) -> Option<SagaEnd> {
        use CompensationStatus::*;
        let all = |s: CompensationStatus| self.entries.iter().any(|e| e.compensation == s);
        if all(FailedManualReview) {
            Some(SagaEnd::CompensationFailed)
        } else if all(Pending) || all(Attempted) {
            None
        } else if all(Committed) {
            Some(SagaEnd::Compensated)
        } else {
            Some(SagaEnd::NotRequired)
        }
    }

    /// The journal after `t` (version + 1), `None` if it already shows it, or the refusal.
    pub fn next(&self, t: &Transition) -> Result<Option<Journal>, Error> {
        use CompensationStatus as C;
        let mut next = self.clone();
        let begun = self.compensation_reason.is_some();
        match t {
            Transition::Claim(effect, ids) => {
                if begun {
                    return Err(Error::FencedOut(format!(
                        "run {} is being compensated; {effect} is not claimed",
                        self.run_id
                    )));
                }
                let e = &mut next.entries[*effect as usize];
                match e.evidence {
                    Evidence::Confirmed => {
                        return Err(refuse(self, *effect, "is confirmed; it never goes back"))
                    }
                    Evidence::NotAttempted | Evidence::Uncertain => {
                        e.evidence = Evidence::Uncertain;
                        e.ids = merge(self, *effect, &e.ids, ids)?;
                    }
                }
            }
            Transition::Settle(effect, outcome) => {
                let e = &mut next.entries[*effect as usize];
                match (e.evidence, outcome) {
                    (Evidence::NotAttempted, Outcome::Happened(_)) => {
                        return Err(refuse(self, *effect, "was never claimed"))
                    }
                    (Evidence::Confirmed, Outcome::DidNotHappen) => {
                        return Err(refuse(self, *effect, "is confirmed; it never goes back"))
                    }
                    (_, Outcome::Happened(ids)) => {
                        e.evidence = Evidence::Confirmed;
                        e.ids = merge(self, *effect, &e.ids, ids)?;
                    }
                    (_, Outcome::DidNotHappen) => {
                        e.evidence = Evidence::NotAttempted;
                        if e.compensation == C::Pending {
                            e.compensation = C::NotRequired;
                        }
                    }
                }
            }
            Transition::Refused(effect, error) => {
                let e = &mut next.entries[*effect as usize];
                if e.evidence == Evidence::Confirmed {
                    return Err(refuse(self, *effect, "is confirmed; it was not refused"));
                }
                e.evidence = Evidence::NotAttempted;
                e.note = Some(format!("refused: {error}"));
                if e.compensation == C::Pending {
                    e.compensation = C::NotRequired;
                }
            }
            Transition::BeginCompensation(reason) => {
                if begun {
                    return Ok(None);
                }
                next.compensation_reason = Some(reason.clone());
                for e in &mut next.entries {
                    if e.evidence != Evidence::NotAttempted {
                        e.compensation = C::Pending;
                    }
                }
            }
            Transition::Attempt { effect, seen, at } => {
                let e = &mut next.entries[*effect as usize];
                if !begun || e.evidence != Evidence::Confirmed {
                    let why = format!("is {} and cannot be compensated", e.evidence.name());
                    return Err(refuse(self, *effect, &why));
                }
                if !matches!(e.compensation, C::Pending | C::Attempted) {
                    let why = format!("compensation is {}", e.compensation.name());
                    return Err(refuse(self, *effect, &why));
                }
                if e.attempts != *seen {
                    return Err(Error::InProgress(format!(
                        "saga journal of {}: {effect} compensation attempt {} is another caller's",
                        self.run_id, e.attempts
                    )));
                }
                let lease = time::Duration::seconds(ATTEMPT_LEASE_SECONDS);
                if let Some(since) = e.attempt_since.filter(|since| *at < *since + lease) {
                    return Err(Error::InProgress(format!(
                        "saga journal of {}: {effect} compensation attempt {} is in flight since {since}",
                        self.run_id, e.attempts
                    )));
                }
                e.compensation = C::Attempted;
                e.attempts += 1;
                e.attempt_since = Some(*at);
            }
            Transition::Committed(effect) => {
                let e = &mut next.entries[*effect as usize];
                match e.compensation {
                    C::Committed => return Ok(None),
                    C::Attempted => {
                        e.compensation = C::Committed;
                        e.attempt_since = None;
                    }
                    other => {
                        let why = format!("compensation is {}, not attempted", other.name());
                        return Err(refuse(self, *effect, &why));
                    }
                }
            }
            Transition::NotRequired(effect, why) => {
                let e = &mut next.entries[*effect as usize];
                match e.compensation {
                    C::NotRequired => return Ok(None),
                    C::Pending | C::Attempted => {
                        e.compensation = C::NotRequired;
                        e.note = Some(why.clone());
                        e.attempt_since = None;
                    }
                    other => {
                        let why = format!("compensation is {}", other.name());
                        return Err(refuse(self, *effect, &why));
                    }
                }
            }
            Transition::Failed {
                effect,
                error,
                max_attempts,
                owner,
            } => {
                let e = &mut next.entries[*effect as usize];
                match e.compensation {
                    C::FailedManualReview => return Ok(None),
                    C::Attempted => {
                        e.last_error = Some(error.name().to_string());
                        e.attempt_since = None;
                        let retried =
                            matches!(error.family(), Family::Transient | Family::Ambiguous);
                        if !retried || e.attempts >= *max_attempts {
                            e.compensation = C::FailedManualReview;
                            e.owner = Some(owner.clone());
                        }
                    }
                    other => {
                        let why = format!("compensation is {}, not attempted", other.name());
                        return Err(refuse(self, *effect, &why));
                    }
                }
            }
            Transition::Finish => {
                if self.end.is_some() {
                    return Ok(None);
                }
                let end = self.reached_end().filter(|_| begun).ok_or_else(|| {
                    Error::Internal(format!(
                        "saga journal of {}: compensation has not ended",
                        self.run_id
                    ))
                })?;
                next.end = Some(end);
            }
        }
        if next == *self {
            return Ok(None);
        }
        next.version += 1;
        Ok(Some(next))
    }
}

impl Journal {
    /// The journal after each of `ts` in order, as ONE write (version + 1), or `None` if it
    /// already shows them all. For transitions committed in one transaction with the change they
    /// record (a promotion is claimed and confirmed in the transaction that makes it: no state
    /// in which it happened unrecorded).
    pub fn next_all(&self, ts: &[Transition]) -> Result<Option<Journal>, Error> {
        let mut now = self.clone();
        for t in ts {
            if let Some(next) = now.next(t)? {
                now = next;
            }
        }
        if now.version == self.version {
            return Ok(None);
        }
        now.version = self.version + 1;
        Ok(Some(now))
    }
}

/// `known` completed with `more`, or the refusal of two different outcomes of one effect.
fn merge(
    journal: &Journal,
    effect: Effect,
    known: &EffectIds,
    more: &EffectIds,
) -> Result<EffectIds, Error> {
    known.merged(more).ok_or_else(|| {
        Error::ParametersChanged(format!(
            "saga journal of {}: {effect} recorded {known:?}, now {more:?}",
            journal.run_id
        ))
    })
}
