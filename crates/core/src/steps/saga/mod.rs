//! Route's saga over the ports: [`run`] makes the effects in order (promotion, publication
//! through the outbox, the downstream record), and [`compensate`] undoes the confirmed ones in
//! reverse order after reconciling the uncertain ones. Effects and compensations are appended
//! to the audit chain with their ids (never document content).
//!
//! What the saga records is committed in ONE store transaction ([`commit`]): the journal's
//! settlement of an effect (`Change::Journal`, conditional on its version), the outbox's move
//! that goes with it (`Change::Outbox`), and the effect's audit entry. The promotion is made in
//! that same transaction, with its journal entry and the `document.accepted` outbox record
//! (state change + outbox = one transaction); a restore likewise (`Change::Restore`). An effect
//! outside the store (PutEvents, the consumer's record) is claimed in the journal alone before
//! it happens (evidence `uncertain`), so a crash between it and its settlement leaves it
//! `uncertain` and the next attempt reconciles it.
//!
//! Route runs the first two effects: it commits [`promotion`] with the run's completion and then
//! [`announce`]s the event; a route that stopped in between leaves the record `persisted`, which
//! the sweeper ([`stuck`], route's `sweep` action on a schedule) announces later. The downstream
//! receipt and the compensate Lambda are not wired into the state machine yet ([`run`] and
//! [`compensate`] are exercised by the tests).

mod compensate;
mod receipt;
mod retract;
mod sweep;

pub use compensate::{compensate, compensate_run, Compensation};
pub use receipt::{await_receipt, receipt, Awaited};
pub use retract::{retract, Retraction, RETRACTED};
pub use sweep::{redeliver, stuck, unanswered, Swept};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{record_guarded, Context};
use crate::audit::AuditDraft;
use crate::error::Family;
use crate::ids::{sha256_hex, OperationId, RunId};
use crate::model::run::{ObjectRef, RunInput};
use crate::ports::BlobStore;
use crate::ports::{
    Change, Deliver, DocumentRecord, Downstream, EventBus, HasBlobs, HasDownstream, HasEvents,
    HasJournal, HasOutbox, HasStore, Outbox, Refused, SagaJournal, Store,
};
use crate::saga::outbox::invoice_key;
use crate::saga::sink::Answer;
use crate::saga::{
    Advance, Delivery, Effect, EffectIds, EventBody, EventId, EventKind, Evidence, Journal,
    OutboxRecord, Outcome, PreviousResult, Transition,
};
use crate::Error;

/// How many times a journal write is retried after another writer moved the journal first.
const JOURNAL_RACE_ATTEMPTS: usize = 8;

/// How the forward saga ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SagaRun {
    /// `completed` (every effect confirmed) or `stale` (a newer version is current: nothing
    /// was promoted, published or recorded).
    pub status: String,
}

/// Applies `t` to `run`'s journal alone (creating it at version 1) through
/// [`SagaJournal::put`], re-reading after a lost race; the journal as it now stands. For what is
/// written before an effect and has no audit entry of its own: a claim, the start of a
/// compensation, an attempt.
pub(super) async fn update(
    journal: &impl SagaJournal,
    run: &RunId,
    t: &Transition,
) -> Result<Journal, Error> {
    for _ in 0..JOURNAL_RACE_ATTEMPTS {
        let current = journal
            .journal(run)
            .await?
            .unwrap_or_else(|| Journal::new(run));
        let Some(next) = current.next(t)? else {
            return Ok(current);
        };
        if journal.put(&next).await?.is_ok() {
            return Ok(next);
        }
    }
    Err(contended(run))
}

fn contended(run: &RunId) -> Error {
    Error::InProgress(format!(
        "saga journal of {run} contended {JOURNAL_RACE_ATTEMPTS} times"
    ))
}

