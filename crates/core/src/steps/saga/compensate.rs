//! Compensation: reconcile what is uncertain, then undo what happened in reverse order
//! ([`crate::saga::plan`]), each compensation claimed in the journal before it is tried and
//! bounded in attempts. Used after a later effect failed and to retract an accepted document.
//! Each settlement is one transaction with its audit entry (and the outbox move or the restore
//! it records).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{commit, commit_or_busy, draft, relay, update, Context, RETRACTED};
use crate::ids::RunId;
use crate::model::step::Step;
use crate::ports::{
    Change, Downstream, HasDownstream, HasEvents, HasJournal, HasOutbox, HasStore, Outbox, Refused,
    RunStatus, SagaJournal, Store,
};
use crate::saga::{
    plan, Action, CompensationRules, CompensationStatus, Effect, EffectIds, Journal, Outcome,
    Planned, SagaEnd, Transition, Voided, MAX_COMPENSATION_ATTEMPTS,
};
use crate::Error;

/// How a compensation call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compensation {
    /// `compensated`, `compensation_failed` or `not-required`.
    pub end: SagaEnd,
    /// The saga had ended before this call: it did nothing (a repeated retract).
    pub already_ended: bool,
}

/// What one compensation did.
enum Done {
    /// Undone; the audit detail, and the store change that undoes it (committed with the
    /// journal and the entry).
    Committed(Value, Option<Box<Change>>),
    /// Nothing to undo after all (why).
    NotRequired(String),
}

/// Plans are made again after every step; this bounds the loop (look-ups and compensations of
/// three effects, with room to spare).
const MAX_STEPS: usize = 16;

/// Compensates `run`'s saga for `reason` (the first reason stands). Each pending compensation
/// is attempted once per call: a `Transient.*`/`Ambiguous.*` failure below the bound is
/// returned (the state machine's Retry calls again, with backoff); at the bound, or on any other
/// failure, the compensation is `failed-manual-review` with the config's unresolved owner and
/// the saga ends `compensation_failed`. A saga that ended answers its end and does nothing.
pub async fn compensate(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents + HasDownstream),
    ctx: &Context,
    run: &RunId,
    reason: &str,
) -> Result<Compensation, Error> {
    if let Some(end) = ports.journal().journal(run).await?.and_then(|j| j.end) {
        return Ok(Compensation {
            end,
            already_ended: true,
        });
    }
    let rules = CompensationRules {
        max_attempts: MAX_COMPENSATION_ATTEMPTS,
        owner: ctx.config.ledger.unresolved_owner.clone(),
    };
    let begin = Transition::BeginCompensation(reason.to_string());
    let mut journal = update(ports.journal(), run, &begin).await?;
    for _ in 0..MAX_STEPS {
        let Some(Planned { effect, action }) = plan(&journal)?.into_iter().next() else {
            break;
        };
        journal = if action.is_look_up() {
            let (outcome, outbox) = look_up(ports, &journal, effect, &action).await?;
            let settled = [Transition::Settle(effect, outcome.clone())];
            match outcome {
                // The effect happened after all: it goes into the chain as the forward step
                // would have recorded it, marked as reconciled.
                Outcome::Happened(_) => {
                    let op = effect.operation(run);
                    let audit = |j: &Journal| {
                        let ids = serde_json::to_value(&j.entry(effect).ids).expect("ids");
                        let detail = json!({"reconciled": true, "ids": ids});
                        Some(draft(ctx, run, &op, effect.name(), detail))
                    };
                    commit_or_busy(ports, ctx, run, &settled, outbox.as_slice(), audit).await?
                }
                Outcome::DidNotHappen => update(ports.journal(), run, &settled[0]).await?,
            }
        } else {
            undo(ports, ctx, &journal, effect, &action, &rules, reason).await?
        };
    }
    let op = Step::Compensate.operation(run);
    let audit = |j: &Journal| {
        let end = j.end.expect("finished");
        let detail = json!({"reason": j.compensation_reason});
        Some(draft(
            ctx,
            run,
            &op,
            &format!("saga.{}", end.name()),
            detail,
        ))
    };
    let journal = commit_or_busy(ports, ctx, run, &[Transition::Finish], &[], audit).await?;
    Ok(Compensation {
        end: journal.end.expect("finished"),
        already_ended: false,
    })
}

