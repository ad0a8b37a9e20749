//! OCR through admission (issue 13, SCALE.md): [`AdmittedOcr`] wraps an [`Ocr`] provider so
//! that every call takes its turn under the provider's quotas first, whichever run makes it.
//!
//! - **A job slot before a job.** `start` takes a slot of the job pool for its holder, the
//!   run's OCR operation id (so a retried start holds the one slot it had), before it asks the
//!   provider. Every slot held: the pool's run-out leases (crashed holders) are reclaimed, and
//!   if none was, `Transient.QuotaFull`. The slot is given back when a poll finds the job ended
//!   (succeeded or failed) or when the provider refused the document itself (`Business.*`: no
//!   job exists). A start that failed otherwise (transiently, a lost answer, a conflict with an
//!   earlier job of the same token) keeps its slot: its job may exist, and a retry comes back to
//!   the same slot; a slot no one comes back to is reclaimed after its lease.
//! - **No job slot for a synchronous read.** `detect` (one page, answered at once) holds no job
//!   and takes only its own call slot: the one ingest booked for it when it started the run
//!   ([`starts`], `RunInput::read_at_ms`), waited for and used if it is still usable, or else
//!   a turn as below.
//! - **A call slot before a call.** Each start, poll and synchronous read takes a slot of its
//!   operation's pacer ([`crate::admission::pacer`], spaced for the quota) and waits for it; a slot
//!   further away than the horizon is not taken: a start answers `Transient.QuotaFull` (the state
//!   machine retries with backoff), a poll answers `InProgress` without asking the provider (the
//!   workflow polls again). A slot is asked for `lead` ahead of now, so that it is still ahead once
//!   the conditional write that takes it returns; a caller that woke later than `max_late` after
//!   its slot takes another, asked for twice as far ahead as taking the last one took (three times,
//!   then as if busy).
//! - **The quotas are data**: those an operator recorded (`docket ops quotas`), read at each
//!   call, so a raised quota takes effect without a deploy; with none recorded, the provider's
//!   defaults ([`Quotas::textract_defaults`]). Admission is always on. Neither record is read
//!   before it is written, so callers at once never race: a call slot is one conditional write
//!   ([`crate::admission::pacer`]), a job slot one transaction
//!   ([`crate::admission::slots`]). (When both were read first, a hundred starts at once raced
//!   on the pool's count: in the mixed-fault soak 1,978 transactions were cancelled on their
//!   condition against 806 that landed, and 4 of 100 documents were final after ten minutes.)
//!
//! A poll of a long document pages through the result (one call per 1,000 blocks): each answer
//! after the first takes a turn of its own at the same pacer (`NextAnswers`), so a job read in
//! many answers keeps to the quota as many polls would. The lease of a job slot outlasts the
//! workflow's whole OCR wait (for the notification, then the poll loop), so a slot is never
//! reclaimed while its job may still run. With completion by callback, the poll that gives the
//! slot back is ocr-notified's.

use std::future::Future;

use crate::admission::pacer::{usable, Pace, Taken};
use crate::admission::slots::Acquired;
use crate::admission::{Quotas, DETECT_TEXT, GET_TEXT_DETECTION, START_TEXT_DETECTION};
use crate::error::Family;
use crate::ids::OperationId;
use crate::model::run::ObjectRef;
use crate::ocr::OcrDocument;
use crate::ports::{Admission, CallPace, Ocr, OcrPoll, Timer};
use crate::Error;

/// How admission keeps to one provider's quotas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// The provider whose quotas are read (`textract`).
    pub provider: &'static str,
    /// Its quotas when none are recorded (AWS's defaults).
    pub defaults: Quotas,
    /// The operation that starts a job, as the quotas name it.
    pub start: &'static str,
    /// The operation that reads a job, as the quotas name it.
    pub get: &'static str,
    /// The synchronous read of a one-page document, as the quotas name it.
    pub detect: &'static str,
    /// How late after its slot a call may still be sent (ms); slots are spaced for it and for
    /// the arrival jitter of [`Quotas`].
    pub max_late_ms: i64,
    /// How far after now a call slot is asked for (ms): longer than taking it (a conditional
    /// write, two when the pacer was idle) usually takes, so that the slot is still ahead
    /// when it is ours. (A one-page run's read, booked at its start, is asked for
    /// `read_ahead_ms` ahead instead: [`starts`].)
    pub lead_ms: i64,
    /// How far ahead a call slot is waited for (ms); must be well within the function's timeout.
    pub horizon_ms: i64,
    /// How long before the slot booked for a one-page read its execution is started (ms):
    /// longer than the engine takes to begin the OCR Task and the OCR function to claim its
    /// operation (bench-scale: the Task began 40 ms after the start at p95, 1.7 s at most), so
    /// that the slot is still ahead when the read comes.
    pub read_ahead_ms: i64,
    /// How long a job slot is held without its holder coming back (s): longer than the
    /// workflow waits for a job (the OCR poll limit), so only a crashed holder's runs out.
    pub lease_seconds: i64,
}