/// Applies `ts` to `run`'s journal as one write and commits it in ONE store transaction with
/// `changes` and the audit entry `audit` gives for the journal written (none: no entry);
/// re-reads and applies `ts` again after another writer moved the journal. The journal as it now
/// stands, or which of `changes` was refused (then nothing was written). A journal that already
/// shows `ts` writes nothing: the transaction that moved it carried the changes and the entry.
pub(super) async fn commit(
    ports: &(impl HasStore + HasJournal),
    ctx: &Context,
    run: &RunId,
    ts: &[Transition],
    changes: &[Change],
    audit: impl Fn(&Journal) -> Option<AuditDraft>,
) -> Result<Result<Journal, Refused>, Error> {
    for _ in 0..JOURNAL_RACE_ATTEMPTS {
        let current = ports.journal().journal(run).await?;
        let current = current.unwrap_or_else(|| Journal::new(run));
        let Some(next) = current.next_all(ts)? else {
            return Ok(Ok(current));
        };
        let mut all = vec![Change::Journal(next.clone())];
        all.extend(changes.iter().cloned());
        let written = match audit(&next) {
            Some(draft) => {
                let document = run.document_id();
                let appended = record_guarded(ports.store(), ctx, &document, all, draft).await?;
                appended.map(|_| ())
            }
            None => ports.store().commit(all).await?,
        };
        match written {
            Ok(()) => return Ok(Ok(next)),
            Err(Refused { index: 0 }) => continue,
            Err(Refused { index }) => return Ok(Err(Refused { index: index - 1 })),
        }
    }
    Err(contended(run))
}

/// [`commit`] of changes that only another caller of the same saga can have moved first (a
/// concurrent relay advanced the outbox record): `Transient.InProgress`, and the retry
/// reconciles from what is stored.
pub(super) async fn commit_or_busy(
    ports: &(impl HasStore + HasJournal),
    ctx: &Context,
    run: &RunId,
    ts: &[Transition],
    changes: &[Change],
    audit: impl Fn(&Journal) -> Option<AuditDraft>,
) -> Result<Journal, Error> {
    commit(ports, ctx, run, ts, changes, audit)
        .await?
        .map_err(|r| {
            Error::InProgress(format!(
                "saga of {run}: {:?} was moved by another caller",
                changes[r.index]
            ))
        })
}

/// The audit entry of `action` by operation `op` of `run`.
pub(super) fn draft(
    ctx: &Context,
    run: &RunId,
    op: &OperationId,
    action: &str,
    detail: Value,
) -> AuditDraft {
    AuditDraft::new(&ctx.actor, action, Some(run))
        .operation(op)
        .detail(detail)
}

/// The change that persists `body`'s outbox record (refused if the event has one).
fn persist(body: &EventBody) -> Result<Change, Error> {
    let prepared = OutboxRecord::prepare(body.clone());
    let record = prepared.advanced(&Advance::Persist)?.unwrap_or(prepared);
    Ok(Change::Outbox { record, from: None })
}

/// The change that moves `record` by `advance` (conditional on the state it was read in), or
/// none when it already shows it.
pub(super) fn advance(record: &OutboxRecord, advance: Advance) -> Result<Option<Change>, Error> {
    Ok(record.advanced(&advance)?.map(|next| Change::Outbox {
        record: next,
        from: Some(record.delivery),
    }))
}

/// The `document.accepted` event of `input`'s result `result`, whose bytes are `bytes` (the
/// invoice key comes from its `issuer` and `invoice_number` fields).
fn accepted(input: &RunInput, result: &ObjectRef, bytes: &[u8]) -> Result<EventBody, Error> {
    let fields: Value = serde_json::from_slice(bytes)
        .map_err(|e| Error::BadInput(format!("result unreadable: {e}")))?;
    let field = |name: &str| {
        fields["fields"][name]["value"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| Error::BadInput(format!("result {result} has no {name}")))
    };
    let key = invoice_key(&input.tenant, &field("issuer")?, &field("invoice_number")?);
    Ok(EventBody::accepted(input, result, &sha256_hex(bytes), key))
}

/// The change that makes `input` the document's current result.
fn promote_change(input: &RunInput) -> Change {
    Change::Promote(DocumentRecord {
        document_id: input.document_id.clone(),
        tenant: input.tenant.clone(),
        current_run_id: input.run_id.clone(),
        source_order: input.source_order.clone(),
        retracted_run_id: None,
    })
}

/// The saga's first effect, `result.promoted`, as route commits it with the run's completion.
#[derive(Debug, Clone)]
pub struct Promotion {
    /// In this order: the promotion (refused when a newer version is current), the journal
    /// confirming it with the previous current run, the `document.accepted` outbox record.
    pub changes: Vec<Change>,
    /// The ids for the audit entry: `previousRunId`, `eventId`.
    pub detail: Value,
}

