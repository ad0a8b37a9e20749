//! The steps end to end over the in-memory ports: what the AWS tests prove against LocalStack,
//! here with every branch and race, fast.

use serde_json::Value;
use time::macros::datetime;

use super::ingest::{self, IngestOutcome, ObjectCreated};
use super::{ocr, route, validate, Clock, Context, Layout};
use crate::audit::verify;
use crate::config::PipelineConfig;
use crate::ids::DocumentId;
use crate::memory::{MemoryPorts, MemoryStore};
use crate::model::run::ObjectRef;
use crate::model::run::RunInput;
use crate::model::step::Step;
use crate::ocr::OcrDocument;
use crate::ports::{BlobStore, OcrPoll, RunStatus, Started, Store};
use crate::Error;

pub(super) const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10";

struct World {
    ports: MemoryPorts,
    ctx: Context,
}

fn world() -> World {
    World {
        ports: MemoryPorts::default(),
        ctx: Context {
            layout: Layout {
                raw_bucket: "raw".into(),
                normalized_bucket: "normalized".into(),
                derived_bucket: "derived".into(),
            },
            config: PipelineConfig::builtin(),
            actor: "docket/test".into(),
            clock: Clock::Fixed(datetime!(2026-11-30 12:00 UTC)),
        },
    }
}

pub(super) fn invoice_lines(total: &str) -> Vec<String> {
    vec![
        "ACME Supplies Ltd".into(),
        "12 Harbour Road, Bristol".into(),
        "INVOICE".into(),
        "Invoice No: INV-2026-0042".into(),
        "Invoice Date: 2026-11-02".into(),
        "Description Qty Price".into(),
        "Widgets 10 123.45".into(),
        format!("Total: EUR {total}"),
    ]
}

pub(super) fn ocr_of(lines: &[String], confidence: f64) -> OcrPoll {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    OcrPoll::Succeeded(OcrDocument::from_lines(&lines, confidence))
}

impl World {
    fn upload(&self, key: &str, body: &[u8], time: &str) -> ObjectCreated {
        let version = self.ports.blobs.upload("raw", key, body);
        ObjectCreated {
            bucket: "raw".into(),
            key: key.into(),
            version_id: Some(version),
            sequencer: Some("0062E99A88DC407460".into()),
            time: Some(time.into()),
        }
    }

    async fn ingest(&self, event: &ObjectCreated) -> IngestOutcome {
        ingest::handle(&self.ports, &self.ctx, event)
            .await
            .expect("ingest")
    }

    fn input_of(&self, outcome: &IngestOutcome) -> RunInput {
        let IngestOutcome::Started { run_id, .. } = outcome else {
            panic!("not started: {outcome:?}");
        };
        let executions = self.ports.workflow.executions.lock().unwrap();
        serde_json::from_value(executions[run_id.as_str()]["run"].clone()).unwrap()
    }

    async fn start(&self, input: &RunInput) -> Result<ocr::OcrStarted, Error> {
        ocr::start(&self.ports, &self.ctx, input).await
    }

    /// Runs the state machine's path for one run: OCR start + polls, validate, route.
    async fn run(&self, input: &RunInput) -> Result<(String, Option<ObjectRef>), Error> {
        let started = self.start(input).await?;
        let normalized = loop {
            let polled = ocr::poll(&self.ports, &self.ctx, input, &started).await?;
            if let Some(n) = polled.normalized {
                break n;
            }
        };
        let validated = validate::run(&self.ports, &self.ctx, input, &normalized).await?;
        if validated.decision != "auto_approve" {
            return Ok((validated.decision, None));
        }
        let routed = route::run(&self.ports, &self.ctx, input, &validated.report, None).await?;
        Ok((routed.status, Some(routed.result)))
    }

    async fn chain_of(&self, document: &DocumentId) -> Vec<String> {
        let entries = self.ports.store.audit_entries(document).await.unwrap();
        let checkpoint = self.ports.store.audit_checkpoint(document).await.unwrap();
        assert_eq!(
            checkpoint,
            entries.last().map(|e| e.checkpoint()),
            "checkpoint at the head"
        );
        verify(
            document,
            &entries,
            entries.last().map(|e| e.checkpoint()).as_ref(),
        )
        .expect("chain verifies");
        entries.iter().map(|e| e.draft.action.clone()).collect()
    }

