//! Executions started at the rate OCR can admit them (issue 13, SCALE.md): [`PacedStarts`]
//! wraps a [`Workflow`] whose executions are named by their run id (ingest's) so that each
//! `start` first
//!
//! 1. takes a slot of one pacer (`textract-executions`), spaced for the provider's start quota
//!    (its `StartDocumentTextDetection` calls a second, as recorded or by default), under the
//!    same rules as OCR's own call slots ([`super::take_turn_with`]); and, while that slot
//!    comes,
//! 2. takes the run's job slot ([`super::take_job_slot`]) for the holder the OCR step will ask
//!    for, the run's OCR operation id: so the OCR step finds it held (`AlreadyHeld`, its lease
//!    renewed) and never waits for one, and the slot is given back where it always is, when
//!    the job ends.
//!
//! The job slot is taken in the turn's lead, not after it came: its writes take from
//! milliseconds to half a second on a loaded store, and a start sent that late after its slot
//! lands next to the following one's (in CI, two starts 6 ms apart at 2 a second). Taking it
//! outlasted the lead: the start takes another slot, as any late caller does.
//!
//! Why: every execution asks Textract to start one job within seconds, and holds a job slot
//! until the job ends. Started faster than either quota allows, the surplus waits in the OCR
//! step (retrying `Transient.QuotaFull`, each retry a billed transition, the retries bounded:
//! a job pool full for longer than their ~7 minutes failed documents); started at the quotas,
//! it waits in ingest's queue (SQS: durable for 14 days, free while it waits), and however many
//! documents arrive, and however long their jobs take, none fails for a quota. No turn within
//! the horizon, or every job slot held, is `Transient.QuotaFull`: the queue delivers the event
//! again later. The pacer's turn comes first: it is one conditional write that paces every
//! waiting message's attempts, so a full pool is asked at most at the start rate (the other
//! order would write a job slot and give it back for every message the pacer turns away).
//!
//! A run whose document is known to have one page (`RunInput::one_page`) is read by the provider's
//! synchronous API: no job, so its start takes no job slot. Its start books the read itself: a slot
//! of the read's own pacer (`textract-DetectDocumentText`, the one every read takes its turn at),
//! asked for `read_ahead_ms` after now (with no lead on top: `start_one_page` says why); the
//! execution is started that long before the slot, with the slot in its input
//! (`RunInput::read_at_ms`), and the OCR step reads at it ([`super::AdmittedOcr`]). One pacer paces
//! the start and the read: with a pacer for the starts and another for the reads at the same rate,
//! the reads' queue never drained, every OCR function waited most of the horizon for its turn, and
//! a third of its first attempts found none (bench-scale at 1,000: 483 `Transient.QuotaFull`
//! retries, 0.48 a document; SCALE.md). An OCR step come too late for its slot (a retry, a redrive)
//! takes a turn as any read does; a start whose answer was lost and is retried books another slot,
//! and one goes unused.
//!
//! A job slot taken here for an execution that already existed (a duplicate delivery of an
//! upload whose run had ended: `AlreadyExists`), whose start was refused outright (no execution
//! can exist), or that found no turn after all (late, and every slot left taken) is given back
//! at once. One taken for a start whose answer was lost is kept: the execution may run, and the
//! redelivery finds the slot its own. `running` is not paced.

use serde::Deserialize;
use serde_json::Value;

use super::{busy, give_back_job_slot, take_job_slot, take_turn_with, Rules, Turn};
use crate::admission::pacer::Taken;
use crate::admission::Quotas;
use crate::error::Family;
use crate::ids::RunId;
use crate::model::run::ExecutionInput;
use crate::model::step::Step;
use crate::ports::{Admission, Started, Timer, Workflow};
use crate::Error;

/// The pacer executions take their turn at.
pub const EXECUTIONS_PACER: &str = "executions";

/// A [`Workflow`] whose starts take their turn first (see the module docs).
#[derive(Debug)]
pub struct PacedStarts<W, A, T> {
    inner: W,
    admission: A,
    timer: T,
    rules: Rules,
}

