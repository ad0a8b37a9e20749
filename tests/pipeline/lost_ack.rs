//! Lost acknowledgements: the request commits, the answer is lost (injected by the SDK fault
//! interceptor, `docket_aws::faults`), the step is retried as Step Functions or Lambda would.
//! Each test counts what must exist exactly once. The steps run in this process against the
//! deployed stack's buckets, tables, state machine and Textract.

use std::collections::BTreeMap;

use docket_aws::dynamodb::DynamoStore;
use docket_aws::events::EventBridgeBus;
use docket_aws::faults::{Faults, Rule};
use docket_aws::ledger::DynamoLedger;
use docket_aws::s3::S3Blobs;
use docket_aws::saga::{DynamoJournal, DynamoOutbox};
use docket_aws::sfn::SfnWorkflow;
use docket_aws::textract::TextractOcr;
use docket_core::config::PipelineConfig;
use docket_core::ids::{sha256_hex, DocumentId, RunId, SourceVersion, Tenant};
use docket_core::model::run::ObjectRef;
use docket_core::model::run::RunInput;
use docket_core::ports::{
    Change, HasBlobs, HasEvents, HasJournal, HasLedger, HasOcr, HasOutbox, HasStore, HasWorkflow,
    RunRecord, RunStatus, Store,
};
use docket_core::saga::{EventId, EventKind};
use docket_core::steps::ingest::{self, IngestOutcome, ObjectCreated};
use docket_core::steps::{ocr, route, validate, Clock, Context, Layout};
use docket_core::Error;
use docket_e2e::resource::{self, Resource};
use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};
use docket_e2e::util;

pub(crate) fn one(rule: Rule) -> Faults {
    Faults::builder().rule(rule).build()
}

pub(crate) async fn store(stack: &Stack, faults: &Faults) -> DynamoStore {
    DynamoStore::with_faults(&util::aws().await, stack.tables(), faults)
        .with_saga(stack.saga_tables())
}

/// The ledger on the store's table, through the store's client (and so its faults).
pub(crate) fn ledger(store: &DynamoStore) -> DynamoLedger {
    DynamoLedger::new(store.client().clone(), &store.tables().ledger)
}

pub(crate) fn ctx(stack: &Stack, actor: &str) -> Context {
    Context {
        layout: Layout {
            raw_bucket: stack.out("RawBucket").into(),
            normalized_bucket: stack.out("NormalizedBucket").into(),
            derived_bucket: stack.out("DerivedBucket").into(),
        },
        config: PipelineConfig::builtin(),
        actor: actor.into(),
        clock: Clock::System,
        ocr_wait_seconds: docket_core::steps::DEFAULT_OCR_WAIT_SECONDS,
        review_wait_seconds: docket_core::steps::DEFAULT_REVIEW_WAIT_SECONDS,
        reads: std::sync::Arc::new(docket_core::read_budget::ReadBudget::unbounded()),
    }
}

/// The steps' ports as a test picks them: a lossy adapter next to clean ones. Ports a step does
/// not use are `()`.
pub(crate) struct Picked<B = (), S = (), O = (), L = (), W = (), G = ()> {
    pub blobs: B,
    pub store: S,
    pub ocr: O,
    pub ledger: L,
    pub workflow: W,
    pub saga: G,
}

/// Route's saga ports on the deployed stack's tables and bus.
pub(crate) struct SagaPorts {
    journal: DynamoJournal,
    outbox: DynamoOutbox,
    events: EventBridgeBus,
}

impl SagaPorts {
    /// On `store`'s client (its saga tables) and the stack's bus.
    pub(crate) async fn of(stack: &Stack, store: &DynamoStore) -> SagaPorts {
        SagaPorts::with_bus_faults(stack, store, &Faults::none()).await
    }

    /// [`SagaPorts::of`], with `faults` injected into the bus's client.
    pub(crate) async fn with_bus_faults(
        stack: &Stack,
        store: &DynamoStore,
        faults: &Faults,
    ) -> SagaPorts {
        SagaPorts::on_bus(store, stack.out("EventBus"), faults).await
    }

    /// On `store`'s saga tables, publishing to the bus named `bus`.
    pub(crate) async fn on_bus(store: &DynamoStore, bus: &str, faults: &Faults) -> SagaPorts {
        let tables = store.saga().expect("a store with the saga's tables");
        SagaPorts {
            journal: DynamoJournal::new(store.client().clone(), &tables.journal),
            outbox: DynamoOutbox::new(store.client().clone(), &tables.outbox),
            events: EventBridgeBus::with_faults(&util::aws().await, bus, faults),
        }
    }
}