impl Rules {
    /// Textract's text detection: 50 ms lateness, slots asked for 250 ms ahead, a 5 s horizon
    /// (the ocr function's timeout is 30 s), one-page reads started 1 s ahead, a 30 minute
    /// lease (the workflow waits for a job's notification at most 999 s, `OcrWaitSeconds`, then
    /// polls it at most 90 times 2 s apart).
    pub fn textract() -> Rules {
        Rules {
            provider: "textract",
            defaults: Quotas::textract_defaults(),
            start: START_TEXT_DETECTION,
            get: GET_TEXT_DETECTION,
            detect: DETECT_TEXT,
            max_late_ms: 50,
            lead_ms: 250,
            horizon_ms: 5_000,
            read_ahead_ms: 1_000,
            lease_seconds: 1_800,
        }
    }

    /// The job pool's name.
    pub fn pool(&self) -> String {
        format!("{}-jobs", self.provider)
    }

    /// The pacer of `operation`.
    pub fn pacer(&self, operation: &str) -> String {
        format!("{}-{operation}", self.provider)
    }

    /// The quotas in force: those recorded in `admission`, or the defaults when none are.
    pub async fn quotas(&self, admission: &impl Admission) -> Result<Quotas, Error> {
        let recorded = admission.quotas(self.provider).await?;
        Ok(recorded.unwrap_or_else(|| self.defaults.clone()))
    }

    /// How the slots of an operation with `per_second` calls a second are spaced under
    /// `quotas` (their arrival jitter).
    pub fn pace(&self, per_second: u32, quotas: &Quotas) -> Pace {
        let jitter = i64::from(quotas.arrival_jitter_ms);
        Pace::for_quota(per_second, self.max_late_ms, jitter, self.horizon_ms)
    }
}

/// Takes a job slot of `rules`' pool for `holder` under `quotas`, reclaiming crashed holders'
/// slots when all are held: `Ok(true)` when the slot is new, `Ok(false)` when `holder` held it
/// already (its lease renewed), `Transient.QuotaFull` naming the pool when every slot is held.
pub async fn take_job_slot(
    admission: &impl Admission,
    timer: &impl Timer,
    rules: &Rules,
    holder: &str,
    quotas: &Quotas,
) -> Result<bool, Error> {
    let pool = rules.pool();
    let now = timer.now_ms() / 1000;
    let acquire = || admission.acquire(&pool, holder, quotas.max_jobs, now, rules.lease_seconds);
    let full = |held| {
        let limit = quotas.max_jobs;
        Error::QuotaFull(format!("{pool}: all {held} of {limit} job slots are held"))
    };
    let held = match acquire().await? {
        Acquired::Taken { .. } => return Ok(true),
        Acquired::AlreadyHeld { .. } => return Ok(false),
        Acquired::Full { held } => held,
    };
    if admission.reclaim(&pool, now).await?.is_empty() {
        return Err(full(held));
    }
    match acquire().await? {
        Acquired::Taken { .. } => Ok(true),
        Acquired::AlreadyHeld { .. } => Ok(false),
        Acquired::Full { held } => Err(full(held)),
    }
}

/// Gives `holder`'s job slot of `rules`' pool back (nothing when it holds none).
pub async fn give_back_job_slot(
    admission: &impl Admission,
    rules: &Rules,
    holder: &str,
) -> Result<(), Error> {
    admission.release(&rules.pool(), holder).await.map(|_| ())
}

/// How many times a caller that woke too late takes another call slot before giving up.
const LATE_TURNS: usize = 3;

