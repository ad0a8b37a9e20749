//! [`PacedStarts`] over the in-memory engine, records and a virtual clock: starts keep to the
//! start quota and to the job pool, and the OCR step finds the slot its run's start took.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::admission::{Quotas, START_TEXT_DETECTION};
use crate::admitted::tests::SlowStore;
use crate::admitted::AdmittedOcr;
use crate::ids::OperationId;
use crate::ids::Tenant;
use crate::memory::{test_run, FakeOcr, MemoryAdmission, MemoryWorkflow, VirtualTimer};
use crate::model::run::ObjectRef;
use crate::ports::{Ocr, OcrPoll, Unpaced};

/// The engine, with the instant of every start it saw.
#[derive(Default)]
struct Clocked {
    engine: MemoryWorkflow,
    timer: VirtualTimer,
    at: Mutex<Vec<i64>>,
}

impl Workflow for &Clocked {
    async fn start(&self, name: &str, input: &Value) -> Result<Started, Error> {
        self.at.lock().unwrap().push(self.timer.now_ms());
        self.engine.start(name, input).await
    }
    async fn running(&self, name: &str) -> Result<bool, Error> {
        self.engine.running(name).await
    }
    async fn exists(&self, name: &str) -> Result<bool, Error> {
        self.engine.exists(name).await
    }
}

/// The run id of upload `n` (ingest names each execution by its run).
fn run(n: usize) -> String {
    let tenant = Tenant::parse("acme").unwrap();
    test_run(&tenant, &format!("in/{n}.pdf"), "v1").to_string()
}

/// The job slot holder of upload `n`'s run: its OCR operation.
fn holder(n: usize) -> OperationId {
    Step::Ocr.operation(&RunId::parse(&run(n)).unwrap())
}

fn starts_a_second(n: u32) -> Quotas {
    Quotas {
        tps: BTreeMap::from([(START_TEXT_DETECTION.to_string(), n)]),
        ..Quotas::textract_defaults()
    }
}

async fn paced(
    engine: &Clocked,
    quotas: Option<Quotas>,
) -> PacedStarts<&Clocked, MemoryAdmission, &VirtualTimer> {
    let admission = MemoryAdmission::default();
    if let Some(q) = quotas {
        admission.set_quotas("textract", &q).await.unwrap();
    }
    PacedStarts::new(engine, admission, &engine.timer, Rules::textract())
}

#[tokio::test]
async fn starts_at_once_are_spaced_for_the_start_quota_and_the_rest_told_to_come_back() {
    let engine = Clocked::default();
    let workflow = paced(&engine, Some(starts_a_second(2))).await;
    let (mut started, mut later) = (0, Vec::new());
    for n in 0..20 {
        engine.timer.set(0); // every event arrives at once
        match workflow.start(&run(n), &json!({})).await {
            Ok(Started::New) => started += 1,
            Ok(other) => panic!("{other:?}"),
            Err(e) => later.push(e),
        }
    }
    let at = engine.at.lock().unwrap().clone();
    assert_eq!(
        at.len(),
        started,
        "the engine saw every admitted start only"
    );
    // 2 a second with 50 ms lateness and 50 ms jitter: a slot every 550 ms, 10 within 5 s.
    assert_eq!(started, 10);
    assert!(at.windows(2).all(|w| w[1] - w[0] >= 550), "{at:?}");
    assert!(
        later
            .iter()
            .all(|e| e.name() == "Transient.QuotaFull"
                && e.to_string().contains("textract-executions")),
        "{later:?}"
    );
    assert_eq!(later.len(), 10);
}

#[tokio::test]
async fn with_no_quota_recorded_starts_keep_to_aws_default() {
    let engine = Clocked::default();
    let workflow = paced(&engine, None).await;
    for n in 0..30 {
        engine.timer.set(0);
        workflow.start(&run(n), &json!({})).await.unwrap();
    }
    let at = engine.at.lock().unwrap().clone();
    // 15 a second (AWS's default) with 100 ms of lateness and jitter: every 74 ms.
    assert!(at.windows(2).all(|w| w[1] - w[0] >= 74), "{at:?}");
    assert!(at.iter().filter(|&&t| t < 1000).count() <= 15, "{at:?}");
}