    async fn json(&self, obj: &ObjectRef) -> Value {
        serde_json::from_slice(&self.ports.blobs.get(obj).await.unwrap()).unwrap()
    }
}

#[tokio::test]
async fn an_approved_invoice_ends_as_the_documents_current_result_with_a_verified_trail() {
    let w = world();
    let event = w.upload("inbox/acme/2026/inv-42.png", PNG, "2026-11-30T10:00:00Z");
    w.ports.ocr.results.lock().unwrap().insert(
        "inbox/acme/2026/inv-42.png".into(),
        ocr_of(&invoice_lines("1,234.50"), 0.97),
    );
    *w.ports.ocr.pending_polls.lock().unwrap() = 2;

    let outcome = w.ingest(&event).await;
    let input = w.input_of(&outcome);
    let (status, result) = w.run(&input).await.unwrap();

    assert_eq!(status, "completed");
    let result = w.json(&result.unwrap()).await;
    assert_eq!(result["fields"]["invoice_number"]["value"], "INV-2026-0042");
    assert_eq!(result["fields"]["total_amount"]["value"], "1234.50");
    assert_eq!(result["fields"]["currency"]["value"], "EUR");
    assert_eq!(result["fields"]["invoice_date"]["value"], "2026-11-02");
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.outputs.len(), 1, "{:?}", run.outputs);
    let doc = w
        .ports
        .store
        .document(&input.document_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(doc.current_run_id, input.run_id);
    assert_eq!(
        w.chain_of(&input.document_id).await,
        [
            "document.accepted",
            "ocr.started",
            "ocr.completed",
            "validation.completed",
            "run.completed"
        ]
    );
    // Five commits for one document, each one DynamoDB write request in the AWS adapter.
    assert_eq!(*w.ports.store.commits.lock().unwrap(), 5);
}

#[tokio::test]
async fn the_same_event_three_times_makes_one_run_one_execution_and_one_audit_entry() {
    let w = world();
    let event = w.upload("inbox/acme/inv.png", PNG, "2026-11-30T10:00:00Z");

    let first = w.ingest(&event).await;
    let (second, third) = tokio::join!(w.ingest(&event), w.ingest(&event));

    assert!(matches!(
        first,
        IngestOutcome::Started {
            execution: Started::New,
            ..
        }
    ));
    for again in [second, third] {
        assert!(
            matches!(
                again,
                IngestOutcome::Started {
                    execution: Started::AlreadyExists,
                    ..
                }
            ),
            "{again:?}"
        );
    }
    assert_eq!(w.ports.workflow.executions.lock().unwrap().len(), 1);
    assert_eq!(w.ports.store.runs().len(), 1);
    let input = w.input_of(&first);
    assert_eq!(w.chain_of(&input.document_id).await, ["document.accepted"]);
}