impl<B: Sync, S: Sync, O: Sync, L: Sync, W: Sync> HasJournal for Picked<B, S, O, L, W, &SagaPorts> {
    type Journal = DynamoJournal;
    fn journal(&self) -> &DynamoJournal {
        &self.saga.journal
    }
}

impl<B: Sync, S: Sync, O: Sync, L: Sync, W: Sync> HasOutbox for Picked<B, S, O, L, W, &SagaPorts> {
    type Outbox = DynamoOutbox;
    fn outbox(&self) -> &DynamoOutbox {
        &self.saga.outbox
    }
}

impl<B: Sync, S: Sync, O: Sync, L: Sync, W: Sync> HasEvents for Picked<B, S, O, L, W, &SagaPorts> {
    type Events = EventBridgeBus;
    fn events(&self) -> &EventBridgeBus {
        &self.saga.events
    }
}

impl<'a> Picked<&'a S3Blobs, &'a DynamoStore, (), (), &'a SfnWorkflow> {
    /// Ingest's ports.
    pub(crate) fn ingest(
        blobs: &'a S3Blobs,
        store: &'a DynamoStore,
        workflow: &'a SfnWorkflow,
    ) -> Self {
        Picked {
            blobs,
            store,
            ocr: (),
            ledger: (),
            workflow,
            saga: (),
        }
    }
}

impl<'a> OcrPorts<'a> {
    /// OCR's and validation's ports.
    pub(crate) fn ocr(
        blobs: &'a S3Blobs,
        store: &'a DynamoStore,
        ocr: &'a TextractOcr,
        ledger: &'a DynamoLedger,
    ) -> Self {
        Picked {
            blobs,
            store,
            ocr,
            ledger,
            workflow: (),
            saga: (),
        }
    }
}

impl<'a> Picked<&'a S3Blobs, &'a DynamoStore, (), (), (), &'a SagaPorts> {
    /// Route's ports.
    pub(crate) fn route(blobs: &'a S3Blobs, store: &'a DynamoStore, saga: &'a SagaPorts) -> Self {
        Picked {
            blobs,
            store,
            ocr: (),
            ledger: (),
            workflow: (),
            saga,
        }
    }
}

impl<S: Sync, O: Sync, L: Sync, W: Sync, G: Sync> HasBlobs for Picked<&S3Blobs, S, O, L, W, G> {
    type Blobs = S3Blobs;
    fn blobs(&self) -> &S3Blobs {
        self.blobs
    }
}

impl<B: Sync, O: Sync, L: Sync, W: Sync, G: Sync> HasStore for Picked<B, &DynamoStore, O, L, W, G> {
    type Store = DynamoStore;
    fn store(&self) -> &DynamoStore {
        self.store
    }
}

impl<B: Sync, S: Sync, L: Sync, W: Sync, G: Sync> HasOcr for Picked<B, S, &TextractOcr, L, W, G> {
    type Ocr = TextractOcr;
    fn ocr(&self) -> &TextractOcr {
        self.ocr
    }
}

impl<B: Sync, S: Sync, O: Sync, W: Sync, G: Sync> HasLedger
    for Picked<B, S, O, &DynamoLedger, W, G>
{
    type Ledger = DynamoLedger;
    fn ledger(&self) -> &DynamoLedger {
        self.ledger
    }
}

impl<B: Sync, S: Sync, O: Sync, L: Sync, G: Sync> HasWorkflow
    for Picked<B, S, O, L, &SfnWorkflow, G>
{
    type Workflow = SfnWorkflow;
    fn workflow(&self) -> &SfnWorkflow {
        self.workflow
    }
}

pub(crate) fn count_actions(chain: &[docket_core::audit::AuditEntry], action: &str) -> usize {
    chain.iter().filter(|e| e.draft.action == action).count()
}

/// The actor the ingest under test records as, so the audit log shows whose commit landed.
const OURS: &str = "docket/test-ingest";

