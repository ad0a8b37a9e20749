//! [`AdmittedOcr`] over the scripted provider, the in-memory records and a virtual clock: the
//! calls the provider sees keep to its quotas, and job slots are taken and given back as the
//! module docs say.

use std::sync::Mutex;

use super::*;
use crate::admission::DEFAULT_ARRIVAL_JITTER_MS;
use crate::ids::{OperationId, Tenant};
use crate::memory::{test_run, FakeOcr, MemoryAdmission, VirtualTimer};
use crate::ocr::OcrDocument;
use crate::ports::Unpaced;

/// The scripted provider and the virtual clock, with the instant of every call it saw.
#[derive(Debug, Default)]
struct Clocked {
    ocr: FakeOcr,
    timer: VirtualTimer,
    starts_at: Mutex<Vec<i64>>,
    polls_at: Mutex<Vec<i64>>,
    detects_at: Mutex<Vec<i64>>,
    /// The calls one poll makes (0 and 1: one).
    answers_per_poll: Mutex<usize>,
}

/// A provider whose clock starts at `now_ms`.
fn clocked(now_ms: i64) -> Clocked {
    Clocked {
        timer: VirtualTimer::at(now_ms),
        ..Default::default()
    }
}

impl Ocr for &Clocked {
    async fn start(&self, op: &OperationId, doc: &ObjectRef, tag: &str) -> Result<String, Error> {
        self.starts_at.lock().unwrap().push(self.timer.now_ms());
        self.ocr.start(op, doc, tag).await
    }

    /// A poll of `answers_per_poll` calls (a long job's answers), each call after the first
    /// waiting for `pace`.
    async fn poll(
        &self,
        op: &OperationId,
        job: &str,
        max_pages: u32,
        pace: &impl CallPace,
    ) -> Result<OcrPoll, Error> {
        self.polls_at.lock().unwrap().push(self.timer.now_ms());
        let answers = *self.answers_per_poll.lock().unwrap();
        for _ in 1..answers {
            pace.next_call().await?;
            self.polls_at.lock().unwrap().push(self.timer.now_ms());
        }
        self.ocr.poll(op, job, max_pages, pace).await
    }

    async fn detect(
        &self,
        op: &OperationId,
        doc: &ObjectRef,
        booked_at_ms: Option<i64>,
    ) -> Result<Option<OcrDocument>, Error> {
        self.detects_at.lock().unwrap().push(self.timer.now_ms());
        self.ocr.detect(op, doc, booked_at_ms).await
    }

    fn engine(&self) -> &'static str {
        self.ocr.engine()
    }
}

fn op(n: usize) -> OperationId {
    let run = test_run(
        &Tenant::parse("acme").unwrap(),
        &format!("in/{n}.pdf"),
        "v1",
    );
    OperationId::new(&run, "ocr", None)
}

fn doc(n: usize) -> ObjectRef {
    ObjectRef::new("raw", format!("in/{n}.pdf"))
}

fn quotas(starts: u32, gets: u32, jobs: u32) -> Quotas {
    Quotas {
        tps: [(START_TEXT_DETECTION, starts), (GET_TEXT_DETECTION, gets)]
            .into_iter()
            .map(|(o, n)| (o.to_string(), n))
            .collect(),
        max_jobs: jobs,
        arrival_jitter_ms: DEFAULT_ARRIVAL_JITTER_MS,
    }
}

/// The most calls among `at` in any one-second window `(t - 1000, t]`.
fn busiest_second(at: &[i64]) -> usize {
    at.iter()
        .map(|&t| at.iter().filter(|&&u| u > t - 1000 && u <= t).count())
        .max()
        .unwrap_or(0)
}

/// `provider` admitted on its own clock under the quotas `q`, recorded.
async fn admitted(
    provider: &Clocked,
    q: Quotas,
) -> AdmittedOcr<&Clocked, MemoryAdmission, &VirtualTimer> {
    let admission = MemoryAdmission::default();
    admission.set_quotas("textract", &q).await.unwrap();
    AdmittedOcr::new(provider, admission, &provider.timer, Rules::textract())
}