#[tokio::test]
async fn a_new_upload_of_the_same_key_is_a_new_run_and_both_outputs_stay() {
    let w = world();
    let key = "inbox/acme/inv.png";
    w.ports
        .ocr
        .results
        .lock()
        .unwrap()
        .insert(key.into(), ocr_of(&invoice_lines("10.00"), 0.97));
    let v1 = w.upload(key, PNG, "2026-11-30T10:00:00Z");
    let first = w.input_of(&w.ingest(&v1).await);
    let (_, result1) = w.run(&first).await.unwrap();
    let mut png2 = PNG.to_vec();
    png2.push(1);
    let v2 = w.upload(key, &png2, "2026-11-30T10:05:00Z");
    let second = w.input_of(&w.ingest(&v2).await);
    let (status2, result2) = w.run(&second).await.unwrap();

    assert_eq!(first.document_id, second.document_id);
    assert_ne!(first.run_id, second.run_id);
    assert_eq!(status2, "completed");
    assert_ne!(result1, result2);
    assert!(
        w.ports.blobs.get(&result1.unwrap()).await.is_ok(),
        "old output kept"
    );
    let doc = w
        .ports
        .store
        .document(&second.document_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(doc.current_run_id, second.run_id);
}

#[tokio::test]
async fn an_older_version_finishing_last_is_stale_and_never_promoted() {
    let w = world();
    let key = "inbox/acme/inv.png";
    w.ports
        .ocr
        .results
        .lock()
        .unwrap()
        .insert(key.into(), ocr_of(&invoice_lines("10.00"), 0.97));
    let old = w.input_of(&w.ingest(&w.upload(key, PNG, "2026-11-30T10:00:00Z")).await);
    let mut newer_bytes = PNG.to_vec();
    newer_bytes.push(7);
    let new = w.input_of(
        &w.ingest(&w.upload(key, &newer_bytes, "2026-11-30T10:00:01Z"))
            .await,
    );

    let (new_status, _) = w.run(&new).await.unwrap();
    let (old_status, _) = w.run(&old).await.unwrap();

    assert_eq!(new_status, "completed");
    assert_eq!(old_status, "stale");
    let doc = w
        .ports
        .store
        .document(&new.document_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(doc.current_run_id, new.run_id);
    assert_eq!(
        w.ports
            .store
            .run(&old.run_id)
            .await
            .unwrap()
            .unwrap()
            .status,
        RunStatus::Stale
    );
}

#[tokio::test]
async fn a_retried_route_reports_the_recorded_outcome_without_a_second_entry() {
    let w = world();
    let key = "inbox/acme/inv.png";
    w.ports
        .ocr
        .results
        .lock()
        .unwrap()
        .insert(key.into(), ocr_of(&invoice_lines("10.00"), 0.97));
    let input = w.input_of(&w.ingest(&w.upload(key, PNG, "2026-11-30T10:00:00Z")).await);
    w.run(&input).await.unwrap();
    let before = w.chain_of(&input.document_id).await.len();

    let report = w
        .ctx
        .layout
        .validation(&input.tenant, &input.document_id, &input.run_id);
    let again = route::run(&w.ports, &w.ctx, &input, &report, None)
        .await
        .unwrap();
    let start_again = w.start(&input).await.unwrap();

    assert_eq!(again.status, "completed");
    assert_eq!(w.ports.ocr.job_count(), 1, "one job");
    assert_eq!(
        *w.ports.ocr.start_calls.lock().unwrap(),
        1,
        "the ledger answered the replay: the provider was not asked again"
    );
    assert_eq!(start_again.job_id, "job-0");
    // Neither replay wrote an entry.
    assert_eq!(w.chain_of(&input.document_id).await.len(), before);
}

#[tokio::test]
async fn low_confidence_waits_for_review_and_missing_total_is_invalid() {
    let w = world();
    w.ports.ocr.results.lock().unwrap().insert(
        "inbox/acme/blurry.png".into(),
        ocr_of(&invoice_lines("99.00"), 0.55),
    );
    let mut no_total = invoice_lines("1.00");
    no_total.pop();
    w.ports
        .ocr
        .results
        .lock()
        .unwrap()
        .insert("inbox/acme/no-total.png".into(), ocr_of(&no_total, 0.97));
    let blurry = w.input_of(
        &w.ingest(&w.upload("inbox/acme/blurry.png", PNG, "2026-11-30T10:00:00Z"))
            .await,
    );
    let broken = w.input_of(
        &w.ingest(&w.upload("inbox/acme/no-total.png", PNG, "2026-11-30T10:00:00Z"))
            .await,
    );

    let (decision, result) = w.run(&blurry).await.unwrap();
    let invalid = w.run(&broken).await;

    assert_eq!(decision, "needs_review");
    assert!(result.is_none());
    assert_eq!(
        w.ports
            .store
            .run(&blurry.run_id)
            .await
            .unwrap()
            .unwrap()
            .status,
        RunStatus::AwaitingReview
    );
    assert!(
        matches!(invalid, Err(Error::DocumentInvalid(_))),
        "{invalid:?}"
    );
    let run = w.ports.store.run(&broken.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Invalid);
    assert_eq!(run.error.as_deref(), Some("Business.DocumentInvalid"));
    assert!(!w
        .ports
        .blobs
        .keys("derived")
        .iter()
        .any(|k| k.ends_with("result.json")));
}

#[tokio::test]
async fn an_unreadable_document_fails_its_run_with_the_ocr_error() {
    let w = world();
    w.ports.ocr.results.lock().unwrap().insert(
        "inbox/acme/bad.png".into(),
        OcrPoll::Failed("BadDocumentException".into()),
    );
    let input = w.input_of(
        &w.ingest(&w.upload("inbox/acme/bad.png", PNG, "2026-11-30T10:00:00Z"))
            .await,
    );

    let outcome = w.run(&input).await;

    assert!(matches!(outcome, Err(Error::OcrFailed(_))), "{outcome:?}");
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(
        (run.status, run.error.as_deref()),
        (RunStatus::Failed, Some("Business.OcrFailed"))
    );
}

#[tokio::test]
async fn hostile_uploads_are_quarantined_with_their_named_error_and_audited_once() {
    let w = world();
    let big = vec![b'%'; (w.ctx.config.limits.max_document_bytes + 1) as usize];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("inbox/acme/empty.pdf", vec![], "Business.EmptyDocument"),
        (
            "inbox/acme/header-only.pdf",
            b"%PDF-1.7\n".to_vec(),
            "Business.EmptyDocument",
        ),
        (
            "inbox/acme/notes.pdf",
            b"hello, this is not a pdf at all".to_vec(),
            "Business.UnsupportedDocumentType",
        ),
        ("inbox/acme/huge.pdf", big, "Business.DocumentTooLarge"),
        (
            "inbox/acme/../globex/x.pdf",
            PNG.to_vec(),
            "Business.BadKey",
        ),
        ("inbox/acme//x.pdf", PNG.to_vec(), "Business.BadKey"),
    ];
    for (key, body, expected) in cases {
        let event = w.upload(key, &body, "2026-11-30T10:00:00Z");

        let outcome = w.ingest(&event).await;
        let again = w.ingest(&event).await;

        let IngestOutcome::Quarantined {
            document_id,
            error,
            quarantine,
        } = outcome
        else {
            panic!("{key}: not quarantined: {outcome:?}");
        };
        assert_eq!(error, expected, "{key}");
        assert_eq!(
            again,
            IngestOutcome::Quarantined {
                document_id: document_id.clone(),
                error,
                quarantine: quarantine.clone()
            }
        );
        let meta = w
            .ports
            .blobs
            .metadata("raw", &quarantine.key)
            .expect("quarantine copy");
        assert_eq!(meta["docket-error"], expected);
        assert!(
            w.ports
                .blobs
                .head(&ObjectRef::new("raw", key))
                .await
                .unwrap()
                .is_some(),
            "raw kept"
        );
        assert_eq!(
            w.chain_of(&document_id).await,
            ["document.quarantined"],
            "{key}"
        );
    }
    assert!(w.ports.workflow.executions.lock().unwrap().is_empty());
}

#[tokio::test]
async fn keys_with_spaces_plus_and_unicode_are_decoded_and_accepted() {
    let w = world();
    for (encoded, decoded) in [
        ("inbox/acme/my+invoice.png", "inbox/acme/my invoice.png"),
        ("inbox/acme/a%2Bb.png", "inbox/acme/a+b.png"),
        ("inbox/acme/r%C3%A9sum%C3%A9.png", "inbox/acme/résumé.png"),
    ] {
        let mut event = w.upload(decoded, PNG, "2026-11-30T10:00:00Z");
        event.key = encoded.into();

        let outcome = w.ingest(&event).await;

        let input = w.input_of(&outcome);
        assert_eq!(input.raw.key, decoded);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_audit_appends_leave_no_gap_and_no_fork() {
    let w = std::sync::Arc::new(world());
    let document = DocumentId::for_rejected_key("k");
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let (w, document) = (w.clone(), document.clone());
            tokio::spawn(async move {
                let draft = crate::audit::AuditDraft::new("t", &format!("a{i}"), None);
                super::record(&w.ports.store, &w.ctx, &document, vec![], draft).await
            })
        })
        .collect();

    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await.unwrap());
    }

    // Each append either landed or gave up after contention (a transient error the ASL retries);
    // whatever landed forms one unbroken chain.
    let landed = outcomes.iter().filter(|r| matches!(r, Ok(Ok(_)))).count();
    assert!(outcomes
        .iter()
        .all(|r| matches!(r, Ok(Ok(_)) | Err(Error::InProgress(_)))));
    assert_eq!(w.chain_of(&document).await.len(), landed);
}