/// An inbox upload into a versioned raw bucket of the test's own, the event ingest gets for it,
/// and the context that accepts that bucket. Not the stack's raw bucket: EventBridge would start
/// the deployed ingest on the upload too, and if its commit won the race the lost answer under
/// test would be the answer to a request that changed nothing.
async fn private_upload(
    stack: &Stack,
    tenant: &str,
    name: &str,
) -> (Resource, ObjectCreated, Context) {
    let bucket = resource::versioned_bucket(&util::aws().await, "raw").await;
    let key = format!("inbox/{tenant}/{name}");
    let put = stack
        .s3
        .put_object()
        .bucket(&*bucket)
        .key(&key)
        .body(invoice_pdf(&invoice_lines("INV-2026-0042", "1,234.50")).into())
        .send()
        .await
        .unwrap();
    let event = ObjectCreated {
        bucket: bucket.to_string(),
        key,
        version_id: Some(put.version_id().expect("a versioned bucket").to_string()),
        sequencer: None,
        time: Some("2026-11-30T10:00:00Z".into()),
    };
    let mut ctx = ctx(stack, OURS);
    ctx.layout.raw_bucket = bucket.to_string();
    (bucket, event, ctx)
}

/// The one `document.accepted` entry of `document`, checked to be ours.
async fn accepted_by_us(
    stack: &Stack,
    document: &DocumentId,
) -> Vec<docket_core::audit::AuditEntry> {
    let chain = stack.wait_for_action(document, "event.published").await;
    let accepted: Vec<&str> = chain
        .iter()
        .filter(|e| e.draft.action == "document.accepted")
        .map(|e| e.draft.actor.as_str())
        .collect();
    assert_eq!(
        accepted,
        [OURS],
        "one acceptance, committed by the ingest under test"
    );
    chain
}

#[tokio::test]
async fn lost_answer_to_the_run_record_commit_makes_one_run_and_one_acceptance() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let (_bucket, event, ctx) = private_upload(&stack, &tenant, "lost-commit.pdf").await;
    let faults = one(Rule::lose_response("dynamodb", "TransactWriteItems").nth(1));
    let store = store(&stack, &faults).await;
    let sdk = util::aws().await;
    let workflow = SfnWorkflow::new(&sdk, stack.out("StateMachineAliasArn").into());
    let blobs = S3Blobs::new(&sdk);
    let ports = Picked::ingest(&blobs, &store, &workflow);

    let first = ingest::handle(&ports, &ctx, &event).await;
    let again = ingest::handle(&ports, &ctx, &event).await;

    assert_eq!(faults.injected(), 1, "the answer was lost once");
    let document = Stack::document_id(&tenant, "lost-commit.pdf");
    assert!(
        matches!(first, Ok(IngestOutcome::Started { .. })),
        "{first:?}"
    );
    // New or AlreadyExists: Step Functions answers an identical start of a running execution
    // as if it were the first; the execution count below is what must be one.
    assert!(
        matches!(again, Ok(IngestOutcome::Started { .. })),
        "{again:?}"
    );
    let runs = stack.wait_for_runs(&document, 1).await;
    assert_eq!(runs.len(), 1, "one run record");
    let run_id = s(&runs[0], "runId");
    assert_eq!(
        stack.executions_of(&document).await,
        [run_id],
        "one execution"
    );
    let chain = accepted_by_us(&stack, &document).await;
    assert_eq!(count_actions(&chain, "run.completed"), 1);
}

#[tokio::test]
async fn lost_answer_to_start_execution_makes_one_execution() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let (_bucket, event, ctx) = private_upload(&stack, &tenant, "lost-start.pdf").await;
    // The start's answer is lost once; the look-ups are counted, never failed (limit 0).
    let faults = Faults::builder()
        .rule(Rule::lose_response("sfn", "StartExecution").nth(1))
        .rule(Rule::lose_response("sfn", "DescribeExecution").limit(0))
        .build();
    let sdk = util::aws().await;
    let workflow =
        SfnWorkflow::with_faults(&sdk, stack.out("StateMachineAliasArn").into(), &faults);
    let store = store(&stack, &Faults::none()).await;
    let blobs = S3Blobs::new(&sdk);
    let ports = Picked::ingest(&blobs, &store, &workflow);

    let first = ingest::handle(&ports, &ctx, &event).await;
    let retried = ingest::handle(&ports, &ctx, &event).await;

    assert_eq!(faults.injected(), 1);
    // The retry reconciles before it acts: the run record is there, so it asks whether the
    // execution runs, finds it, and starts nothing.
    assert_eq!(faults.seen_by(0), 1, "StartExecution requests on the wire");
    assert_eq!(
        faults.seen_by(1),
        1,
        "DescribeExecution requests on the wire"
    );
    assert!(
        first.is_err(),
        "the lost answer is an error the caller retries: {first:?}"
    );
    let Ok(IngestOutcome::Started { run_id, .. }) = retried else {
        panic!("{retried:?}");
    };
    let document = Stack::document_id(&tenant, "lost-start.pdf");
    assert_eq!(
        stack.executions_of(&document).await,
        [run_id.as_str()],
        "one execution of the document, under its run id"
    );
    let chain = accepted_by_us(&stack, &document).await;
    assert_eq!(count_actions(&chain, "run.completed"), 1);
}