#[tokio::test]
async fn an_unpaced_start_quota_starts_at_once_and_running_is_never_paced() {
    let engine = Clocked::default();
    let quotas = Quotas {
        tps: BTreeMap::new(),
        ..Quotas::textract_defaults()
    };
    let workflow = paced(&engine, Some(quotas)).await;
    for n in 0..5 {
        workflow.start(&run(n), &json!({})).await.unwrap();
    }
    assert_eq!(*engine.at.lock().unwrap(), vec![0; 5]);
    assert!(workflow.running(&run(0)).await.unwrap());
    assert!(!workflow.running(&run(9)).await.unwrap());
}

/// At most `jobs` jobs at once, starts unpaced in effect (100 a second).
fn jobs(n: u32) -> Quotas {
    Quotas {
        max_jobs: n,
        ..starts_a_second(100)
    }
}

/// Starts uploads `uploads` one after another; the errors' names, `None` for a start.
async fn start_all<W: Workflow>(
    workflow: &W,
    uploads: std::ops::Range<usize>,
) -> Vec<Option<String>> {
    let mut outcomes = Vec::new();
    for n in uploads {
        let started = workflow.start(&run(n), &json!({})).await;
        outcomes.push(started.err().map(|e| e.to_string()));
    }
    outcomes
}