#[tokio::test]
async fn starts_at_once_reach_the_provider_within_its_calls_a_second() {
    let provider = clocked(1_000_000);
    let timer = &provider.timer;
    let ocr = admitted(&provider, quotas(5, 25, 600)).await;
    let (mut started, mut refused) = (0, 0);
    for n in 0..40 {
        // Everyone arrives at the same instant; those beyond the horizon come back later.
        timer.set(1_000_000);
        match ocr.start(&op(n), &doc(n), "t").await {
            Ok(_) => started += 1,
            Err(Error::QuotaFull(_)) => refused += 1,
            Err(e) => panic!("{e}"),
        }
    }
    let at = provider.starts_at.lock().unwrap().clone();
    assert_eq!(
        at.len(),
        started,
        "the provider saw every admitted start, and only those"
    );
    // 5 a second with 50 ms lateness and 50 ms arrival jitter is a slot every 220 ms: 23
    // within the 5 s horizon.
    assert_eq!(started, 23);
    assert!(refused > 0, "the rest were told to come back");
    assert!(
        busiest_second(&at) <= 5,
        "{} in one second",
        busiest_second(&at)
    );
}

#[tokio::test]
async fn a_start_beyond_the_horizon_asks_the_provider_nothing_and_keeps_its_job_slot() {
    let provider = clocked(0);
    let timer = &provider.timer;
    let ocr = admitted(&provider, quotas(1, 25, 600)).await;
    // One a second with 50 ms lateness and 50 ms jitter is a slot every 1,100 ms: five within
    // the 5 s horizon (at 0, 1.1, 2.2, 3.3 and 4.4 s) for callers all arriving at 0.
    let mut answers = Vec::new();
    for n in 0..6 {
        timer.set(0);
        answers.push(ocr.start(&op(n), &doc(n), "t").await);
    }
    let last = answers.pop().unwrap();
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    assert_eq!(last.unwrap_err().name(), "Transient.QuotaFull");
    assert_eq!(*provider.ocr.start_calls.lock().unwrap(), 5);
    // Its retry comes back to the job slot it holds: one slot per operation.
    assert_eq!(ocr.admission().held("textract-jobs"), 6);
    timer.advance(10_000);
    ocr.start(&op(5), &doc(5), "t").await.unwrap();
    assert_eq!(ocr.admission().held("textract-jobs"), 6);
}

#[tokio::test]
async fn jobs_beyond_the_limit_wait_for_one_to_end() {
    let provider = clocked(0);
    for n in 0..3 {
        let result = OcrPoll::Succeeded(OcrDocument::from_lines(&["x"], 0.99));
        provider
            .ocr
            .results
            .lock()
            .unwrap()
            .insert(doc(n).key, result);
    }
    let ocr = admitted(&provider, quotas(15, 25, 2)).await;
    let a = ocr.start(&op(0), &doc(0), "t").await.unwrap();
    ocr.start(&op(1), &doc(1), "t").await.unwrap();
    let full = ocr.start(&op(2), &doc(2), "t").await.unwrap_err();
    assert_eq!(full.name(), "Transient.QuotaFull");
    assert!(full.to_string().contains("all 2 of 2"), "{full}");
    assert_eq!(provider.ocr.job_count(), 2, "the third was not asked for");

    // A poll that finds the job running keeps the slot; one that finds it ended gives it back.
    *provider.ocr.pending_polls.lock().unwrap() = 1;
    assert_eq!(
        ocr.poll(&op(0), &a, 100, &Unpaced).await.unwrap(),
        OcrPoll::InProgress
    );
    assert_eq!(ocr.admission().held("textract-jobs"), 2);
    assert!(matches!(
        ocr.poll(&op(0), &a, 100, &Unpaced).await.unwrap(),
        OcrPoll::Succeeded(_)
    ));
    assert_eq!(ocr.admission().held("textract-jobs"), 1);
    ocr.start(&op(2), &doc(2), "t").await.unwrap();
    assert_eq!(provider.ocr.job_count(), 3);
}