/// How [`TwistedStore`] bends its first commit.
enum Twist {
    /// Another writer appends to the chain between our read of the head and our commit.
    RaceForSeq,
    /// The commit lands but its answer is lost (the "lost acknowledgement").
    LoseAnswer,
}

/// A memory store whose first commit is bent by a [`Twist`]; later ones pass through.
struct TwistedStore {
    inner: MemoryStore,
    twist: Twist,
    done: std::sync::atomic::AtomicBool,
}

impl TwistedStore {
    fn new(twist: Twist) -> Self {
        TwistedStore {
            inner: MemoryStore::default(),
            twist,
            done: false.into(),
        }
    }
}

impl Store for TwistedStore {
    async fn commit(
        &self,
        changes: Vec<crate::ports::Change>,
    ) -> Result<Result<(), crate::ports::Refused>, Error> {
        if self.done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return self.inner.commit(changes).await;
        }
        match self.twist {
            Twist::RaceForSeq => {
                if let Some(crate::ports::Change::Audit(ours)) = changes.last() {
                    let mut theirs = ours.clone();
                    theirs.draft.action = "someone.else".into();
                    theirs.hash = theirs.compute_hash();
                    self.inner
                        .commit(vec![crate::ports::Change::Audit(theirs)])
                        .await?
                        .unwrap();
                }
                self.inner.commit(changes).await
            }
            Twist::LoseAnswer => {
                self.inner.commit(changes).await?.unwrap();
                Err(Error::OutcomeUnknown("answer lost".into()))
            }
        }
    }
    async fn run(&self, id: &crate::ids::RunId) -> Result<Option<crate::ports::RunRecord>, Error> {
        self.inner.run(id).await
    }
    async fn document(
        &self,
        id: &DocumentId,
    ) -> Result<Option<crate::ports::DocumentRecord>, Error> {
        self.inner.document(id).await
    }
    async fn audit_head(&self, id: &DocumentId) -> Result<Option<crate::audit::AuditEntry>, Error> {
        self.inner.audit_head(id).await
    }
    async fn audit_checkpoint(
        &self,
        id: &DocumentId,
    ) -> Result<Option<crate::audit::Checkpoint>, Error> {
        self.inner.audit_checkpoint(id).await
    }
    async fn audit_entries(&self, id: &DocumentId) -> Result<Vec<crate::audit::AuditEntry>, Error> {
        self.inner.audit_entries(id).await
    }
}