#[tokio::test]
async fn a_full_job_pool_holds_starts_back_and_the_ocr_step_finds_its_runs_slot_held() {
    let engine = Clocked::default();
    let admission = MemoryAdmission::default();
    admission.set_quotas("textract", &jobs(2)).await.unwrap();
    let workflow = PacedStarts::new(&engine, &admission, &engine.timer, Rules::textract());
    let pool = Rules::textract().pool();

    let outcomes = start_all(&workflow, 0..4).await;
    assert_eq!(outcomes[..2], [None, None], "{outcomes:?}");
    for refused in &outcomes[2..] {
        let refused = refused.as_deref().unwrap_or_default();
        assert!(
            refused.contains("textract-jobs: all 2 of 2"),
            "{outcomes:?}"
        );
    }
    assert_eq!(engine.at.lock().unwrap().len(), 2, "only two executions");
    assert_eq!(admission.held(&pool), 2);

    // The OCR step of run 0 asks for the slot its start took: held already, not a third.
    let ocr = AdmittedOcr::new(
        FakeOcr::default(),
        &admission,
        &engine.timer,
        Rules::textract(),
    );
    let doc = |n: usize| ObjectRef::new("raw", format!("in/{n}.pdf"));
    let job = ocr.start(&holder(0), &doc(0), "t").await.unwrap();
    assert_eq!(admission.held(&pool), 2);
    // A run whose execution took none (a reprocess) waits for one, as before.
    let waits = ocr.start(&holder(9), &doc(9), "t").await.unwrap_err();
    assert_eq!(waits.name(), "Transient.QuotaFull", "{waits}");

    // Run 0's job ends: its slot comes back, and the next upload's execution starts.
    ocr.inner()
        .results
        .lock()
        .unwrap()
        .insert(doc(0).key, OcrPoll::Failed("unreadable".into()));
    ocr.poll(&holder(0), &job, 100, &Unpaced).await.unwrap();
    assert_eq!(admission.held(&pool), 1);
    assert_eq!(
        start_all(&workflow, 2..4).await,
        [None, Some(outcomes[3].clone().unwrap())]
    );
    assert_eq!(engine.at.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_slot_is_given_back_when_no_job_can_follow_and_kept_when_the_answer_was_lost() {
    let engine = Clocked::default();
    let admission = MemoryAdmission::default();
    admission.set_quotas("textract", &jobs(5)).await.unwrap();
    let workflow = PacedStarts::new(&engine, &admission, &engine.timer, Rules::textract());
    let pool = Rules::textract().pool();

    // A duplicate delivery of an upload whose run's job had ended (its slot given back): the
    // execution exists, so the slot taken again is given back at once.
    workflow.start(&run(0), &json!({})).await.unwrap();
    admission.release(&pool, holder(0).as_str()).await.unwrap();
    let again = workflow.start(&run(0), &json!({})).await.unwrap();
    assert_eq!(again, Started::AlreadyExists);
    assert_eq!(admission.held(&pool), 0);

    // Refused outright (no execution can exist): given back.
    let refused = Error::Internal("state machine does not exist".into());
    engine.engine.fail_starts.lock().unwrap().push(refused);
    assert!(workflow.start(&run(1), &json!({})).await.is_err());
    assert_eq!(admission.held(&pool), 0);

    // The answer lost (the execution may run): kept, and the redelivery finds it its own.
    let lost = Error::OutcomeUnknown("StartExecution: timed out".into());
    engine.engine.fail_starts.lock().unwrap().push(lost);
    assert!(workflow.start(&run(2), &json!({})).await.is_err());
    assert_eq!(admission.held(&pool), 1);
    assert_eq!(
        workflow.start(&run(2), &json!({})).await.unwrap(),
        Started::New
    );
    assert_eq!(admission.held(&pool), 1);
}

/// The execution input of upload `n`'s run, its document of `pages` pages (as ingest read).
fn input_of(n: usize, pages: Option<u32>) -> Value {
    let tenant = Tenant::parse("acme").unwrap();
    let key = format!("in/{n}.png");
    let run = crate::model::run::RunInput {
        tenant: tenant.clone(),
        document_id: crate::ids::DocumentId::new(&tenant, &key),
        run_id: RunId::parse(&run(n)).unwrap(),
        raw: ObjectRef::new("raw", key),
        sha256: "ab".repeat(32),
        source_order: "1".into(),
        config_fingerprint: "pconfig".into(),
        reuse_ocr: None,
        pages,
        read_at_ms: None,
    };
    serde_json::to_value(ExecutionInput {
        run,
        ocr_wait_seconds: 60,
        review_wait_seconds: 60,
    })
    .unwrap()
}

/// The read slot booked in the input upload `n`'s execution was started with.
fn booked_read(engine: &Clocked, n: usize) -> Option<i64> {
    let executions = engine.engine.executions.lock().unwrap();
    let input = ExecutionInput::deserialize(&executions[&run(n)]).unwrap();
    input.run.read_at_ms
}

#[tokio::test]
async fn a_one_page_document_s_start_books_its_read_and_takes_no_job_slot() {
    // given a full job pool (one slot, held), 2 starts and 4 synchronous reads a second
    let engine = Clocked::default();
    let admission = MemoryAdmission::default();
    let quotas = Quotas {
        tps: BTreeMap::from([
            (START_TEXT_DETECTION.to_string(), 2),
            (crate::admission::DETECT_TEXT.to_string(), 4),
        ]),
        max_jobs: 1,
        ..Quotas::textract_defaults()
    };
    admission.set_quotas("textract", &quotas).await.unwrap();
    let workflow = PacedStarts::new(&engine, &admission, &engine.timer, Rules::textract());
    let pool = Rules::textract().pool();
    workflow.start(&run(0), &input_of(0, None)).await.unwrap();
    assert_eq!(admission.held(&pool), 1);

    // when one-page documents and a document of unknown pages arrive at once
    engine.timer.set(0);
    let job = workflow.start(&run(1), &input_of(1, Some(2))).await;
    let mut started = 0;
    for n in 2..40 {
        engine.timer.set(0);
        if workflow.start(&run(n), &input_of(n, Some(1))).await.is_ok() {
            started += 1;
        }
    }

    // then the job waits for a slot; the one-page documents start without one, each 1 s
    // before a slot of the read pacer booked for its run's read (in its input), the slots
    // spaced for the synchronous quota (4 a second with 50 ms of lateness and 50 of jitter:
    // every 275 ms, 19 within the 5 s horizon; 2 a second would be 10), not the start quota
    assert_eq!(job.unwrap_err().name(), "Transient.QuotaFull");
    assert_eq!(admission.held(&pool), 1);
    assert_eq!(started, 19);
    let at = engine.at.lock().unwrap().clone();
    let booked: Vec<i64> = (2..2 + started)
        .map(|n| booked_read(&engine, n).unwrap())
        .collect();
    assert_eq!(
        at[1..],
        booked.iter().map(|b| b - 1_000).collect::<Vec<_>>()
    );
    assert_eq!(booked[0], 1_000, "asked for 1 s ahead, no lead on top");
    assert!(booked.windows(2).all(|w| w[1] - w[0] >= 275), "{booked:?}");
    assert_eq!(booked_read(&engine, 0), None);
    // and the pacer they booked at is the reads' own: a read now takes the next slot
    let ocr = AdmittedOcr::new(
        FakeOcr::default(),
        &admission,
        &engine.timer,
        Rules::textract(),
    );
    engine.timer.set(0);
    let read = ocr
        .detect(&holder(2), &ObjectRef::new("raw", "in/2.png"), None)
        .await;
    assert_eq!(
        read.unwrap_err().name(),
        "Transient.QuotaFull",
        "the horizon is full"
    );
}

/// [`PacedStarts`] at 2 starts a second over a store whose job slot answers take the virtual
/// time of `acquire_ms`, one by one.
async fn slow_job_slots<'a>(
    engine: &'a Clocked,
    acquire_ms: Vec<i64>,
) -> PacedStarts<&'a Clocked, SlowStore<'a>, &'a VirtualTimer> {
    let store = SlowStore {
        records: MemoryAdmission::default(),
        timer: &engine.timer,
        take_ms: 0,
        acquire_ms: Mutex::new(acquire_ms),
        slots_left: Mutex::default(),
    };
    let quotas = starts_a_second(2);
    store.records.set_quotas("textract", &quotas).await.unwrap();
    PacedStarts::new(engine, store, &engine.timer, Rules::textract())
}