#[tokio::test]
async fn a_job_refused_as_too_long_gives_its_slot_back_and_a_failed_poll_keeps_it() {
    let provider = clocked(0);
    let two_pages = OcrDocument {
        engine: "test".into(),
        pages: [1, 2]
            .map(|number| crate::ocr::Page {
                number,
                lines: vec![],
            })
            .to_vec(),
    };
    let result = OcrPoll::Succeeded(two_pages);
    provider
        .ocr
        .results
        .lock()
        .unwrap()
        .insert(doc(0).key, result);
    let ocr = admitted(&provider, quotas(15, 25, 1)).await;
    let job = ocr.start(&op(0), &doc(0), "t").await.unwrap();

    // A poll the provider cannot answer (no such job here) is no end of the job.
    let lost = ocr
        .poll(&op(0), "no-such-job", 1, &Unpaced)
        .await
        .unwrap_err();
    assert_eq!(lost.family(), crate::error::Family::Fatal);
    assert_eq!(ocr.admission().held("textract-jobs"), 1);

    let refused = ocr.poll(&op(0), &job, 1, &Unpaced).await.unwrap_err();
    assert_eq!(refused.name(), "Business.TooManyPages");
    assert_eq!(ocr.admission().held("textract-jobs"), 0);
}

#[tokio::test]
async fn a_crashed_holders_slot_is_reclaimed_after_its_lease_and_not_before() {
    let provider = clocked(0);
    let timer = &provider.timer;
    let ocr = admitted(&provider, quotas(15, 25, 1)).await;
    ocr.start(&op(0), &doc(0), "t").await.unwrap(); // its run never polls again
    timer.advance(1_700_000);
    assert_eq!(
        ocr.start(&op(1), &doc(1), "t").await.unwrap_err().name(),
        "Transient.QuotaFull"
    );
    timer.advance(100_000); // past the 1,800 s lease
    ocr.start(&op(1), &doc(1), "t").await.unwrap();
    assert_eq!(ocr.admission().held("textract-jobs"), 1);
}

#[tokio::test]
async fn a_refused_document_gives_its_slot_back_and_a_lost_answer_or_a_conflict_keeps_it() {
    let provider = clocked(0);
    let ocr = admitted(&provider, quotas(15, 25, 5)).await;
    *provider.ocr.fail_starts.lock().unwrap() = vec![Error::OcrFailed("bad".into())];
    let refused = ocr.start(&op(0), &doc(0), "t").await.unwrap_err();
    assert_eq!(refused.name(), "Business.OcrFailed");
    assert_eq!(ocr.admission().held("textract-jobs"), 0);

    *provider.ocr.lose_start_answers.lock().unwrap() = 1;
    let lost = ocr.start(&op(1), &doc(1), "t").await.unwrap_err();
    assert_eq!(lost.name(), "Ambiguous.OutcomeUnknown");
    assert_eq!(
        ocr.admission().held("textract-jobs"),
        1,
        "its job may exist"
    );
    *provider.ocr.fail_starts.lock().unwrap() = vec![Error::Dependency("503".into())];
    let transient = ocr.start(&op(2), &doc(2), "t").await.unwrap_err();
    assert_eq!(transient.family(), Family::Transient);
    assert_eq!(ocr.admission().held("textract-jobs"), 2);
    // A conflict may name an earlier job of the same token: its slot stays.
    let conflict = Error::ParametersChanged(op(3).to_string());
    *provider.ocr.fail_starts.lock().unwrap() = vec![conflict];
    let refused = ocr.start(&op(3), &doc(3), "t").await.unwrap_err();
    assert_eq!(refused.name(), "Conflict.ParametersChanged");
    assert_eq!(ocr.admission().held("textract-jobs"), 3);
}

