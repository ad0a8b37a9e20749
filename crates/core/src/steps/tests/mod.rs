//! The steps over the in-memory ports: what the AWS tests prove against LocalStack, here with
//! every branch and race, fast. One [`World`] for all: `pipeline` (ingest to route), `audit`
//! (`steps::record`'s appends), `ocr_ledger` (the OCR step's operation ledger), `review`.

mod audit;
mod config;
mod edges;
mod einvoice;
mod ocr_ledger;
mod ocr_sync;
mod ocr_wait;
mod payable;
mod pipeline;
mod recover;
mod reprocess;
mod resolve;
mod review;
mod saga;

use serde_json::Value;
use time::macros::datetime;

use super::ingest::{self, IngestOutcome, ObjectCreated};
use super::ocr::wait::{self, Ended};
use super::{ocr, route, validate, Clock, Context};
use crate::audit::{verify, AuditEntry};
use crate::ids::DocumentId;
use crate::memory::{test_context, MemoryPorts, MemoryStore};
use crate::model::run::ObjectRef;
use crate::model::run::{RunInput, TaskToken};
use crate::model::step::Step;
use crate::ocr::OcrDocument;
use crate::ports::{BlobStore, OcrPoll, RunStatus, Started, Store};
use crate::Error;

pub(super) const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10";

/// A TIFF, whose pages ingest does not count: the OCR step reads it as a job (the upload of
/// the tests of the job's path; a TIFF is one page, read synchronously).
pub(super) const TIFF: &[u8] = b"II*\0\x08\0\0\0\x01\0\0\x01\x03\0\x01\0\0\0\x10\0";

/// The inbox key of `World::ocr_ready`'s document (and of its `newer_version`).
const READY_KEY: &str = "inbox/acme/inv.png";

struct World {
    ports: MemoryPorts,
    ctx: Context,
}

fn world() -> World {
    World {
        ports: MemoryPorts::default(),
        ctx: test_context(Clock::Fixed(datetime!(2026-11-30 12:00 UTC))),
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

    /// Scripts what the OCR provider answers for `key`.
    fn script_ocr(&self, key: &str, answer: OcrPoll) {
        self.ports
            .ocr
            .results
            .lock()
            .unwrap()
            .insert(key.into(), answer);
    }

    /// A run whose OCR is scripted to succeed (a 10.00 invoice), ingested and ready for its OCR
    /// step.
    async fn ocr_ready(&self) -> RunInput {
        let key = READY_KEY;
        self.script_ocr(key, ocr_of(&invoice_lines("10.00"), 0.97));
        self.input_of(
            &self
                .ingest(&self.upload(key, TIFF, "2026-11-30T10:00:00Z"))
                .await,
        )
    }

    /// A second version of `ocr_ready`'s document (other bytes, uploaded a second later),
    /// ingested: its run, ready for OCR.
    async fn newer_version(&self) -> RunInput {
        let mut newer_bytes = TIFF.to_vec();
        newer_bytes.push(7);
        let event = self.upload(READY_KEY, &newer_bytes, "2026-11-30T10:00:01Z");
        self.input_of(&self.ingest(&event).await)
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

    /// OCR as the deployed workflow runs it: the Task's invocation starts the job and waits
    /// with a token, the job's completion notification ends the wait (its poll retried while
    /// the job runs); the normalized OCR the callback carried.
    async fn ocr(&self, input: &RunInput) -> Result<ObjectRef, Error> {
        let token = TaskToken::new(format!("ocr-{}", input.run_id)).unwrap();
        let mut ended = wait::start_and_wait(&self.ports, &self.ctx, input, &token).await?;
        while ended == Ended::Waiting {
            let job = self.ports.ocr.job_of(&Step::Ocr.operation(&input.run_id));
            let run = &input.run_id;
            let waiter = wait::ended(&self.ports, run, &job.unwrap()).await?;
            ended = match wait::end_wait(&self.ports, &self.ctx, &waiter.unwrap()).await {
                Err(Error::InProgress(_)) => Ended::Waiting,
                other => other?,
            };
        }
        match ended {
            Ended::Succeeded(polled) => Ok(polled.normalized.expect("a succeeded poll's OCR")),
            Ended::Failed(kind) => Err(kind.with_detail("the OCR Task failed")),
            other => panic!("the wait ended as {other:?}"),
        }
    }

    /// Runs the state machine's path for one run: OCR (by callback), validate, route.
    async fn run(&self, input: &RunInput) -> Result<(String, Option<ObjectRef>), Error> {
        let normalized = self.ocr(input).await?;
        let validated = validate::run(&self.ports, &self.ctx, input, &normalized).await?;
        if validated.decision != "auto_approve" {
            return Ok((validated.decision, None));
        }
        let routed = route::run(&self.ports, &self.ctx, input, &validated.report, None).await?;
        Ok((routed.status, Some(routed.result)))
    }

    /// The Task callbacks sent so far: (token, `Ok(output)` or `Err(error name)`).
    fn callbacks(&self) -> Vec<(String, Result<Value, String>)> {
        self.ports.callback.calls.lock().unwrap().clone()
    }

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

    /// The document's audit entries, after checking that the checkpoint is at the chain's head
    /// and the chain verifies up to it.
    async fn entries(&self, document: &DocumentId) -> Vec<AuditEntry> {
        let entries = self.ports.store.audit_entries(document).await.unwrap();
        let checkpoint = self.ports.store.audit_checkpoint(document).await.unwrap();
        assert_eq!(
            checkpoint,
            entries.last().map(|e| e.checkpoint()),
            "checkpoint at the head"
        );
        verify(document, &entries, checkpoint.as_ref()).expect("chain verifies");
        entries
    }

    /// The actions of the document's audit chain, checked as [`World::entries`] does.
    async fn chain_of(&self, document: &DocumentId) -> Vec<String> {
        let entries = self.entries(document).await;
        entries.iter().map(|e| e.draft.action.clone()).collect()
    }

    async fn json(&self, obj: &ObjectRef) -> Value {
        serde_json::from_slice(&self.ports.blobs.get(obj).await.unwrap()).unwrap()
    }
}

#[test]
fn the_clock_writes_audit_times_in_rfc_3339() {
    let clock = Clock::Fixed(time::OffsetDateTime::UNIX_EPOCH);
    assert_eq!(clock.now_rfc3339(), "1970-01-01T00:00:00Z");
}