/// Waits for a slot of `pacer` (spaced by `pace`), asked for `lead_ms` ahead of now: [`Turn::Ours`]
/// once the slot has come (call now), [`Turn::Busy`] when every slot within the horizon is
/// taken, [`Turn::Late`] when the caller woke too late for [`LATE_TURNS`] slots in a row (each
/// time asking twice as far ahead as taking the last one took).
pub async fn take_turn(
    admission: &impl Admission,
    timer: &impl Timer,
    pacer: &str,
    pace: &Pace,
    lead_ms: i64,
) -> Result<Turn, Error> {
    let (turn, _) =
        take_turn_with(admission, timer, pacer, pace, lead_ms, async { Ok(()) }).await?;
    Ok(turn)
}

/// [`take_turn`], doing `meanwhile` once the first slot is booked and before waiting for it: its
/// time is spent in the slot's lead, not between the slot and the call (a call sent later than
/// `max_late` after its slot is outside what the slots are spaced for). It is done once, and
/// not at all when the first booking finds every slot taken (`None`); its error is returned
/// as is, the booked slot unused. If it outlasts the lead, the caller is late and takes
/// another slot, as after a slow booking.
pub async fn take_turn_with<R>(
    admission: &impl Admission,
    timer: &impl Timer,
    pacer: &str,
    pace: &Pace,
    lead_ms: i64,
    meanwhile: impl Future<Output = Result<R, Error>>,
) -> Result<(Turn, Option<R>), Error> {
    let (mut lead, mut meanwhile, mut done) = (lead_ms, Some(meanwhile), None);
    for _ in 0..LATE_TURNS {
        let asked = timer.now_ms();
        match admission.take_slot(pacer, pace, asked + lead).await? {
            Taken::Busy { .. } => return Ok((Turn::Busy, done)),
            Taken::Slot { at_ms, .. } => {
                let took = timer.now_ms() - asked;
                if let Some(work) = meanwhile.take() {
                    done = Some(work.await?);
                }
                timer.sleep_until(at_ms).await;
                if usable(at_ms, timer.now_ms(), pace) {
                    return Ok((Turn::Ours, done));
                }
                // Taking it outlasted the lead (a slow store): ask further ahead.
                lead = lead.max(2 * took);
            }
        }
    }
    Ok((Turn::Late, done))
}

/// What waiting for a call slot came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// Call now.
    Ours,
    /// Every slot within the horizon is taken.
    Busy,
    /// The caller woke too late for [`LATE_TURNS`] slots in a row.
    Late,
}

impl Turn {
    /// `Ok` for [`Turn::Ours`]; otherwise `Transient.QuotaFull`, naming `pacer` and why (the
    /// caller comes back later, as the state machine's retry or the queue's redelivery).
    pub fn admitted(self, pacer: &str, horizon_ms: i64) -> Result<(), Error> {
        match self {
            Turn::Ours => Ok(()),
            Turn::Busy => Err(busy(pacer, horizon_ms)),
            Turn::Late => Err(Error::QuotaFull(format!(
                "{pacer}: woke too late for {LATE_TURNS} call slots in a row"
            ))),
        }
    }
}

/// `Transient.QuotaFull`: every slot of `pacer` within `horizon_ms` is taken.
pub fn busy(pacer: &str, horizon_ms: i64) -> Error {
    Error::QuotaFull(format!(
        "{pacer}: every call slot within {horizon_ms} ms is taken"
    ))
}

/// An [`Ocr`] provider whose calls take their turn first (see the module docs).
#[derive(Debug)]
pub struct AdmittedOcr<O, A, T> {
    inner: O,
    admission: A,
    timer: T,
    rules: Rules,
}

impl<O: Ocr, A: Admission, T: Timer> AdmittedOcr<O, A, T> {
    /// `inner` admitted through `admission`, waiting on `timer`.
    pub fn new(inner: O, admission: A, timer: T, rules: Rules) -> Self {
        AdmittedOcr {
            inner,
            admission,
            timer,
            rules,
        }
    }

    /// The wrapped provider.
    pub fn inner(&self) -> &O {
        &self.inner
    }

    /// The admission records.
    pub fn admission(&self) -> &A {
        &self.admission
    }

    /// The quotas in force: those recorded, or the provider's defaults when none are.
    pub async fn quotas(&self) -> Result<Quotas, Error> {
        self.rules.quotas(&self.admission).await
    }