#[tokio::test]
async fn a_poll_without_a_free_call_slot_answers_in_progress_without_asking() {
    let provider = clocked(0);
    let timer = &provider.timer;
    provider.ocr.results.lock().unwrap().insert(
        doc(0).key,
        OcrPoll::Succeeded(OcrDocument::from_lines(&["x"], 0.99)),
    );
    let ocr = admitted(&provider, quotas(15, 1, 5)).await;
    let job = ocr.start(&op(0), &doc(0), "t").await.unwrap();
    let mut answers = Vec::new();
    for _ in 0..8 {
        timer.set(0); // every poll arrives at 0
        answers.push(ocr.poll(&op(0), &job, 100, &Unpaced).await.unwrap());
    }
    let asked = provider.polls_at.lock().unwrap().len();
    assert_eq!(asked, 5, "a slot every 1,050 ms within the 5 s horizon");
    assert!(answers[..5]
        .iter()
        .all(|a| matches!(a, OcrPoll::Succeeded(_))));
    assert!(answers[5..].iter().all(|a| *a == OcrPoll::InProgress));
    assert!(busiest_second(&provider.polls_at.lock().unwrap()) <= 1);
}

#[tokio::test]
async fn a_long_jobs_answers_each_take_a_call_slot_and_keep_to_the_quota() {
    let provider = clocked(0);
    for n in 0..2 {
        let read = OcrPoll::Succeeded(OcrDocument::from_lines(&["x"], 0.99));
        provider
            .ocr
            .results
            .lock()
            .unwrap()
            .insert(doc(n).key, read);
    }
    *provider.answers_per_poll.lock().unwrap() = 12;
    let ocr = admitted(&provider, quotas(15, 5, 5)).await;
    let jobs = [
        ocr.start(&op(0), &doc(0), "t").await.unwrap(),
        ocr.start(&op(1), &doc(1), "t").await.unwrap(),
    ];

    // Two long jobs' polls at once: 24 calls under 5 a second.
    let ops = [op(0), op(1)];
    let (a, b) = tokio::join!(
        ocr.poll(&ops[0], &jobs[0], 100, &Unpaced),
        ocr.poll(&ops[1], &jobs[1], 100, &Unpaced)
    );

    assert!(matches!(a, Ok(OcrPoll::Succeeded(_))), "{a:?}");
    assert!(matches!(b, Ok(OcrPoll::Succeeded(_))), "{b:?}");
    let calls = provider.polls_at.lock().unwrap().clone();
    assert_eq!(calls.len(), 24);
    assert!(busiest_second(&calls) <= 5, "{calls:?}");
}

#[tokio::test]
async fn a_caller_that_wakes_late_takes_another_slot_and_a_late_poll_is_not_an_error() {
    let provider = clocked(0);
    let timer = &provider.timer;
    timer
        .oversleep_ms
        .store(60, std::sync::atomic::Ordering::SeqCst); // beyond max_late 50
    let ocr = admitted(&provider, quotas(15, 25, 5)).await;
    let waking_late = ocr.start(&op(0), &doc(0), "t").await.unwrap_err();
    assert_eq!(waking_late.name(), "Transient.QuotaFull");
    assert!(
        waking_late.to_string().contains("too late"),
        "{waking_late}"
    );
    assert_eq!(*provider.ocr.start_calls.lock().unwrap(), 0);
    timer
        .oversleep_ms
        .store(40, std::sync::atomic::Ordering::SeqCst); // within it
    let job = ocr.start(&op(0), &doc(0), "t").await.unwrap();
    // A poll that cannot get a turn in time is not an error: not known to be done yet.
    timer
        .oversleep_ms
        .store(60, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        ocr.poll(&op(0), &job, 100, &Unpaced).await.unwrap(),
        OcrPoll::InProgress
    );
    assert!(provider.polls_at.lock().unwrap().is_empty());
}

