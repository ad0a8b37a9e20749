//! Human review over the in-memory ports: a run that needs review, its task opened with a
//! token, decided (or not) by reviewers, and routed, rejected or escalated. The helpers are
//! here; `wait` (the Validate Task's wait), `open`, `decide` (and route), `expiry`, `callbacks`
//! and `race` hold the tests.

mod callbacks;
mod decide;
mod expiry;
mod open;
mod race;
mod wait;

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::Value;

use super::*;
use crate::error::ErrorKind;
use crate::ids::Tenant;
use crate::memory::{MemoryCallback, MemoryReviewStore};
use crate::model::fields::FieldName;
use crate::model::run::TaskToken;
use crate::ports::{HasCallback, HasReviews, HasStore, ReviewStore, TaskCallback};
use crate::review::{FieldSource, ReviewStatus, ReviewTask, Reviewer, TaskId, Verdict};
use crate::steps::review::*;

const BLURRY: &str = "inbox/acme/blurry.png";
const CLEAR: &str = "inbox/acme/clear.png";

fn token(s: &str) -> TaskToken {
    TaskToken::new(s).unwrap()
}

fn reviewer(id: &str, tenant: &str) -> Reviewer {
    Reviewer::new(id, Tenant::parse(tenant).unwrap()).unwrap()
}

fn approve(set: &[(&str, &str)]) -> Request {
    Request::Approve {
        set: set
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        comment: None,
    }
}

fn reject(reason: &str) -> Request {
    Request::Reject {
        reason: reason.into(),
    }
}

/// A run of one uploaded document, validated, with the pointers its review needs.
struct Validated {
    input: RunInput,
    report: ObjectRef,
    ocr: ObjectRef,
    decision: String,
}

impl World {
    /// Uploads `key`, ingests it and runs OCR and validation's rules (the state machine's path
    /// up to the Validate Task's wait), the OCR reading every line at `confidence`.
    async fn validated(&self, key: &str, total: &str, confidence: f64) -> Validated {
        self.script_ocr(key, ocr_of(&invoice_lines(total), confidence));
        let event = self.upload(key, TIFF, "2026-11-30T10:00:00Z");
        let input = self.input_of(&self.ingest(&event).await);
        let started = self.start(&input).await.expect("ocr start");
        let normalized = loop {
            let polled = ocr::poll(&self.ports, &self.ctx, &input, &started)
                .await
                .expect("ocr poll");
            if let Some(n) = polled.normalized {
                break n;
            }
        };
        let validated = validate::run(&self.ports, &self.ctx, &input, &normalized)
            .await
            .expect("validate");
        assert_eq!(
            validated.report,
            self.ctx
                .layout
                .validation(&input.tenant, &input.document_id, &input.run_id)
        );
        Validated {
            input,
            report: validated.report,
            ocr: normalized,
            decision: validated.decision,
        }
    }

    /// A run of tenant `acme` whose blurry OCR (confidence 0.55, total 99.00) waits for
    /// review.
    async fn awaiting_review(&self) -> Validated {
        let v = self.validated(BLURRY, "99.00", 0.55).await;
        assert_eq!(v.decision, "needs_review");
        assert_eq!(self.status(&v.input).await, RunStatus::AwaitingReview);
        v
    }

    async fn open_with(
        &self,
        ctx: &Context,
        v: &Validated,
        tok: &str,
        timeout_seconds: i64,
    ) -> Result<ReviewTask, Error> {
        let request = OpenRequest {
            report: v.report.clone(),
            ocr: v.ocr.clone(),
            token: token(tok),
            timeout_seconds,
        };
        open(&self.ports, ctx, &v.input, request).await
    }

    async fn open(&self, v: &Validated, tok: &str) -> ReviewTask {
        self.open_with(&self.ctx, v, tok, 3600).await.expect("open")
    }

    async fn decide_with(
        &self,
        ctx: &Context,
        who: &Reviewer,
        task: &TaskId,
        request: &Request,
    ) -> Result<ReviewTask, Error> {
        decide(&self.ports, ctx, who, task, request).await
    }

    async fn decide(
        &self,
        who: &Reviewer,
        task: &TaskId,
        request: &Request,
    ) -> Result<ReviewTask, Error> {
        self.decide_with(&self.ctx, who, task, request).await
    }

    async fn escalate_with(&self, ctx: &Context, input: &RunInput) -> Result<(), Error> {
        escalate(&self.ports, ctx, input).await
    }

    async fn task(&self, id: &TaskId) -> ReviewTask {
        self.ports.reviews.get(id).await.unwrap().expect("a task")
    }

    async fn status(&self, input: &RunInput) -> RunStatus {
        self.ports
            .store
            .run(&input.run_id)
            .await
            .unwrap()
            .unwrap()
            .status
    }

    fn calls(&self) -> Vec<(String, Result<Value, String>)> {
        self.ports.callback.calls.lock().unwrap().clone()
    }

    fn commits(&self) -> usize {
        *self.ports.store.commits.lock().unwrap()
    }

    async fn entries_of(&self, input: &RunInput, action: &str) -> Vec<AuditEntry> {
        let entries = self.entries(&input.document_id).await;
        entries
            .into_iter()
            .filter(|e| e.draft.action == action)
            .collect()
    }

    fn results(&self) -> Vec<String> {
        self.ports
            .blobs
            .keys("derived")
            .into_iter()
            .filter(|k| k.ends_with("result.json"))
            .collect()
    }
}

fn alice() -> Reviewer {
    reviewer("alice@acme", "acme")
}

fn bob() -> Reviewer {
    reviewer("bob@acme", "acme")
}

/// The output of a `succeed` callback, as route gets it: the approval, by a reviewer.
fn reviewed_of(call: &(String, Result<Value, String>)) -> Reviewed {
    let approved = approved_of(call);
    approved.review.expect("a reviewer's approval")
}

/// The output of a `succeed` callback: what ends the Validate Task's wait.
fn approved_of(call: &(String, Result<Value, String>)) -> Approved {
    let output = call.1.as_ref().expect("a succeed callback");
    serde_json::from_value(output.clone()).expect("the output is an Approved")
}