impl<W: Workflow, A: Admission, T: Timer> PacedStarts<W, A, T> {
    /// `inner`'s starts paced through `admission` at `rules`' start quota, waiting on `timer`.
    pub fn new(inner: W, admission: A, timer: T, rules: Rules) -> Self {
        PacedStarts {
            inner,
            admission,
            timer,
            rules,
        }
    }

    /// The wrapped workflow.
    pub fn inner(&self) -> &W {
        &self.inner
    }

    /// A one-page document's start: books its run's read at the provider's synchronous read
    /// pacer, `read_ahead_ms` after now, waits until that long before the slot, and starts the
    /// execution with the slot in its input (module docs).
    ///
    /// No lead on top: the read ahead is this slot's lead (a booking that took longer leaves the
    /// OCR step that much less of it), and any more is a pacer left idle at a batch's end. A
    /// batch's invocation ends when its last start is sent, `read_ahead_ms` before its last
    /// slot; the next batch's first booking asks for `read_ahead_ms` after its own now; so the
    /// slot after the last is taken, not passed by, only if the batch after comes within the
    /// pacer's interval less the lead (bench-scale at 1 a second: 6 slots of 46 passed by with
    /// a lead of 250 ms, `tests/scale/reads.rs`).
    async fn start_one_page(
        &self,
        name: &str,
        mut execution: ExecutionInput,
        quotas: &Quotas,
    ) -> Result<Started, Error> {
        let (rules, timer) = (&self.rules, &self.timer);
        if let Some(&per_second) = quotas.tps.get(rules.detect) {
            let (pacer, pace) = (rules.pacer(rules.detect), rules.pace(per_second, quotas));
            let asked = timer.now_ms() + rules.read_ahead_ms;
            let Taken::Slot { at_ms } = self.admission.take_slot(&pacer, &pace, asked).await?
            else {
                return Err(busy(&pacer, rules.horizon_ms));
            };
            timer.sleep_until(at_ms - rules.read_ahead_ms).await;
            execution.run.read_at_ms = Some(at_ms);
        }
        let input = serde_json::to_value(&execution)
            .map_err(|e| Error::Internal(format!("execution input of {name}: {e}")))?;
        self.inner.start(name, &input).await
    }
}

impl<W: Workflow, A: Admission, T: Timer> Workflow for PacedStarts<W, A, T> {
    async fn start(&self, name: &str, input: &Value) -> Result<Started, Error> {
        let quotas = self.rules.quotas(&self.admission).await?;
        if let Ok(execution) = ExecutionInput::deserialize(input) {
            if execution.run.one_page() {
                return self.start_one_page(name, execution, &quotas).await;
            }
        }
        let (admission, rules, timer) = (&self.admission, &self.rules, &self.timer);
        let holder = Step::Ocr.operation(&RunId::parse(name)?);
        // `Ok(true)` for a job slot taken now, `Ok(false)` for one held already.
        let job_slot = take_job_slot(admission, timer, rules, holder.as_str(), &quotas);
        let pacer = rules.pacer(EXECUTIONS_PACER);
        let (turn, new) = match quotas.tps.get(rules.start) {
            Some(&per_second) => {
                let pace = rules.pace(per_second, &quotas);
                take_turn_with(admission, timer, &pacer, &pace, rules.lead_ms, job_slot).await?
            }
            None => (Turn::Ours, Some(job_slot.await?)),
        };
        let new = new.unwrap_or(false);
        if let Err(late_or_busy) = turn.admitted(&pacer, rules.horizon_ms) {
            if new {
                give_back_job_slot(admission, rules, holder.as_str()).await?;
            }
            return Err(late_or_busy);
        }
        let started = self.inner.start(name, input).await;
        let no_job_to_come = match &started {
            Ok(Started::AlreadyExists) => true,
            Ok(Started::New) => false,
            Err(e) => !matches!(e.family(), Family::Transient | Family::Ambiguous),
        };
        if new && no_job_to_come {
            give_back_job_slot(admission, rules, holder.as_str()).await?;
        }
        started
    }

    async fn running(&self, name: &str) -> Result<bool, Error> {
        self.inner.running(name).await
    }

    async fn exists(&self, name: &str) -> Result<bool, Error> {
        self.inner.exists(name).await
    }
}

#[cfg(test)]
mod tests;