/// The promotion of `input`'s result `result` (bytes `bytes`), or `None` when the journal
/// shows it made already (an earlier attempt committed it with the run's completion).
pub async fn promotion(
    ports: &(impl HasStore + HasJournal),
    input: &RunInput,
    result: &ObjectRef,
    bytes: &[u8],
) -> Result<Option<Promotion>, Error> {
    let (effect, run) = (Effect::ResultPromoted, &input.run_id);
    let body = accepted(input, result, bytes)?;
    let known = ports.journal().journal(run).await?;
    let known = known.unwrap_or_else(|| Journal::new(run));
    if known.entry(effect).evidence == Evidence::Confirmed {
        return Ok(None);
    }
    let current = ports.store().document(&input.document_id).await?;
    let ids = EffectIds {
        previous: current
            .filter(|d| &d.current_run_id != run)
            .map(|d| PreviousResult {
                run_id: d.current_run_id,
                source_order: d.source_order,
            }),
        ..EffectIds::default()
    };
    let previous = ids.previous.as_ref().map(|p| p.run_id.to_string());
    let ts = [
        Transition::Claim(effect, ids.clone()),
        Transition::Settle(effect, Outcome::Happened(ids)),
    ];
    let Some(journal) = known.next_all(&ts)? else {
        return Ok(None);
    };
    Ok(Some(Promotion {
        detail: json!({"previousRunId": previous, "eventId": body.event_id}),
        changes: vec![
            promote_change(input),
            Change::Journal(journal),
            persist(&body)?,
        ],
    }))
}

/// `event.published` for `run`, whose promotion is confirmed: publishes the event persisted with
/// it (from its outbox record) unless the journal shows it published. Nothing for a run with no
/// confirmed promotion (a stale one, or one completed before its stack had the saga).
pub async fn announce(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents),
    ctx: &Context,
    run: &RunId,
) -> Result<(), Error> {
    let known = ports.journal().journal(run).await?;
    let Some(known) = known else {
        return Ok(());
    };
    if known.entry(Effect::ResultPromoted).evidence != Evidence::Confirmed {
        return Ok(());
    }
    let evidence = known.entry(Effect::EventPublished).evidence;
    let id = EventId::new(run, EventKind::Accepted);
    let record = ports.outbox().record(&id).await?;
    let record = record
        .ok_or_else(|| Error::Internal(format!("{run} is promoted but the outbox has no {id}")))?;
    publish(ports, ctx, run, &record.body, evidence).await
}

/// Runs the saga of `input`, whose result (written by route) is `result`. A retried call skips
/// confirmed effects and reconciles uncertain ones before trying them again. A refusal by the
/// consumer (`Business.*`, `Conflict.*`) settles the record as not-attempted and is returned:
/// the state machine's Catch then runs [`compensate`]. A run being compensated is fenced out
/// (`Conflict.FencedOut`).
pub async fn run(
    ports: &(impl HasBlobs
          + HasStore
          + HasJournal
          + HasOutbox
          + HasEvents
          + HasDownstream<Downstream: Deliver>),
    ctx: &Context,
    input: &RunInput,
    result: &ObjectRef,
) -> Result<SagaRun, Error> {
    let bytes = ports.blobs().get(result).await?;
    let body = accepted(input, result, &bytes)?;
    let known = ports.journal().journal(&input.run_id).await?;
    let known = known.unwrap_or_else(|| Journal::new(&input.run_id));
    let evidence = |effect: Effect| known.entry(effect).evidence;

    if !promote(ports, ctx, input, result, &body, &known).await? {
        return Ok(SagaRun {
            status: "stale".into(),
        });
    }
    let published = evidence(Effect::EventPublished);
    publish(ports, ctx, &input.run_id, &body, published).await?;
    deliver(
        ports,
        ctx,
        input,
        &body,
        evidence(Effect::DownstreamRecorded),
    )
    .await?;
    Ok(SagaRun {
        status: "completed".into(),
    })
}