#[tokio::test]
async fn an_append_that_loses_the_race_for_its_seq_rereads_the_head_and_lands_next() {
    let w = world();
    let store = TwistedStore::new(Twist::RaceForSeq);
    let document = DocumentId::for_rejected_key("k");

    let entry = super::record(
        &store,
        &w.ctx,
        &document,
        vec![],
        crate::audit::AuditDraft::new("t", "ours", None),
    )
    .await
    .unwrap()
    .unwrap();

    let chain = store.audit_entries(&document).await.unwrap();
    assert_eq!(entry.seq, 2);
    assert_eq!(
        chain
            .iter()
            .map(|e| e.draft.action.as_str())
            .collect::<Vec<_>>(),
        ["someone.else", "ours"]
    );
    assert_eq!(verify(&document, &chain, None), Ok(()));
}

#[tokio::test]
async fn a_commit_whose_answer_is_lost_is_reconciled_not_repeated() {
    let w = world();
    let store = TwistedStore::new(Twist::LoseAnswer);
    let document = DocumentId::for_rejected_key("lost");

    let entry = super::record(
        &store,
        &w.ctx,
        &document,
        vec![],
        crate::audit::AuditDraft::new("t", "once", None),
    )
    .await
    .unwrap()
    .unwrap();

    let chain = store.audit_entries(&document).await.unwrap();
    assert_eq!(
        chain.len(),
        1,
        "the lost commit is found, not written again"
    );
    assert_eq!(chain[0], entry);
    assert_eq!(*store.inner.commits.lock().unwrap(), 1);
}

// The OCR operation in the ledger: lost answers, crashed holders, duplicates, changed parameters.

/// A run whose OCR is scripted to succeed, ready for its OCR step.
async fn ocr_ready(w: &World) -> RunInput {
    let key = "inbox/acme/inv.png";
    w.ports
        .ocr
        .results
        .lock()
        .unwrap()
        .insert(key.into(), ocr_of(&invoice_lines("10.00"), 0.97));
    w.input_of(&w.ingest(&w.upload(key, PNG, "2026-11-30T10:00:00Z")).await)
}