#[tokio::test]
async fn without_recorded_quotas_the_providers_defaults_hold_and_a_zero_is_refused() {
    let provider = clocked(0);
    let timer = &provider.timer;
    let ocr = AdmittedOcr::new(
        &provider,
        MemoryAdmission::default(),
        &timer,
        Rules::textract(),
    );
    assert_eq!(ocr.quotas().await.unwrap(), Quotas::textract_defaults());
    // Admission is on: each start holds a job slot and keeps AWS's 15 starts a second.
    for n in 0..30 {
        timer.set(0);
        ocr.start(&op(n), &doc(n), "t").await.unwrap();
    }
    assert_eq!(ocr.admission().held("textract-jobs"), 30);
    let at = provider.starts_at.lock().unwrap().clone();
    assert_eq!(at.len(), 30);
    assert!(busiest_second(&at) <= 15, "{}", busiest_second(&at));
    let zero = quotas(0, 25, 5);
    let refused = ocr.admission().set_quotas("textract", &zero).await;
    assert_eq!(refused.unwrap_err().name(), "Fatal.BadInput");
}

/// The in-memory records behind a store that takes `take_ms` to answer a slot request, and the
/// next of `acquire_ms` (none left: no time) to answer a job slot's (the virtual clock moves on
/// meanwhile), as a loaded DynamoDB would; after `slots_left` slot requests (`None`: no limit),
/// every slot is taken, as if other callers had taken them meanwhile.
pub(super) struct SlowStore<'a> {
    pub records: MemoryAdmission,
    pub timer: &'a VirtualTimer,
    pub take_ms: i64,
    pub acquire_ms: Mutex<Vec<i64>>,
    pub slots_left: Mutex<Option<u32>>,
}

impl Admission for SlowStore<'_> {
    async fn take_slot(&self, pacer: &str, pace: &Pace, now_ms: i64) -> Result<Taken, Error> {
        self.timer.advance(self.take_ms);
        if let Some(left) = self.slots_left.lock().unwrap().as_mut() {
            if *left == 0 {
                let retry_at_ms = now_ms + pace.interval_ms;
                return Ok(Taken::Busy { retry_at_ms });
            }
            *left -= 1;
        }
        self.records.take_slot(pacer, pace, now_ms).await
    }
    async fn acquire(
        &self,
        pool: &str,
        holder: &str,
        limit: u32,
        now: i64,
        lease: i64,
    ) -> Result<Acquired, Error> {
        let delay = {
            let mut delays = self.acquire_ms.lock().unwrap();
            (!delays.is_empty()).then(|| delays.remove(0))
        };
        self.timer.advance(delay.unwrap_or(0));
        self.records.acquire(pool, holder, limit, now, lease).await
    }
    async fn release(
        &self,
        pool: &str,
        holder: &str,
    ) -> Result<crate::admission::slots::Released, Error> {
        self.records.release(pool, holder).await
    }
    async fn reclaim(&self, pool: &str, now: i64) -> Result<Vec<String>, Error> {
        self.records.reclaim(pool, now).await
    }
    async fn quotas(&self, provider: &str) -> Result<Option<Quotas>, Error> {
        self.records.quotas(provider).await
    }
    async fn set_quotas(&self, provider: &str, quotas: &Quotas) -> Result<(), Error> {
        self.records.set_quotas(provider, quotas).await
    }
}

#[tokio::test]
async fn a_slot_store_slower_than_the_lead_makes_the_caller_ask_further_ahead() {
    let provider = clocked(0);
    let timer = &provider.timer;
    // Taking a slot takes 400 ms: a slot asked for 250 ms ahead is 150 ms past when it is ours.
    let slow = SlowStore {
        records: MemoryAdmission::default(),
        timer,
        take_ms: 400,
        acquire_ms: Mutex::default(),
        slots_left: Mutex::default(),
    };
    let recorded = Quotas::textract_defaults();
    slow.records
        .set_quotas("textract", &recorded)
        .await
        .unwrap();
    let ocr = AdmittedOcr::new(&provider, slow, timer, Rules::textract());
    let job = ocr.start(&op(0), &doc(0), "t").await;
    assert!(job.is_ok(), "{job:?}");
    assert_eq!(*provider.ocr.start_calls.lock().unwrap(), 1);
    // Its call landed within max_late of the slot it was given.
    let called = provider.starts_at.lock().unwrap()[0];
    assert!(
        called >= 400 + 400,
        "the second slot, asked for 800 ms ahead: {called}"
    );
}