/// `result.promoted`: the run becomes the document's current result unless a newer version is
/// (then `false`, and nothing is written). One transaction makes the promotion, confirms it in
/// the journal with the previous current run, persists the `document.accepted` outbox record
/// and appends the audit entry.
async fn promote(
    ports: &(impl HasStore + HasJournal),
    ctx: &Context,
    input: &RunInput,
    result: &ObjectRef,
    body: &EventBody,
    known: &Journal,
) -> Result<bool, Error> {
    let effect = Effect::ResultPromoted;
    let (store, run) = (ports.store(), &input.run_id);
    let entry = known.entry(effect);
    let current = store.document(&input.document_id).await?;
    let is_current = current.as_ref().is_some_and(|d| &d.current_run_id == run);
    let ids = match entry.evidence {
        Evidence::Confirmed => return Ok(true),
        // Claimed apart from the promotion (a journal written before promotions were committed
        // with their entry): the previous result was recorded then; did the promotion land?
        Evidence::Uncertain if is_current => {
            let settled = Outcome::Happened(entry.ids.clone());
            update(ports.journal(), run, &Transition::Settle(effect, settled)).await?;
            return Ok(true);
        }
        Evidence::Uncertain => entry.ids.clone(),
        Evidence::NotAttempted => EffectIds {
            previous: current.filter(|_| !is_current).map(|d| PreviousResult {
                run_id: d.current_run_id,
                source_order: d.source_order,
            }),
            ..EffectIds::default()
        },
    };
    let promote = promote_change(input);
    let ts = [
        Transition::Claim(effect, ids.clone()),
        Transition::Settle(effect, Outcome::Happened(ids.clone())),
    ];
    let previous = ids.previous.as_ref().map(|p| p.run_id.as_str());
    let detail = json!({"previousRunId": previous, "eventId": body.event_id});
    let audit = |_: &Journal| {
        let op = effect.operation(run);
        let draft = draft(ctx, run, &op, effect.name(), detail.clone());
        Some(draft.output("result", &result.to_string()))
    };
    let committed = commit(ports, ctx, run, &ts, &[promote, persist(body)?], audit).await;
    let Some(committed) = unless_confirmed(ports.journal(), run, effect, committed).await? else {
        return Ok(true);
    };
    match committed {
        Ok(_) => Ok(true),
        // A newer version is current: nothing was promoted, persisted or journaled.
        Err(Refused { index: 0 }) => Ok(false),
        Err(_) => Err(Error::Internal(format!(
            "outbox holds {} while the promotion of {run} is not journaled",
            body.event_id
        ))),
    }
}

/// `event.published`: the event persisted with the promotion is published under its stable id.
/// After a lost answer (`uncertain`), the bus is asked first: the event is published once.
async fn publish(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents),
    ctx: &Context,
    run: &RunId,
    body: &EventBody,
    evidence: Evidence,
) -> Result<(), Error> {
    let effect = Effect::EventPublished;
    if evidence == Evidence::Confirmed {
        return Ok(());
    }
    let Some(ids) = claim_event(ports.journal(), run, effect, &body.event_id).await? else {
        return Ok(());
    };
    let (entry_id, accepted) = relay(ports, body, evidence == Evidence::Uncertain).await?;
    let ids = EffectIds {
        entry_id: Some(entry_id.clone()),
        ..ids
    };
    let detail = json!({"eventId": body.event_id, "entryId": entry_id});
    confirmed(ports, ctx, run, effect, ids, accepted, detail).await
}

/// Publishes `body` under its id unless its outbox record (persisted now if it has none) or,
/// after a lost answer (`retry`), the bus already shows it accepted. The entry id, and the
/// outbox move that records it (none if the record shows it already), for the caller to commit
/// with the journal's settlement and its audit entry.
pub(super) async fn relay(
    ports: &(impl HasOutbox + HasEvents),
    body: &EventBody,
    retry: bool,
) -> Result<(String, Option<Change>), Error> {
    let id = &body.event_id;
    let record = match ports.outbox().record(id).await? {
        Some(record) => record,
        None => {
            let prepared = OutboxRecord::prepare(body.clone());
            ports.outbox().persist(prepared).await?
        }
    };
    if let Some(entry) = record
        .entry_id
        .clone()
        .filter(|_| record.delivery >= Delivery::ProviderAccepted)
    {
        return Ok((entry, None));
    }
    let found = match retry {
        true => ports.events().find(id).await?,
        false => None,
    };
    let entry = match found {
        Some(entry) => entry,
        None => ports.events().put(body).await?,
    };
    let accepted = advance(&record, Advance::ProviderAccepted(entry.clone()))?;
    Ok((entry, accepted))
}

