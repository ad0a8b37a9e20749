//! Compensation: reconcile what is uncertain, then undo what happened in reverse order
//! ([`crate::saga::plan`]), each compensation claimed in the journal before it is tried and
//! bounded in attempts. Used after a later effect failed and to retract an accepted document.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{audit, relay, update, Context};
use crate::ids::{OperationId, RunId};
use crate::ports::{
    Downstream, HasDownstream, HasEvents, HasJournal, HasOutbox, HasPromotions, HasStore, Outbox,
    Promotions, Restored, SagaJournal, Store,
};
use crate::saga::effect::COMPENSATE_STEP;
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
    /// Undone; the audit detail.
    Committed(Value),
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
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents + HasDownstream + HasPromotions),
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
            let outcome = look_up(ports, &journal, effect, &action).await?;
            let found = matches!(outcome, Outcome::Happened(_));
            let journal =
                update(ports.journal(), run, &Transition::Settle(effect, outcome)).await?;
            if found {
                // The effect happened after all: it goes into the chain as the forward step
                // would have recorded it, marked as reconciled.
                let ids = serde_json::to_value(&journal.entry(effect).ids).expect("ids serialize");
                let detail = json!({"reconciled": true, "ids": ids});
                let op = effect.operation(run);
                audit(ports.store(), ctx, run, &op, effect.name(), detail).await?;
            }
            journal
        } else {
            undo(ports, ctx, &journal, effect, &action, &rules, reason).await?
        };
    }
    let journal = update(ports.journal(), run, &Transition::Finish).await?;
    let end = journal.end.expect("finished");
    let op = OperationId::new(run, COMPENSATE_STEP, None);
    let detail = json!({"reason": journal.compensation_reason});
    let action = format!("saga.{}", end.name());
    audit(ports.store(), ctx, run, &op, &action, detail).await?;
    Ok(Compensation {
        end,
        already_ended: false,
    })
}

/// Settles an uncertain effect by asking whoever holds its outcome, by its recorded ids.
async fn look_up(
    ports: &(impl HasStore + HasOutbox + HasEvents + HasDownstream),
    journal: &Journal,
    effect: Effect,
    action: &Action,
) -> Result<Outcome, Error> {
    let ids = &journal.entry(effect).ids;
    let happened = |more: EffectIds| Outcome::Happened(more);
    Ok(match action {
        Action::LookUpPromotion => {
            let current = ports.store().document(&journal.document_id).await?;
            match current.is_some_and(|d| d.current_run_id == journal.run_id) {
                true => happened(EffectIds::default()),
                false => Outcome::DidNotHappen,
            }
        }
        // A persisted outbox record will be published (the relay is at-least-once): if the bus
        // does not have it yet, it is published now, under its id, and then compensated.
        Action::LookUpEvent { event_id } => match ports.outbox().record(event_id).await? {
            Some(record) => happened(EffectIds {
                entry_id: Some(relay(ports, &record.body, true).await?),
                ..ids.clone()
            }),
            None => Outcome::DidNotHappen,
        },
        Action::LookUpReceipt { event_id } => match ports.downstream().fence(event_id).await? {
            Some(receipt) => happened(EffectIds {
                receipt_id: Some(receipt),
                ..ids.clone()
            }),
            None => Outcome::DidNotHappen,
        },
        _ => unreachable!("only look-ups are settled here"),
    })
}

/// One attempt of one compensation, claimed in the journal first; the journal after it.
async fn undo(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents + HasDownstream + HasPromotions),
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
    let attempt = update(ports.journal(), run, &Transition::Attempt(effect, seen)).await?;
    let retry = attempt.entry(effect).attempts > 1;
    let done = match action {
        Action::Restore { previous } => {
            let restored = ports.promotions();
            match restored
                .restore(&journal.document_id, run, previous.as_ref())
                .await
            {
                Ok(Restored::Superseded(newer)) => Ok(Done::NotRequired(format!(
                    "run {newer} is current; a newer result is never undone"
                ))),
                Ok(_) => Ok(Done::Committed(json!({
                    "restoredRunId": previous.as_ref().map(|p| p.run_id.as_str())
                }))),
                Err(e) => Err(e),
            }
        }
        Action::Retract { event_id } => retract(ports, event_id, retry).await,
        Action::Void { receipt_id } => match ports.downstream().void(receipt_id, reason).await {
            Ok(Voided::Voided) => Ok(Done::Committed(json!({"receiptId": receipt_id}))),
            Ok(Voided::AlreadyVoided(why)) => Ok(Done::Committed(
                json!({"receiptId": receipt_id, "alreadyVoided": why}),
            )),
            Err(e) => Err(e),
        },
        look_up => unreachable!("{look_up:?} is not a compensation"),
    };
    match done {
        Ok(Done::Committed(detail)) => {
            let journal = update(ports.journal(), run, &Transition::Committed(effect)).await?;
            let action = effect.compensation_name();
            audit(ports.store(), ctx, run, &op, action, detail).await?;
            Ok(journal)
        }
        Ok(Done::NotRequired(why)) => {
            let t = Transition::NotRequired(effect, why.clone());
            let journal = update(ports.journal(), run, &t).await?;
            let detail = json!({"effect": effect.name(), "why": why});
            audit(
                ports.store(),
                ctx,
                run,
                &op,
                "compensation.not_required",
                detail,
            )
            .await?;
            Ok(journal)
        }
        Err(e) => {
            let failed = Transition::Failed {
                effect,
                error: e.kind(),
                max_attempts: rules.max_attempts,
                owner: rules.owner.clone(),
            };
            let journal = update(ports.journal(), run, &failed).await?;
            let entry = journal.entry(effect);
            if entry.compensation != CompensationStatus::FailedManualReview {
                return Err(e);
            }
            let detail = json!({"effect": effect.name(), "error": e.name(),
                                "attempts": entry.attempts, "owner": entry.owner});
            audit(ports.store(), ctx, run, &op, "compensation.failed", detail).await?;
            Ok(journal)
        }
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
    let entry = relay(ports, &retraction, retry).await?;
    Ok(Done::Committed(json!({
        "eventId": retraction.event_id, "retracts": event_id, "entryId": entry
    })))
}