#[tokio::test]
async fn synchronous_reads_at_once_keep_to_their_own_quota_and_hold_no_job_slot() {
    // given 2 reads a second allowed, and a job pool of one slot, held
    let provider = clocked(0);
    let timer = &provider.timer;
    let mut q = quotas(1, 25, 1);
    q.tps.insert(DETECT_TEXT.to_string(), 2);
    let ocr = admitted(&provider, q).await;
    let page = OcrPoll::Succeeded(OcrDocument::from_lines(&["x"], 0.99));
    for n in 0..20 {
        provider
            .ocr
            .results
            .lock()
            .unwrap()
            .insert(doc(n).key, page.clone());
    }
    ocr.start(&op(99), &doc(99), "t").await.unwrap();

    // when twenty one-page documents are read at the same instant
    let (mut read, mut later) = (0, 0);
    for n in 0..20 {
        timer.set(0);
        match ocr.detect(&op(n), &doc(n), None).await {
            Ok(Some(_)) => read += 1,
            Err(Error::QuotaFull(_)) => later += 1,
            other => panic!("{other:?}"),
        }
    }

    // then the provider saw them spaced for 2 a second (a slot every 550 ms: 10 within the
    // 5 s horizon), the rest were told to come back, and no job slot was needed or taken
    let at = provider.detects_at.lock().unwrap().clone();
    assert_eq!((read, later, at.len()), (10, 10, 10));
    assert!(busiest_second(&at) <= 2, "{at:?}");
    assert_eq!(ocr.admission().held("textract-jobs"), 1);
}

#[tokio::test]
async fn a_read_booked_at_its_start_is_made_at_its_slot_and_one_come_too_late_takes_a_turn() {
    // given a one-page document and a pacer whose every slot is taken (none to take now)
    let provider = clocked(0);
    let timer = &provider.timer;
    let page = OcrPoll::Succeeded(OcrDocument::from_lines(&["x"], 0.99));
    provider
        .ocr
        .results
        .lock()
        .unwrap()
        .insert(doc(0).key, page);
    let store = SlowStore {
        records: MemoryAdmission::default(),
        timer,
        take_ms: 0,
        acquire_ms: Mutex::default(),
        slots_left: Mutex::new(Some(0)),
    };
    let ocr = AdmittedOcr::new(&provider, store, timer, Rules::textract());

    // when its read comes with the slot ingest booked 1 s ahead, then with none
    let booked = ocr.detect(&op(0), &doc(0), Some(1_000)).await.unwrap();
    let unbooked = ocr.detect(&op(0), &doc(0), None).await.unwrap_err();

    // then the booked read waited for its slot and took no turn; the other found none
    assert!(booked.is_some());
    assert_eq!(*provider.detects_at.lock().unwrap(), vec![1_000]);
    assert_eq!(unbooked.name(), "Transient.QuotaFull", "{unbooked}");

    // and a read come later than its slot allows (a retry, a redrive), or with a slot beyond
    // the horizon (none the pacer handed out), takes a turn: refused here, none being free
    timer.set(2_000);
    for booked_at_ms in [1_900, 2_000 + 60_000] {
        let turn = ocr.detect(&op(0), &doc(0), Some(booked_at_ms)).await;
        assert_eq!(turn.unwrap_err().name(), "Transient.QuotaFull");
    }
    // and one with a slot just passed, within max_late, reads at once
    let late_within = ocr.detect(&op(0), &doc(0), Some(1_960)).await.unwrap();
    assert!(late_within.is_some());
    assert_eq!(*provider.detects_at.lock().unwrap(), vec![1_000, 2_000]);
}