/// `downstream.recorded` with a consumer that answers at once (the in-memory model of the bus
/// and the consumer's answer): delivered, then settled by its answer as [`receipt`] settles it
/// on AWS. A refusal is settled (with its audit entry) and returned.
async fn deliver(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasDownstream<Downstream: Deliver>),
    ctx: &Context,
    input: &RunInput,
    body: &EventBody,
    evidence: Evidence,
) -> Result<(), Error> {
    let (effect, run, event_id) = (Effect::DownstreamRecorded, &input.run_id, &body.event_id);
    if evidence == Evidence::Confirmed {
        return Ok(());
    }
    if claim_event(ports.journal(), run, effect, event_id)
        .await?
        .is_none()
    {
        return Ok(());
    }
    let held = match evidence {
        Evidence::Uncertain => ports.downstream().receipt_for(event_id).await?,
        _ => None,
    };
    let delivered = match held {
        Some(receipt) => Ok(receipt),
        None => ports.downstream().deliver(body).await,
    };
    let (answer, refusal) = match delivered {
        Ok(receipt_id) => {
            let event_id = event_id.clone();
            let voided_receipt_id = None;
            (
                Answer::Recorded {
                    event_id,
                    receipt_id,
                    voided_receipt_id,
                },
                None,
            )
        }
        Err(e) if matches!(e.family(), Family::Business | Family::Conflict) => {
            (Answer::refused(event_id, &e), Some(e))
        }
        Err(e) => return Err(e),
    };
    receipt::settle(ports, ctx, &answer).await?;
    refusal.map_or(Ok(()), Err)
}

/// `result`, unless it failed because another invocation of this saga confirmed `effect`
/// meanwhile (a duplicate invocation: a retry after a timeout while the first still ran; the
/// journal refuses its claim or settlement, as for any confirmed effect). Then the effect
/// happened, once, and this caller has nothing left to do with it (`None`).
pub(super) async fn unless_confirmed<T>(
    journal: &impl SagaJournal,
    run: &RunId,
    effect: Effect,
    result: Result<T, Error>,
) -> Result<Option<T>, Error> {
    match result {
        Ok(done) => Ok(Some(done)),
        Err(e) => match journal.journal(run).await? {
            Some(j) if j.entry(effect).evidence == Evidence::Confirmed => Ok(None),
            _ => Err(e),
        },
    }
}

/// Claims `effect` of `run` (known by its event's id) before it happens; its ids, or `None` if
/// another invocation confirmed it meanwhile.
async fn claim_event(
    journal: &impl SagaJournal,
    run: &RunId,
    effect: Effect,
    event: &EventId,
) -> Result<Option<EffectIds>, Error> {
    let ids = EffectIds {
        event_id: Some(event.clone()),
        ..EffectIds::default()
    };
    let claimed = update(journal, run, &Transition::Claim(effect, ids.clone())).await;
    let claimed = unless_confirmed(journal, run, effect, claimed).await?;
    Ok(claimed.map(|_| ids))
}

/// Settles `effect` as happened with `ids`, with the outbox move `outbox` and its audit entry
/// (`detail`), in one transaction.
async fn confirmed(
    ports: &(impl HasStore + HasJournal),
    ctx: &Context,
    run: &RunId,
    effect: Effect,
    ids: EffectIds,
    outbox: Option<Change>,
    detail: Value,
) -> Result<(), Error> {
    let settled = [Transition::Settle(effect, Outcome::Happened(ids))];
    let entry = draft(ctx, run, &effect.operation(run), effect.name(), detail);
    let audit = |_: &Journal| Some(entry.clone());
    let settled = commit_or_busy(ports, ctx, run, &settled, outbox.as_slice(), audit).await;
    unless_confirmed(ports.journal(), run, effect, settled).await?;
    Ok(())
}
