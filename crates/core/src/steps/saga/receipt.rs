//! `downstream.recorded` as the deployed saga makes it: the consumer takes the run's
//! `document.accepted` event from the bus and answers on it (a receipt or a refusal); the
//! workflow waits for that answer in a Task with a token and a deadline.
//!
//! - [`await_receipt`] (the waiting Task's invocation) keeps the token and, unless the answer
//!   is already there, claims the effect `uncertain`: from its publication on, the consumer may
//!   apply the event at any moment, so a compensation that finds it uncertain asks the consumer
//!   (and fences the event) before it undoes anything.
//! - [`receipt`] (the answer, from a rule on the bus) settles the effect — confirmed with the
//!   receipt id and the outbox record `confirmed-delivered`, or refused — with its audit entry
//!   in one transaction, and then ends the wait.
//!
//! The token and the answer are kept side by side ([`ReceiptWaits`]); whichever comes second
//! finds the first and ends the wait, so an answer that arrives before the wait began is kept.
//! Ending it twice is harmless: Step Functions refuses the second callback.

use serde_json::json;

use super::{advance, commit_or_busy, draft, unless_confirmed, update, Context};
use crate::error::ErrorKind;
use crate::ids::RunId;
use crate::model::run::TaskToken;
use crate::ports::{
    HasCallback, HasJournal, HasOutbox, HasStore, HasWaits, Outbox, ReceiptWaits, SagaJournal,
    TaskCallback,
};
use crate::saga::sink::Answer;
use crate::saga::{
    Advance, Delivery, Effect, EffectIds, EventId, EventKind, Evidence, Journal, Outcome,
    Transition,
};
use crate::Error;

/// How a waiting Task's invocation left the wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Awaited {
    /// The run promoted nothing (a newer version was current): no event, nothing to wait for;
    /// the wait was ended at once.
    NothingPublished,
    /// The answer had come first: the wait was ended with it.
    Answered,
    /// The token is kept; the answer will end the wait (or the Task's deadline will).
    Waiting,
}

impl Awaited {
    /// The stable name (logged).
    pub fn name(self) -> &'static str {
        match self {
            Awaited::NothingPublished => "nothing-published",
            Awaited::Answered => "answered",
            Awaited::Waiting => "waiting",
        }
    }
}

/// The invocation of the Task that waits (with `token`) for the consumer's answer to `run`'s
/// accepted event. A run that promoted nothing ends the wait at once (`{"status":"stale"}`).
/// A run being compensated is `Conflict.FencedOut`.
pub async fn await_receipt(
    ports: &(impl HasJournal + HasWaits + HasCallback),
    run: &RunId,
    token: &TaskToken,
) -> Result<Awaited, Error> {
    let journal = ports.journal().journal(run).await?;
    let promoted = journal
        .as_ref()
        .is_some_and(|j| j.entry(Effect::ResultPromoted).evidence == Evidence::Confirmed);
    if !promoted {
        end_wait(ports.callback(), token, &json!({"status": "stale"})).await?;
        return Ok(Awaited::NothingPublished);
    }
    let event = EventId::new(run, EventKind::Accepted);
    if let Some(answer) = ports.waits().wait(&event, token).await? {
        answer_wait(ports.callback(), token, &answer).await?;
        return Ok(Awaited::Answered);
    }
    let effect = Effect::DownstreamRecorded;
    let unsettled = journal.is_some_and(|j| {
        let entry = j.entry(effect);
        entry.evidence == Evidence::NotAttempted && entry.note.is_none()
    });
    if unsettled {
        let ids = EffectIds {
            event_id: Some(event),
            ..EffectIds::default()
        };
        let claimed = update(ports.journal(), run, &Transition::Claim(effect, ids)).await;
        unless_confirmed(ports.journal(), run, effect, claimed).await?;
    }
    Ok(Awaited::Waiting)
}

/// The consumer's answer to one of this stack's events: for an accepted event, settles
/// `downstream.recorded` of its run (unless a compensation has begun: it asks the consumer
/// itself), then ends the wait if it began; the run. An answer to a retraction settles nothing
/// (`None`: the compensation that published it does not wait for it). An answer to an event
/// this stack did not publish is `Fatal.BadInput`; a receipt for an event whose publication is
/// not recorded yet is `Transient.InProgress` (the relay records it).
pub async fn receipt(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasWaits + HasCallback),
    ctx: &Context,
    answer: &Answer,
) -> Result<Option<RunId>, Error> {
    let Some(run) = settle(ports, ctx, answer).await? else {
        return Ok(None);
    };
    if let Some(token) = ports.waits().answered(answer).await? {
        answer_wait(ports.callback(), &token, answer).await?;
    }
    Ok(Some(run))
}