/// A run prepared by hand from a raw object outside the inbox (so EventBridge does not start the
/// deployed pipeline on it too): the record exists, the steps after ingest are ours to drive.
pub(crate) async fn prepared_run(stack: &Stack, store: &DynamoStore) -> RunInput {
    prepared_run_under(stack, store, &PipelineConfig::builtin()).await
}

/// [`prepared_run`] as if ingest had started it under `config`.
pub(crate) async fn prepared_run_under(
    stack: &Stack,
    store: &DynamoStore,
    config: &PipelineConfig,
) -> RunInput {
    let tenant = Tenant::parse(&tenant()).unwrap();
    let body = invoice_pdf(&invoice_lines("INV-2026-0042", "1,234.50"));
    let key = format!("fixtures/{tenant}/invoice.pdf");
    let version = stack.upload(&key, body.clone()).await;
    let document = DocumentId::new(&tenant, "invoice.pdf");
    let source = SourceVersion {
        version_id: version.clone(),
        sha256: sha256_hex(&body),
    };
    let run_id = RunId::new(&document, &source, &config.fingerprint(), 0);
    let raw = ObjectRef {
        bucket: stack.out("RawBucket").into(),
        key,
        version_id: Some(version),
    };
    let record = RunRecord {
        run_id: run_id.clone(),
        document_id: document.clone(),
        tenant: tenant.clone(),
        source: source.clone(),
        raw: raw.clone(),
        source_order: "1".into(),
        config_fingerprint: config.fingerprint(),
        generation: 0,
        status: RunStatus::Started,
        created_at: "2026-11-30T10:00:00Z".into(),
        outputs: BTreeMap::new(),
        error: None,
        pages: None,
    };
    store
        .commit(vec![Change::CreateRun(record)])
        .await
        .unwrap()
        .unwrap();
    RunInput {
        tenant,
        document_id: document,
        run_id,
        raw,
        sha256: source.sha256,
        source_order: "1".into(),
        config_fingerprint: config.fingerprint(),
        reuse_ocr: None,
        pages: None,
        read_at_ms: None,
    }
}

/// The ports OCR and validation take in these tests: clean adapters on the deployed stack.
pub(crate) type OcrPorts<'a> =
    Picked<&'a S3Blobs, &'a DynamoStore, &'a TextractOcr, &'a DynamoLedger>;