impl World {
    /// The same world seen `seconds` later.
    fn later(&self, seconds: i64) -> Context {
        let Clock::Fixed(now) = self.ctx.clock else {
            unreachable!("tests use a fixed clock")
        };
        Context {
            clock: Clock::Fixed(now + time::Duration::seconds(seconds)),
            ..self.ctx.clone()
        }
    }

    async fn ledger_of(&self, input: &RunInput) -> crate::ledger::OperationRecord {
        use crate::ports::Ledger;
        self.ports
            .store
            .ledger
            .get(&Step::Ocr.operation(&input.run_id))
            .await
            .unwrap()
            .expect("a ledger record")
    }

    async fn actions(&self, input: &RunInput, action: &str) -> usize {
        let entries = self
            .ports
            .store
            .audit_entries(&input.document_id)
            .await
            .unwrap();
        entries.iter().filter(|e| e.draft.action == action).count()
    }
}

#[tokio::test]
async fn a_lost_start_answer_gives_the_lease_up_and_the_retry_finds_the_same_job() {
    // given a start whose answer is lost after the provider accepted it
    let w = world();
    let input = ocr_ready(&w).await;
    *w.ports.ocr.lose_start_answers.lock().unwrap() = 1;

    // when the step runs, and the state machine retries it
    let lost = w.start(&input).await;
    let retried = w.start(&input).await.unwrap();

    // then the first attempt reports the ambiguity, the retry takes over (fence 2) and asks
    // again with the same token: one job, accepted, one ocr.started entry
    assert_eq!(lost.unwrap_err().name(), "Ambiguous.OutcomeUnknown");
    assert_eq!(retried.fence, 2);
    assert_eq!(w.ports.ocr.job_count(), 1);
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), 2);
    let rec = w.ledger_of(&input).await;
    assert_eq!(rec.status, crate::ledger::LedgerStatus::Accepted);
    assert_eq!(
        rec.provider_job_id.as_deref(),
        Some(retried.job_id.as_str())
    );
    assert_eq!(crate::ledger::ambiguous_attempts(&rec), 1);
    assert_eq!(w.actions(&input, "ocr.started").await, 1);
}

#[tokio::test]
async fn an_outcome_that_stays_unknown_becomes_unresolved_with_an_owner_never_a_second_job() {
    // given a provider whose answers to starts keep being lost
    let w = world();
    let input = ocr_ready(&w).await;
    *w.ports.ocr.lose_start_answers.lock().unwrap() = 10;
    let limit = w.ctx.config.ledger.max_ambiguous_attempts;

    // when the state machine retries up to the limit, and once more
    let mut errors = Vec::new();
    for _ in 0..limit + 1 {
        errors.push(w.start(&input).await.unwrap_err().name());
    }

    // then the attempts below the limit were ambiguous, the one at it unresolved, and the one
    // after it is refused by the ledger without asking the provider
    let mut expected = vec!["Ambiguous.OutcomeUnknown"; limit - 1];
    expected.extend(["Ambiguous.Unresolved", "Ambiguous.Unresolved"]);
    assert_eq!(errors, expected);
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), limit);
    assert_eq!(
        w.ports.ocr.job_count(),
        1,
        "the same token every time: one job at most"
    );
    let rec = w.ledger_of(&input).await;
    assert_eq!(rec.status, crate::ledger::LedgerStatus::Unresolved);
    assert_eq!(rec.owner.as_deref(), Some("docket-operations"));
    assert!(rec
        .next_action
        .as_deref()
        .unwrap()
        .contains(rec.operation_id.as_str()));
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Unresolved);
    assert_eq!(run.error.as_deref(), Some("Ambiguous.Unresolved"));
    assert_eq!(w.actions(&input, "ocr.unresolved").await, 1);
    use crate::ports::Ledger;
    assert_eq!(w.ports.store.ledger.unresolved().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_holder_that_crashed_after_the_provider_accepted_is_taken_over_after_its_lease() {
    use crate::ports::Ledger;
    // given a holder that claimed the operation and started the job, then crashed before
    // recording it
    let w = world();
    let input = ocr_ready(&w).await;
    let op = Step::Ocr.operation(&input.run_id);
    let now = w.ctx.clock.now().unix_timestamp();
    let rules = w.ctx.config.ledger.lease_rules();
    w.ports
        .store
        .ledger
        .claim(&op, &ocr::fingerprint(&input), now, &rules)
        .await
        .unwrap();
    use crate::ports::Ocr;
    let crashed_job = w.ports.ocr.start(&op, &input.raw, "t").await.unwrap();

    // when a retry comes within the lease, and another after it
    let within = w.start(&input).await;
    let after_ctx = w.later(rules.lease_seconds + 1);
    let after = ocr::start(&w.ports, &after_ctx, &input).await.unwrap();

    // then the first backs off, the second records the existing job under fence 2
    assert_eq!(within.unwrap_err().name(), "Transient.InProgress");
    assert_eq!(after.job_id, crashed_job);
    assert_eq!(after.fence, 2);
    assert_eq!(w.ports.ocr.job_count(), 1);
    let rec = w.ledger_of(&input).await;
    assert_eq!(rec.status, crate::ledger::LedgerStatus::Accepted);
    assert_eq!(w.actions(&input, "ocr.started").await, 1);
}

#[tokio::test]
async fn a_duplicate_start_while_the_job_is_held_returns_that_job_and_writes_nothing() {
    // given a started OCR operation
    let w = world();
    let input = ocr_ready(&w).await;
    let first = w.start(&input).await.unwrap();
    let commits = *w.ports.store.commits.lock().unwrap();

    // when the same step runs again (its answer to the state machine was lost)
    let second = w.start(&input).await.unwrap();

    // then it is the same job under the same fence; the provider was not asked, nothing written
    assert_eq!(second, first);
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), 1);
    assert_eq!(*w.ports.store.commits.lock().unwrap(), commits);
}