    /// Waits for a call slot of `operation`. An operation without a quota needs no turn.
    async fn turn(&self, operation: &str, quotas: &Quotas) -> Result<Turn, Error> {
        let Some(&per_second) = quotas.tps.get(operation) else {
            return Ok(Turn::Ours);
        };
        let rules = &self.rules;
        let pace = rules.pace(per_second, quotas);
        let pacer = rules.pacer(operation);
        take_turn(&self.admission, &self.timer, &pacer, &pace, rules.lead_ms).await
    }

    /// Gives `holder`'s job slot back (nothing when it holds none).
    async fn give_back(&self, holder: &str) -> Result<(), Error> {
        give_back_job_slot(&self.admission, &self.rules, holder).await
    }
}

/// The turns of a poll's calls after its first (a long job's further answers), at the same
/// pacer as the first: a job read in many answers keeps to the quota as many polls would.
struct NextAnswers<'a, O, A, T> {
    ocr: &'a AdmittedOcr<O, A, T>,
    quotas: &'a Quotas,
}

impl<O: Ocr, A: Admission, T: Timer> CallPace for NextAnswers<'_, O, A, T> {
    async fn next_call(&self) -> Result<(), Error> {
        let rules = &self.ocr.rules;
        let turn = self.ocr.turn(rules.get, self.quotas).await?;
        turn.admitted(&rules.pacer(rules.get), rules.horizon_ms)
    }
}

impl<O: Ocr, A: Admission, T: Timer> Ocr for AdmittedOcr<O, A, T> {
    async fn start(
        &self,
        operation: &OperationId,
        document: &ObjectRef,
        tag: &str,
    ) -> Result<String, Error> {
        let quotas = self.quotas().await?;
        let holder = operation.as_str();
        let rules = &self.rules;
        take_job_slot(&self.admission, &self.timer, rules, holder, &quotas).await?;
        let pacer = self.rules.pacer(self.rules.start);
        let turn = self.turn(self.rules.start, &quotas).await?;
        turn.admitted(&pacer, self.rules.horizon_ms)?;
        match self.inner.start(operation, document, tag).await {
            Ok(job) => Ok(job),
            // No job can exist: the provider refused the document itself. (A conflict may name
            // an earlier job of the same token, which keeps the slot.)
            Err(e) if e.family() == Family::Business => {
                self.give_back(holder).await?;
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    async fn poll(
        &self,
        operation: &OperationId,
        job_id: &str,
        max_pages: u32,
        _: &impl CallPace,
    ) -> Result<OcrPoll, Error> {
        let quotas = self.quotas().await?;
        // No turn now: not known to be done; the workflow polls again.
        if self.turn(self.rules.get, &quotas).await? != Turn::Ours {
            return Ok(OcrPoll::InProgress);
        }
        // A long job's further answers each take a turn of their own.
        let pace = NextAnswers {
            ocr: self,
            quotas: &quotas,
        };
        let polled = self.inner.poll(operation, job_id, max_pages, &pace).await;
        // A job that ended, read or refused as too long, holds its slot no more.
        let ended = match &polled {
            Ok(polled) => !matches!(polled, OcrPoll::InProgress),
            Err(e) => e.family() == Family::Business,
        };
        if ended {
            self.give_back(operation.as_str()).await?;
        }
        polled
    }

    async fn detect(
        &self,
        operation: &OperationId,
        document: &ObjectRef,
        booked_at_ms: Option<i64>,
    ) -> Result<Option<OcrDocument>, Error> {
        let quotas = self.quotas().await?;
        let (rules, timer) = (&self.rules, &self.timer);
        if let (Some(at_ms), Some(&per_second)) = (booked_at_ms, quotas.tps.get(rules.detect)) {
            // Within the horizon only: a slot further out is none this pacer handed out. Come
            // too late for it (a redrive, a retry, a slow start): a turn, as any read takes.
            if at_ms <= timer.now_ms() + rules.horizon_ms {
                timer.sleep_until(at_ms).await;
                if usable(at_ms, timer.now_ms(), &rules.pace(per_second, &quotas)) {
                    return self.inner.detect(operation, document, booked_at_ms).await;
                }
            }
        }
        let pacer = rules.pacer(rules.detect);
        let turn = self.turn(rules.detect, &quotas).await?;
        turn.admitted(&pacer, rules.horizon_ms)?;
        self.inner.detect(operation, document, booked_at_ms).await
    }

    fn engine(&self) -> &'static str {
        self.inner.engine()
    }
}

pub mod starts;
#[cfg(test)]
mod tests;