/// Polls `started`'s OCR job until it is normalized, then validates `input`.
pub(crate) async fn polled_and_validated(
    ports: &OcrPorts<'_>,
    ctx: &Context,
    input: &RunInput,
    started: &ocr::OcrStarted,
) -> validate::Validated {
    let normalized = loop {
        let polled = ocr::poll(ports, ctx, input, started).await.unwrap();
        if let Some(n) = polled.normalized {
            break n;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };
    validate::run(ports, ctx, input, &normalized).await.unwrap()
}

/// A run prepared, OCR'd and validated in this process on clean adapters: what route takes.
pub(crate) struct ValidatedRun {
    pub(crate) store: DynamoStore,
    pub(crate) blobs: S3Blobs,
    pub(crate) ctx: Context,
    pub(crate) input: RunInput,
    pub(crate) validated: validate::Validated,
}

/// [`ValidatedRun`] of a new document on the deployed stack.
pub(crate) async fn validated_run(stack: &Stack) -> ValidatedRun {
    let sdk = util::aws().await;
    let store = store(stack, &Faults::none()).await;
    let input = prepared_run(stack, &store).await;
    let ctx = ctx(stack, "docket/test");
    let textract = TextractOcr::new(&sdk);
    // Past admission: not while the quota test holds the provider.
    let _direct = crate::TEXTRACT.read().await;
    let blobs = S3Blobs::new(&sdk);
    let ledger = ledger(&store);
    let ocr_ports = Picked::ocr(&blobs, &store, &textract, &ledger);
    let started = ocr::start(&ocr_ports, &ctx, &input).await.unwrap();
    let validated = polled_and_validated(&ocr_ports, &ctx, &input, &started).await;
    ValidatedRun {
        store,
        blobs,
        ctx,
        input,
        validated,
    }
}

#[tokio::test]
async fn lost_answers_to_textract_start_and_to_the_result_put_make_one_job_and_one_result() {
    // No zero-age sweep may relay this run's event meanwhile (its puts are counted).
    let _quiet = crate::SWEEPS.read().await;
    let stack = Stack::load().await;
    let sdk = util::aws().await;
    let store = store(&stack, &Faults::none()).await;
    let input = prepared_run(&stack, &store).await;
    let ctx = ctx(&stack, "docket/test");
    let textract_faults = one(Rule::lose_response("textract", "StartDocumentTextDetection").nth(1));
    let textract = TextractOcr::with_faults(&sdk, &textract_faults);
    // Past admission: not while the quota test holds the provider.
    let _direct = crate::TEXTRACT.read().await;
    let s3_faults = one(Rule::lose_response("s3", "PutObject").nth(1));
    let blobs = S3Blobs::new(&sdk);
    let lossy_blobs = S3Blobs::with_faults(&sdk, &s3_faults);

    let ledger = ledger(&store);
    let ocr_ports = Picked::ocr(&blobs, &store, &textract, &ledger);
    let saga = SagaPorts::of(&stack, &store).await;
    let lossy = Picked::route(&lossy_blobs, &store, &saga);

    // OCR start: the answer is lost; the attempt gives its lease up, the retry takes over and
    // asks again with the same token: the same job. A third start finds it in the ledger.
    let lost = ocr::start(&ocr_ports, &ctx, &input).await;
    let started = ocr::start(&ocr_ports, &ctx, &input).await.unwrap();
    let again = ocr::start(&ocr_ports, &ctx, &input).await.unwrap();
    let validated = polled_and_validated(&ocr_ports, &ctx, &input, &started).await;
    // Route: the result put commits, its answer is lost; the retried route completes once.
    let lost_route = route::run(&lossy, &ctx, &input, &validated.report, None).await;
    let routed = route::run(&lossy, &ctx, &input, &validated.report, None)
        .await
        .unwrap();

    assert!(matches!(lost, Err(Error::OutcomeUnknown(_))), "{lost:?}");
    assert_eq!(started.fence, 2, "the retry took the released claim over");
    assert_eq!(
        (&started.job_id, started.fence),
        (&again.job_id, again.fence),
        "one Textract job for the operation"
    );
    assert!(
        matches!(lost_route, Err(Error::OutcomeUnknown(_))),
        "{lost_route:?}"
    );
    assert_eq!(routed.status, "completed");
    assert_eq!((textract_faults.injected(), s3_faults.injected()), (1, 1));
    // Each PutObject that landed is a version of the result: the lost one and the retry's.
    assert_eq!(
        s3_faults.seen_by(0),
        2,
        "two PutObject requests on the wire"
    );
    let versions = stack
        .versions(stack.out("DerivedBucket"), &routed.result.key)
        .await;
    assert_eq!(versions.len(), 2, "both puts landed: {versions:?}");
    let contents: std::collections::BTreeSet<String> =
        versions.into_iter().map(|(_, sha)| sha).collect();
    assert_eq!(contents.len(), 1, "one distinct result content");
    let chain = stack.audit(&input.document_id).await;
    assert_eq!(count_actions(&chain, "run.completed"), 1);
    assert_eq!(count_actions(&chain, "event.published"), 1);
    let event = EventId::new(&input.run_id, EventKind::Accepted);
    assert_eq!(stack.event_puts("document.accepted", &event).await, 1);
    let completed = chain
        .iter()
        .find(|e| e.draft.action == "run.completed")
        .unwrap();
    assert_eq!(
        completed.draft.detail["sha256"].as_str(),
        contents.first().map(String::as_str),
        "the stored result is the one the audit log records"
    );
    let run = stack
        .item("RunsTable", "runId", input.run_id.as_str())
        .await;
    assert_eq!(s(&run.into_iter().collect(), "status"), "completed");
}