#[tokio::test]
async fn the_same_operation_with_another_document_version_is_a_conflict_and_changes_nothing() {
    // given a started OCR operation
    let w = world();
    let input = ocr_ready(&w).await;
    w.start(&input).await.unwrap();
    let before = w.ledger_of(&input).await;

    // when the same run's OCR is asked for another raw version
    let mut changed = input.clone();
    changed.raw.version_id = Some("another-version".into());
    changed.sha256 = "0".repeat(64);
    let err = w.start(&changed).await.unwrap_err();

    // then it is refused before the provider is asked; the record is untouched
    assert_eq!(err.name(), "Conflict.ParametersChanged");
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), 1);
    assert_eq!(w.ledger_of(&input).await, before);
}

#[tokio::test]
async fn a_late_poll_by_a_taken_over_holder_cannot_complete_the_operation() {
    use crate::ports::Ledger;
    // given a holder (fence 1) whose lease ran out, and a takeover (fence 2)
    let w = world();
    let input = ocr_ready(&w).await;
    let op = Step::Ocr.operation(&input.run_id);
    let rules = w.ctx.config.ledger.lease_rules();
    let now = w.ctx.clock.now().unix_timestamp();
    w.ports
        .store
        .ledger
        .claim(&op, &ocr::fingerprint(&input), now, &rules)
        .await
        .unwrap();
    let later = w.later(rules.lease_seconds + 1);
    let taken = ocr::start(&w.ports, &later, &input).await.unwrap();
    assert_eq!(taken.fence, 2);

    // when the old holder polls the finished job and tries to record it
    let stale = ocr::OcrStarted {
        job_id: taken.job_id.clone(),
        fence: 1,
    };
    let late = ocr::poll(&w.ports, &w.ctx, &input, &stale).await;

    // then it is fenced out and recorded nothing; the holder completes
    assert_eq!(late.unwrap_err().name(), "Conflict.FencedOut");
    assert_eq!(w.actions(&input, "ocr.completed").await, 0);
    let done = ocr::poll(&w.ports, &w.ctx, &input, &taken).await.unwrap();
    assert_eq!(done.status, "SUCCEEDED");
    assert_eq!(w.actions(&input, "ocr.completed").await, 1);
    let rec = w.ledger_of(&input).await;
    assert_eq!(rec.status, crate::ledger::LedgerStatus::Completed);
    assert_eq!(rec.result_pointer, done.normalized.map(|n| n.to_string()));
}