/// Settles `downstream.recorded` by `answer` (once: a repeated answer writes nothing); the run,
/// or `None` for an answer to a retraction.
pub(super) async fn settle(
    ports: &(impl HasStore + HasJournal + HasOutbox),
    ctx: &Context,
    answer: &Answer,
) -> Result<Option<RunId>, Error> {
    let effect = Effect::DownstreamRecorded;
    let event = answer.event_id();
    let record = ports.outbox().record(event).await?;
    let record =
        record.ok_or_else(|| Error::BadInput(format!("no event {event} was published")))?;
    if record.body.kind != EventKind::Accepted {
        return Ok(None);
    }
    let run = record.body.run_id.clone();
    let known = ports.journal().journal(&run).await?;
    let known = known.unwrap_or_else(|| Journal::new(&run));
    let entry = known.entry(effect);
    if known.compensation_reason.is_some() || entry.evidence == Evidence::Confirmed {
        return Ok(Some(run));
    }
    let claimed = EffectIds {
        event_id: Some(event.clone()),
        ..EffectIds::default()
    };
    let op = effect.operation(&run);
    let (ts, outbox, entry) = match answer {
        Answer::Recorded { receipt_id, .. } => {
            if record.delivery < Delivery::ProviderAccepted {
                return Err(Error::InProgress(format!(
                    "event {event} was answered before its publication was recorded"
                )));
            }
            let delivered = advance(&record, Advance::Delivered(receipt_id.clone()))?;
            let ids = EffectIds {
                receipt_id: Some(receipt_id.clone()),
                ..claimed.clone()
            };
            let detail = json!({"eventId": event, "receiptId": receipt_id});
            let ts = vec![
                Transition::Claim(effect, claimed),
                Transition::Settle(effect, Outcome::Happened(ids)),
            ];
            (ts, delivered, draft(ctx, &run, &op, effect.name(), detail))
        }
        Answer::Refused { error, .. } => {
            let detail = json!({"eventId": event, "error": error});
            let ts = vec![Transition::Refused(effect, error.clone())];
            (
                ts,
                None,
                draft(ctx, &run, &op, "downstream.refused", detail),
            )
        }
        Answer::Voided { .. } => {
            return Err(Error::BadInput(format!(
                "event {event}: a void answers a retraction, not an accepted event"
            )))
        }
    };
    let audit = |_: &Journal| Some(entry.clone());
    let settled = commit_or_busy(ports, ctx, &run, &ts, outbox.as_slice(), audit).await;
    unless_confirmed(ports.journal(), &run, effect, settled).await?;
    Ok(Some(run))
}

/// Ends the wait with `answer`: a receipt resumes the Task with it; a refusal fails the Task
/// with the refusal's name (`Business.DuplicateInvoice`, …), which the state machine catches.
async fn answer_wait(
    callback: &impl TaskCallback,
    token: &TaskToken,
    answer: &Answer,
) -> Result<(), Error> {
    match answer {
        Answer::Refused { event_id, error } => {
            let kind = ErrorKind::from_name(error).unwrap_or(ErrorKind::Internal);
            let cause = format!("the consumer refused event {event_id}");
            match callback.fail(token, kind, &cause).await {
                Err(Error::ReviewExpired(_)) => Ok(()),
                other => other,
            }
        }
        Answer::Recorded { receipt_id, .. } => {
            let output = json!({"status": "recorded", "receiptId": receipt_id});
            end_wait(callback, token, &output).await
        }
        Answer::Voided { .. } => Err(Error::BadInput(
            "a void does not answer an accepted event".into(),
        )),
    }
}

/// Resumes the Task with `output`; a Task that no longer waits (it was answered before, or its
/// deadline passed) is not an error: the wait is over either way.
async fn end_wait(
    callback: &impl TaskCallback,
    token: &TaskToken,
    output: &serde_json::Value,
) -> Result<(), Error> {
    match callback.succeed(token, output).await {
        Err(Error::ReviewExpired(_)) => Ok(()),
        other => other,
    }
}
