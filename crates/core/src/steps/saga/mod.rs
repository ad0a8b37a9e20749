//! Route's saga over the ports: [`run`] makes the effects in order (promotion, publication
//! through the outbox, the downstream record), and [`compensate`] undoes the confirmed ones in
//! reverse order after reconciling the uncertain ones. Every effect is claimed in the journal
//! (evidence `uncertain`) before it happens and settled after; effects and compensations are
//! appended to the audit chain with their ids (never document content).
//!
//! Not yet wired: route does not call these (the Lambdas and the state machine come next).
//! Until the store's transaction carries the journal and the outbox, a crash between an effect
//! and its settlement leaves the effect `uncertain`, and the next attempt reconciles it.

mod compensate;

pub use compensate::{compensate, Compensation};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{record, Context};
use crate::audit::AuditDraft;
use crate::error::Family;
use crate::ids::{sha256_hex, OperationId, RunId};
use crate::model::run::{ObjectRef, RunInput};
use crate::ports::BlobStore;
use crate::ports::{
    Change, DocumentRecord, Downstream, EventBus, HasBlobs, HasDownstream, HasEvents, HasJournal,
    HasOutbox, HasStore, Outbox, SagaJournal, Store,
};
use crate::saga::outbox::invoice_key;
use crate::saga::{
    Advance, Delivery, Effect, EffectIds, EventBody, EventId, Evidence, Journal, OutboxRecord,
    Outcome, PreviousResult, Transition,
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

/// Applies `t` to `run`'s journal (creating it at version 1), re-reading after a lost race;
/// the journal as it now stands.
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
    Err(Error::InProgress(format!(
        "saga journal of {run} contended {JOURNAL_RACE_ATTEMPTS} times"
    )))
}

/// Appends an audit entry with no state change of the store (the journal is its own table).
pub(super) async fn audit(
    store: &impl Store,
    ctx: &Context,
    run: &RunId,
    op: &OperationId,
    action: &str,
    detail: Value,
) -> Result<(), Error> {
    let draft = AuditDraft::new(&ctx.actor, action, Some(run))
        .operation(op)
        .detail(detail);
    record(store, ctx, &run.document_id(), Vec::new(), draft)
        .await?
        .map(|_| ())
        .map_err(|r| Error::Internal(format!("audit append refused at change {}", r.index)))
}

/// Runs the saga of `input`, whose result (written by route) is `result`. A retried call skips
/// confirmed effects and reconciles uncertain ones before trying them again. A refusal by the
/// consumer (`Business.*`, `Conflict.*`) settles the record as not-attempted and is returned:
/// the state machine's Catch then runs [`compensate`]. A run being compensated is fenced out
/// (`Conflict.FencedOut`).
pub async fn run(
    ports: &(impl HasBlobs + HasStore + HasJournal + HasOutbox + HasEvents + HasDownstream),
    ctx: &Context,
    input: &RunInput,
    result: &ObjectRef,
) -> Result<SagaRun, Error> {
    let bytes = ports.blobs().get(result).await?;
    let fields: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::BadInput(format!("result unreadable: {e}")))?;
    let field = |name: &str| {
        fields["fields"][name]["value"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| Error::BadInput(format!("result {result} has no {name}")))
    };
    let key = invoice_key(&input.tenant, &field("issuer")?, &field("invoice_number")?);
    let body = EventBody::accepted(input, result, &sha256_hex(&bytes), key);
    let known = ports.journal().journal(&input.run_id).await?;
    let known = known.unwrap_or_else(|| Journal::new(&input.run_id));
    let evidence = |effect: Effect| known.entry(effect).evidence;

    if !promote(ports, ctx, input, result, &known).await? {
        return Ok(SagaRun {
            status: "stale".into(),
        });
    }
    publish(ports, ctx, input, &body, evidence(Effect::EventPublished)).await?;
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
/// (then `false`: settled not-attempted). The previous current run is claimed beforehand.
async fn promote(
    ports: &(impl HasStore + HasJournal),
    ctx: &Context,
    input: &RunInput,
    result: &ObjectRef,
    known: &Journal,
) -> Result<bool, Error> {
    let effect = Effect::ResultPromoted;
    let (store, run) = (ports.store(), &input.run_id);
    let entry = known.entry(effect);
    let current = store.document(&input.document_id).await?;
    let is_current = current.as_ref().is_some_and(|d| &d.current_run_id == run);
    let ids = match entry.evidence {
        Evidence::Confirmed => return Ok(true),
        // Claimed before: the previous result was recorded then; did the promotion land?
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
    update(
        ports.journal(),
        run,
        &Transition::Claim(effect, ids.clone()),
    )
    .await?;
    let promote = Change::Promote(DocumentRecord {
        document_id: input.document_id.clone(),
        tenant: input.tenant.clone(),
        current_run_id: run.clone(),
        source_order: input.source_order.clone(),
    });
    let previous = ids.previous.as_ref().map(|p| p.run_id.as_str());
    let draft = AuditDraft::new(&ctx.actor, effect.name(), Some(run))
        .operation(&effect.operation(run))
        .output("result", &result.to_string())
        .detail(json!({"previousRunId": previous}));
    let outcome = match record(store, ctx, &input.document_id, vec![promote], draft).await? {
        Ok(_) => Outcome::Happened(ids),
        Err(_) => Outcome::DidNotHappen,
    };
    let promoted = matches!(outcome, Outcome::Happened(_));
    update(ports.journal(), run, &Transition::Settle(effect, outcome)).await?;
    Ok(promoted)
}

/// `event.published`: the event is persisted in the outbox, then published under its stable id.
/// After a lost answer (`uncertain`), the bus is asked first: the event is published once.
async fn publish(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents),
    ctx: &Context,
    input: &RunInput,
    body: &EventBody,
    evidence: Evidence,
) -> Result<(), Error> {
    let effect = Effect::EventPublished;
    let run = &input.run_id;
    if evidence == Evidence::Confirmed {
        return Ok(());
    }
    let ids = claim_event(ports.journal(), run, effect, &body.event_id).await?;
    let entry_id = relay(ports, body, evidence == Evidence::Uncertain).await?;
    let ids = EffectIds {
        entry_id: Some(entry_id.clone()),
        ..ids
    };
    let detail = json!({"eventId": body.event_id, "entryId": entry_id});
    confirmed(ports, ctx, run, effect, ids, detail).await
}