/// Compensates `run`'s saga for `reason` and records how the completed run ended, with its
/// audit entry. After a failure in the workflow (`reason` is the caught error's name: the
/// consumer refused the event, or its receipt did not come in time): `compensated`,
/// `compensation_failed` (an open obligation), or `failed` when nothing had to be undone; the
/// name is the run's error. After a retract ([`RETRACTED`] + the operator's text): `retracted`,
/// or `compensation_failed`; the run keeps no error. Safe to repeat: the saga answers its end,
/// and the run's status moves only from `completed`.
pub async fn compensate_run(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents + HasDownstream),
    ctx: &Context,
    run: &RunId,
    reason: &str,
) -> Result<Compensation, Error> {
    let done = compensate(ports, ctx, run, reason).await?;
    let retracted = reason.starts_with(RETRACTED);
    let to = match (done.end, retracted) {
        (SagaEnd::CompensationFailed, _) => RunStatus::CompensationFailed,
        (SagaEnd::Compensated, true) => RunStatus::Retracted,
        (SagaEnd::NotRequired, true) => return Ok(done),
        (SagaEnd::Compensated, false) => RunStatus::Compensated,
        (SagaEnd::NotRequired, false) => RunStatus::Failed,
    };
    let error = (!retracted).then(|| reason.to_string());
    let change = Change::SetRunStatus {
        run_id: run.clone(),
        from: RunStatus::Completed,
        to,
        outputs: Default::default(),
        error: error.clone(),
    };
    let op = Step::Compensate.operation(run);
    let action = format!("run.{}", to.as_str());
    let entry = draft(ctx, run, &op, &action, json!({"error": error}));
    let document = run.document_id();
    // Refused: the run is no longer `completed` (a repeat recorded it already).
    let _ = super::super::record(ports.store(), ctx, &document, vec![change], entry).await?;
    Ok(done)
}

/// Settles an uncertain effect by asking whoever holds its outcome, by its recorded ids; with
/// the outbox move a found publication needs recorded.
async fn look_up(
    ports: &(impl HasStore + HasOutbox + HasEvents + HasDownstream),
    journal: &Journal,
    effect: Effect,
    action: &Action,
) -> Result<(Outcome, Option<Change>), Error> {
    let ids = &journal.entry(effect).ids;
    let happened = |more: EffectIds| Outcome::Happened(more);
    Ok(match action {
        Action::LookUpPromotion => {
            let current = ports.store().document(&journal.document_id).await?;
            match current.is_some_and(|d| d.current_run_id == journal.run_id) {
                true => (happened(EffectIds::default()), None),
                false => (Outcome::DidNotHappen, None),
            }
        }
        // A persisted outbox record will be published (the relay is at-least-once): if the bus
        // does not have it yet, it is published now, under its id, and then compensated.
        Action::LookUpEvent { event_id } => match ports.outbox().record(event_id).await? {
            Some(record) => {
                let (entry, accepted) = relay(ports, &record.body, true).await?;
                let ids = EffectIds {
                    entry_id: Some(entry),
                    ..ids.clone()
                };
                (happened(ids), accepted)
            }
            None => (Outcome::DidNotHappen, None),
        },
        Action::LookUpReceipt { event_id } => match ports.downstream().fence(event_id).await? {
            Some(receipt) => {
                let ids = EffectIds {
                    receipt_id: Some(receipt),
                    ..ids.clone()
                };
                (happened(ids), None)
            }
            None => (Outcome::DidNotHappen, None),
        },
        _ => unreachable!("only look-ups are settled here"),
    })
}