#[tokio::test]
async fn a_slow_job_slot_is_taken_while_the_turn_comes_so_starts_keep_their_spacing() {
    // given job slots that take 600 ms, none, none, then 400 ms to take (a loaded store)
    let engine = Clocked::default();
    let workflow = slow_job_slots(&engine, vec![600, 0, 0, 400]).await;

    // when uploads arrive at once
    for n in 0..6 {
        engine.timer.set(0);
        assert_eq!(
            workflow.start(&run(n), &json!({})).await.unwrap(),
            Started::New
        );
    }

    // then every start is sent at its own slot, 550 ms apart: a job slot taken after the turn
    // had come sent its start late, next to the following one's (CI saw two 6 ms apart)
    let at = engine.at.lock().unwrap().clone();
    assert_eq!(at.len(), 6);
    assert!(at.windows(2).all(|w| w[1] - w[0] >= 550), "{at:?}");
    assert_eq!(
        workflow.admission.records.held(&Rules::textract().pool()),
        6
    );
}

#[tokio::test]
async fn a_start_late_for_its_turn_with_none_left_gives_its_new_job_slot_back() {
    // given a start whose job slot takes a second to take, while others take every slot left
    let engine = Clocked::default();
    let workflow = slow_job_slots(&engine, vec![1_000]).await;
    *workflow.admission.slots_left.lock().unwrap() = Some(1);

    // when it arrives
    let late = workflow.start(&run(0), &json!({})).await.unwrap_err();

    // then it is told to come back, holding no job slot, and started nothing
    assert_eq!(late.name(), "Transient.QuotaFull", "{late}");
    assert!(late.to_string().contains("textract-executions"), "{late}");
    let pool = Rules::textract().pool();
    assert_eq!(workflow.admission.records.held(&pool), 0);
    assert!(engine.at.lock().unwrap().is_empty());
    // and the next delivery, with slots free again, starts it
    *workflow.admission.slots_left.lock().unwrap() = None;
    assert_eq!(
        workflow.start(&run(0), &json!({})).await.unwrap(),
        Started::New
    );
    assert_eq!(workflow.admission.records.held(&pool), 1);
}