/// Persists `body` in the outbox and publishes it unless the outbox or (after a lost answer,
/// `retry`) the bus already shows it accepted; the entry id.
pub(super) async fn relay(
    ports: &(impl HasOutbox + HasEvents),
    body: &EventBody,
    retry: bool,
) -> Result<String, Error> {
    let id = &body.event_id;
    let record = ports
        .outbox()
        .persist(OutboxRecord::prepare(body.clone()))
        .await?;
    if let Some(entry) = record
        .entry_id
        .filter(|_| record.delivery >= Delivery::ProviderAccepted)
    {
        return Ok(entry);
    }
    let found = match retry {
        true => ports.events().find(id).await?,
        false => None,
    };
    let entry = match found {
        Some(entry) => entry,
        None => ports.events().put(body).await?,
    };
    let accepted = Advance::ProviderAccepted(entry.clone());
    ports.outbox().advance(id, accepted).await?;
    Ok(entry)
}

/// `downstream.recorded`: the consumer applies the event and answers a receipt, which confirms
/// the outbox record's delivery. A refusal settles it not-attempted and is returned.
async fn deliver(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasDownstream),
    ctx: &Context,
    input: &RunInput,
    body: &EventBody,
    evidence: Evidence,
) -> Result<(), Error> {
    let effect = Effect::DownstreamRecorded;
    let (run, op) = (&input.run_id, effect.operation(&input.run_id));
    if evidence == Evidence::Confirmed {
        return Ok(());
    }
    let ids = claim_event(ports.journal(), run, effect, &body.event_id).await?;
    let held = match evidence {
        Evidence::Uncertain => ports.downstream().receipt_for(&body.event_id).await?,
        _ => None,
    };
    let receipt = match held {
        Some(receipt) => receipt,
        None => match ports.downstream().deliver(body).await {
            Ok(receipt) => receipt,
            Err(e) if matches!(e.family(), Family::Business | Family::Conflict) => {
                let refused = Transition::Settle(effect, Outcome::DidNotHappen);
                update(ports.journal(), run, &refused).await?;
                let detail = json!({"eventId": body.event_id, "error": e.name()});
                audit(ports.store(), ctx, run, &op, "downstream.refused", detail).await?;
                return Err(e);
            }
            Err(e) => return Err(e),
        },
    };
    let delivered = Advance::Delivered(receipt.clone());
    ports.outbox().advance(&body.event_id, delivered).await?;
    let ids = EffectIds {
        receipt_id: Some(receipt.clone()),
        ..ids
    };
    let detail = json!({"eventId": body.event_id, "receiptId": receipt});
    confirmed(ports, ctx, run, effect, ids, detail).await
}

/// Claims `effect` of `run` (known by its event's id) before it happens; its ids.
async fn claim_event(
    journal: &impl SagaJournal,
    run: &RunId,
    effect: Effect,
    event: &EventId,
) -> Result<EffectIds, Error> {
    let ids = EffectIds {
        event_id: Some(event.clone()),
        ..EffectIds::default()
    };
    update(journal, run, &Transition::Claim(effect, ids.clone())).await?;
    Ok(ids)
}

/// Settles `effect` as happened with `ids`, then appends its audit entry with `detail`.
async fn confirmed(
    ports: &(impl HasStore + HasJournal),
    ctx: &Context,
    run: &RunId,
    effect: Effect,
    ids: EffectIds,
    detail: Value,
) -> Result<(), Error> {
    let settled = Transition::Settle(effect, Outcome::Happened(ids));
    update(ports.journal(), run, &settled).await?;
    audit(
        ports.store(),
        ctx,
        run,
        &effect.operation(run),
        effect.name(),
        detail,
    )
    .await
}