/// One attempt of one compensation, claimed in the journal first; the journal after it.
async fn undo(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents + HasDownstream),
    ctx: &Context,
    journal: &Journal,
    effect: Effect,
    action: &Action,
    rules: &CompensationRules,
    reason: &str,
) -> Result<Journal, Error> {
    let run = &journal.run_id;
    let op = effect.compensation(run);
    let seen = journal.entry(effect).attempts;
    use CompensationStatus::{Attempted, Pending};
    let at = ctx.clock.now();
    let claim = Transition::Attempt { effect, seen, at };
    let attempt = match update(ports.journal(), run, &claim).await {
        Ok(attempt) => attempt,
        // A concurrent compensation of the same run settled this one since our plan was made
        // (committed, not required, or failed for good): plan again from what it wrote.
        Err(e) => match ports.journal().journal(run).await? {
            Some(now) if !matches!(now.entry(effect).compensation, Pending | Attempted) => {
                return Ok(now)
            }
            _ => return Err(e),
        },
    };
    let retry = attempt.entry(effect).attempts > 1;
    let done = match action {
        Action::Restore { previous } => Ok(restore(journal, previous.as_ref())),
        Action::Retract { event_id } => retract(ports, event_id, retry).await,
        Action::Void { receipt_id } => match ports.downstream().void(receipt_id, reason).await {
            Ok(Voided::Voided) => Ok(Done::Committed(json!({"receiptId": receipt_id}), None)),
            Ok(Voided::AlreadyVoided(why)) => Ok(Done::Committed(
                json!({"receiptId": receipt_id, "alreadyVoided": why}),
                None,
            )),
            Err(e) => Err(e),
        },
        look_up => unreachable!("{look_up:?} is not a compensation"),
    };
    let done = match done {
        Ok(Done::Committed(detail, change)) => {
            let change = change.map(|c| *c);
            let committed = [Transition::Committed(effect)];
            let entry = draft(ctx, run, &op, effect.compensation_name(), detail);
            let audit = |_: &Journal| Some(entry.clone());
            match commit(ports, ctx, run, &committed, change.as_slice(), audit).await? {
                Ok(journal) => return Ok(journal),
                // The current result moved since it was read: why, read back.
                Err(Refused { .. }) if matches!(change, Some(Change::Restore { .. })) => {
                    restore_refused(ports, journal).await
                }
                // Another relay moved the retraction's outbox record first: retried, reconciled.
                Err(Refused { .. }) => Err(Error::InProgress(format!(
                    "the outbox record of {effect}'s compensation of {run} moved"
                ))),
            }
        }
        other => other,
    };
    match done {
        Ok(Done::Committed(..)) => unreachable!("committed above"),
        Ok(Done::NotRequired(why)) => {
            let t = [Transition::NotRequired(effect, why.clone())];
            let detail = json!({"effect": effect.name(), "why": why});
            let entry = draft(ctx, run, &op, "compensation.not_required", detail);
            commit_or_busy(ports, ctx, run, &t, &[], |_| Some(entry.clone())).await
        }
        Err(e) => {
            let failed = [Transition::Failed {
                effect,
                error: e.kind(),
                max_attempts: rules.max_attempts,
                owner: rules.owner.clone(),
            }];
            // Only a failure for good is an audit entry (an open obligation with its owner).
            let audit = |j: &Journal| {
                let entry = j.entry(effect);
                (entry.compensation == CompensationStatus::FailedManualReview).then(|| {
                    let detail = json!({"effect": effect.name(), "error": e.name(),
                                        "attempts": entry.attempts, "owner": entry.owner});
                    draft(ctx, run, &op, "compensation.failed", detail)
                })
            };
            let journal = commit_or_busy(ports, ctx, run, &failed, &[], audit).await?;
            if journal.entry(effect).compensation != CompensationStatus::FailedManualReview {
                return Err(e);
            }
            Ok(journal)
        }
    }
}

/// The restore of `journal`'s promotion, as it stood when the journal was read: the change to
/// commit, conditional on the current result still being this run (a newer one is never
/// undone; the store refuses it if one was promoted since).
fn restore(journal: &Journal, previous: Option<&crate::saga::PreviousResult>) -> Done {
    let detail = json!({"restoredRunId": previous.map(|p| p.run_id.as_str())});
    let reason = journal.compensation_reason.as_deref().unwrap_or_default();
    let change = Change::Restore {
        document: journal.document_id.clone(),
        run: journal.run_id.clone(),
        previous: previous.cloned(),
        retracted: reason.starts_with(RETRACTED),
    };
    Done::Committed(detail, Some(Box::new(change)))
}

/// Why a restore was refused, read back: the document's current result is no longer this run.
/// If it is the previous one already, the restore is done; if another run is current, a newer
/// result is never undone.
async fn restore_refused(ports: &impl HasStore, journal: &Journal) -> Result<Done, Error> {
    let current = ports.store().document(&journal.document_id).await?;
    let previous = journal.entry(Effect::ResultPromoted).ids.previous.as_ref();
    match (current, previous) {
        (Some(c), _) if c.current_run_id == journal.run_id => Err(Error::InProgress(format!(
            "the restore of {} was refused while it is current",
            journal.run_id
        ))),
        (Some(c), Some(p)) if c.current_run_id == p.run_id => Err(Error::Internal(format!(
            "{} is current again but the restore of {} is not journaled",
            p.run_id, journal.run_id
        ))),
        (Some(c), _) => Ok(Done::NotRequired(format!(
            "run {} is current; a newer result is never undone",
            c.current_run_id
        ))),
        (None, _) => Err(Error::Internal(format!(
            "document {} has no current result; {} cannot be restored",
            journal.document_id, journal.run_id
        ))),
    }
}

/// Publishes `document.retracted` naming `event_id`, through the outbox under its own stable id.
async fn retract(
    ports: &(impl HasOutbox + HasEvents),
    event_id: &crate::saga::EventId,
    retry: bool,
) -> Result<Done, Error> {
    let original = ports
        .outbox()
        .record(event_id)
        .await?
        .ok_or_else(|| Error::Internal(format!("outbox has no event {event_id} to retract")))?;
    let retraction = original.body.retraction();
    let (entry, accepted) = relay(ports, &retraction, retry).await?;
    let detail = json!({"eventId": retraction.event_id, "retracts": event_id, "entryId": entry});
    Ok(Done::Committed(detail, accepted.map(Box::new)))
}
