//! Human review in the workflow: `open` (the state machine's `waitForTaskToken` Task calls it
//! with the token), `decide` (a reviewer, through the API or the CLI), `escalate` (the wait
//! timed out). The rules of tasks and decisions are in [`crate::review`]; this module adds the
//! audit trail, the run's status and the one callback.
//!
//! - `open` is idempotent: a retried open finds the task and only stores the new token.
//! - `decide`: the caller's tenant must be the task's; the first decision wins by conditional
//!   write; only the winner sends the callback, once: `SendTaskSuccess` with the approved fields
//!   ([`Reviewed`], what route continues with) or `SendTaskFailure` `Business.ReviewRejected`.
//!   When Step Functions no longer waits (`TaskTimedOut`, `InvalidToken`), the task is marked
//!   `expired` and the caller is told so (`Conflict.ReviewExpired`); the decision stays recorded.
//! - `escalate`: the task expires (`States.Timeout`) and the run becomes `escalated`, owned by
//!   the configured owner (`docket ops unresolved` lists it), never silently failed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{record, Context};
use crate::audit::AuditDraft;
use crate::error::ErrorKind;
use crate::model::fields::FieldName;
use crate::model::run::{ObjectRef, RunInput, TaskToken};
use crate::model::step::Step;
use crate::ports::{
    BlobStore, Change, HasBlobs, HasCallback, HasReviews, HasStore, ReviewStore, RunStatus,
    TaskCallback,
};
use crate::review::{
    authorize, not_found, rfc3339, task_id_for, ExpireOutcome, Expiry, OpenTask, Opened, Refusal,
    ReviewDecision, ReviewField, ReviewTask, Reviewer, TaskId,
};
use crate::validate::ValidationReport;
use crate::Error;

/// What the workflow gets back from an approval (the `SendTaskSuccess` output) and route uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reviewed {
    /// The task.
    pub task_id: TaskId,
    /// Who approved.
    pub reviewer: String,
    /// The fields to route: the extracted ones with the reviewer's corrections.
    pub fields: BTreeMap<FieldName, ReviewField>,
}

/// What a reviewer asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Request {
    /// Approve, optionally correcting fields (`field name → value`).
    Approve {
        /// Corrections.
        #[serde(default)]
        set: BTreeMap<String, String>,
        /// A note.
        #[serde(default)]
        comment: Option<String>,
    },
    /// Reject, with a reason.
    Reject {
        /// Why.
        reason: String,
    },
}

/// What the state machine's `waitForTaskToken` Task hands [`open`] besides the run. Not
/// `Serialize`: it holds the token.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenRequest {
    /// The run's validation report.
    pub report: ObjectRef,
    /// Its normalized OCR.
    pub ocr: ObjectRef,
    /// The waiting Task attempt's token.
    pub token: TaskToken,
    /// How long the Task waits (its `TimeoutSeconds`): the task's deadline.
    pub timeout_seconds: i64,
}

/// Opens (or finds) the review task of a run whose validation needs a person, storing the
/// waiting Task's token. Returns the task as recorded.
pub async fn open(
    ports: &(impl HasBlobs + HasStore + HasReviews),
    ctx: &Context,
    input: &RunInput,
    request: OpenRequest,
) -> Result<ReviewTask, Error> {
    let OpenRequest {
        report: report_ref,
        ocr,
        token,
        timeout_seconds,
    } = request;
    let bytes = ports.blobs().get(&report_ref).await?;
    let report: ValidationReport = serde_json::from_slice(&bytes)
        .map_err(|e| Error::BadInput(format!("validation report unreadable: {e}")))?;
    let now = ctx.clock.now();
    let deadline = now + time::Duration::seconds(timeout_seconds);
    let task = ReviewTask::new(input, &report, ocr, report_ref, now, deadline)?;
    let opened = ports.reviews().open(OpenTask { task, token }).await?;
    if let Opened::Created(task) = &opened {
        let codes: Vec<&str> = task.reasons.iter().map(|r| r.code.as_str()).collect();
        let draft = AuditDraft::new(&ctx.actor, "review.opened", Some(&input.run_id))
            .operation(&Step::Review.operation(&input.run_id))
            .detail(json!({"taskId": task.task_id, "deadline": task.deadline, "reasons": codes}));
        let _ = record(ports.store(), ctx, &input.document_id, vec![], draft).await?;
    }
    Ok(opened.task().clone())
}

/// A reviewer's decision on `task_id`; see the module docs. Returns the task as decided.
pub async fn decide(
    ports: &(impl HasStore + HasReviews + HasCallback),
    ctx: &Context,
    reviewer: &Reviewer,
    task_id: &TaskId,
    request: &Request,
) -> Result<ReviewTask, Error> {
    let (store, reviews, callback) = (ports.store(), ports.reviews(), ports.callback());
    let task = reviews
        .get(task_id)
        .await?
        .ok_or_else(|| not_found(task_id))?;
    authorize(reviewer, &task)?;
    let now = ctx.clock.now();
    let decision = match request {
        Request::Approve { set, comment } => {
            ReviewDecision::approve(&task, reviewer, set, comment.as_deref(), &ctx.config, now)?.0
        }
        Request::Reject { reason } => ReviewDecision::reject(reviewer, reason, now)?,
    };
    // Past the deadline a pending task is not decided any more (the workflow stops waiting).
    if let Err(refusal) = crate::review::decide(&task, decision.clone(), now)? {
        if !is_retry_of(&refusal, &decision) {
            return Err(refusal.error());
        }
    }
    let op = Step::Review.operation(&task.run_id);
    let recorded = match reviews.decide(task_id, &decision).await? {
        // Ours is the decision: record it, then send the one callback.
        Ok(recorded) => {
            if recorded.delivered_at.is_some() {
                return Ok(recorded);
            }
            let action = if decision.is_approval() {
                "review.approved"
            } else {
                "review.rejected"
            };
            let draft = AuditDraft::new(&ctx.actor, action, Some(&task.run_id))
                .operation(&op)
                .detail(decision.audit_detail(task_id));
            let _ = record(store, ctx, &task.document_id, vec![], draft).await?;
            recorded
        }
        // The same reviewer repeats the same verdict after its callback failed: send the
        // recorded decision again (it is already in the audit log).
        Err(refusal) if is_retry_of(&refusal, &decision) => refusal.task().clone(),
        // A concurrent or earlier decision stands (first one wins), or the task expired.
        Err(refusal) => return Err(refusal.error()),
    };
    let recorded_decision = recorded.decision.clone().ok_or_else(|| {
        Error::Internal(format!("review task {task_id} decided without a decision"))
    })?;
    let token = reviews
        .token(task_id)
        .await?
        .ok_or_else(|| Error::Internal(format!("review task {task_id} has no token")))?;
    let sent = match recorded.approved_fields() {
        Some(fields) => {
            let output = Reviewed {
                task_id: task_id.clone(),
                reviewer: recorded_decision.reviewer.id.clone(),
                fields,
            };
            let output = serde_json::to_value(&output).expect("review outputs serialize");
            callback.succeed(&token, &output).await
        }
        None => {
            let cause = format!("rejected by reviewer {}", recorded_decision.reviewer.id);
            callback
                .fail(&token, ErrorKind::ReviewRejected, &cause)
                .await
        }
    };
    match sent {
        Ok(()) => reviews.mark_delivered(task_id, &rfc3339(now)).await,
        Err(Error::ReviewExpired(reason)) => {
            let expiry = Expiry {
                reason: reason.clone(),
                at: rfc3339(now),
            };
            match reviews.expire(task_id, &expiry).await? {
                // Delivered meanwhile (another attempt's callback went through): it stands.
                ExpireOutcome::Delivered(task) => return Ok(task),
                ExpireOutcome::Expired(_) => {
                    let draft = AuditDraft::new(&ctx.actor, "review.expired", Some(&task.run_id))
                        .operation(&op)
                        .detail(
                            json!({"taskId": task_id, "reason": reason, "decidedBy": reviewer.id}),
                        );
                    let _ = record(store, ctx, &task.document_id, vec![], draft).await?;
                }
                ExpireOutcome::AlreadyExpired(_) => {}
            }
            Err(Error::ReviewExpired(format!(
                "review task {task_id}: decided by {} but the workflow no longer waits ({reason})",
                reviewer.id
            )))
        }
        // The task stays decided and undelivered; the caller gets the error and may repeat the
        // same decision, which is then sent again.
        Err(other) => Err(other),
    }
}

/// Whether `refusal` is the store answering a repeat of `decision` by the same reviewer, with
/// the same verdict, whose callback was not delivered (so it must be sent again).
fn is_retry_of(refusal: &Refusal, decision: &ReviewDecision) -> bool {
    match refusal {
        Refusal::AlreadyDecided(t) => {
            t.delivered_at.is_none()
                && t.decision.as_ref().is_some_and(|d| {
                    d.reviewer == decision.reviewer && d.verdict == decision.verdict
                })
        }
        Refusal::Expired(_) => false,
    }
}

/// The wait for a decision timed out: the task expires and the run is escalated to its owner.
pub async fn escalate(
    ports: &(impl HasStore + HasReviews),
    ctx: &Context,
    input: &RunInput,
) -> Result<(), Error> {
    let reviews = ports.reviews();
    let task_id = task_id_for(&input.run_id);
    let now = ctx.clock.now();
    let expiry = Expiry {
        reason: "States.Timeout".into(),
        at: rfc3339(now),
    };
    if reviews.get(&task_id).await?.is_some() {
        if let ExpireOutcome::Delivered(_) = reviews.expire(&task_id, &expiry).await? {
            // A decision reached the workflow after all: nothing to escalate.
            return Ok(());
        }
    }
    let owner = &ctx.config.ledger.unresolved_owner;
    let change = Change::SetRunStatus {
        run_id: input.run_id.clone(),
        from: RunStatus::AwaitingReview,
        to: RunStatus::Escalated,
        outputs: BTreeMap::new(),
        error: Some("States.Timeout".into()),
    };
    let draft = AuditDraft::new(&ctx.actor, "review.escalated", Some(&input.run_id))
        .operation(&Step::Escalate.operation(&input.run_id))
        .detail(json!({"taskId": task_id, "owner": owner, "reason": "review not decided in time"}));
    // Refused: already escalated by an earlier attempt.
    let _ = record(ports.store(), ctx, &input.document_id, vec![change], draft).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Human review over the in-memory ports: a run that needs review, its task opened with a
    //! token, decided (or not) by reviewers, and routed, rejected or escalated.

    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use serde_json::Value;
    use time::macros::datetime;

    use super::*;
    use crate::audit::{verify, AuditEntry};
    use crate::config::PipelineConfig;
    use crate::ids::Tenant;
    use crate::memory::{MemoryCallback, MemoryPorts, MemoryStore};
    use crate::ports::{RunStatus, Store};
    use crate::review::{FieldSource, MemoryReviewStore, ReviewStatus, Verdict};
    use crate::steps::ingest::{self, IngestOutcome, ObjectCreated};
    use crate::steps::{ocr, route, validate, Clock, Layout};

    use crate::steps::tests::{invoice_lines, ocr_of, PNG};
    const BLURRY: &str = "inbox/acme/blurry.png";
    const CLEAR: &str = "inbox/acme/clear.png";

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

        /// Uploads `key`, ingests it and runs OCR and validation (the state machine's path up
        /// to its Decide state), the OCR reading every line at `confidence`.
        async fn validated(&self, key: &str, total: &str, confidence: f64) -> Validated {
            self.ports
                .ocr
                .results
                .lock()
                .unwrap()
                .insert(key.into(), ocr_of(&invoice_lines(total), confidence));
            let version = self.ports.blobs.upload("raw", key, PNG);
            let event = ObjectCreated {
                bucket: "raw".into(),
                key: key.into(),
                version_id: Some(version),
                sequencer: Some("0062E99A88DC407460".into()),
                time: Some("2026-11-30T10:00:00Z".into()),
            };
            let outcome = ingest::handle(&self.ports, &self.ctx, &event)
                .await
                .expect("ingest");
            let IngestOutcome::Started { run_id, .. } = outcome else {
                panic!("not started: {outcome:?}");
            };
            let input: RunInput = {
                let executions = self.ports.workflow.executions.lock().unwrap();
                serde_json::from_value(executions[run_id.as_str()]["run"].clone()).unwrap()
            };
            let started = ocr::start(&self.ports, &self.ctx, &input)
                .await
                .expect("ocr start");
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

        /// The document's audit entries, after checking that the chain verifies up to its
        /// checkpoint.
        async fn entries(&self, input: &RunInput) -> Vec<AuditEntry> {
            let document = &input.document_id;
            let entries = self.ports.store.audit_entries(document).await.unwrap();
            let checkpoint = self.ports.store.audit_checkpoint(document).await.unwrap();
            assert_eq!(checkpoint, entries.last().map(|e| e.checkpoint()));
            verify(document, &entries, checkpoint.as_ref()).expect("chain verifies");
            entries
        }

        async fn chain_of(&self, input: &RunInput) -> Vec<String> {
            let entries = self.entries(input).await;
            entries.iter().map(|e| e.draft.action.clone()).collect()
        }

        async fn entries_of(&self, input: &RunInput, action: &str) -> Vec<AuditEntry> {
            let entries = self.entries(input).await;
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

    /// The output of a `succeed` callback, as route gets it.
    fn reviewed_of(call: &(String, Result<Value, String>)) -> Reviewed {
        let output = call.1.as_ref().expect("a succeed callback");
        serde_json::from_value(output.clone()).expect("the output is a Reviewed")
    }

    // open

    #[tokio::test]
    async fn open_creates_one_pending_task_and_a_retried_open_only_stores_the_new_token() {
        // given a run awaiting review
        let w = world();
        let v = w.awaiting_review().await;

        // when the waiting Task opens its review, and a retry of the Task (a new attempt, a new
        // token, a new timeout, a minute later) opens it again
        let first = w.open(&v, "tok-1").await;
        let commits = w.commits();
        let retried = w.open_with(&w.later(60), &v, "tok-2", 7200).await.unwrap();

        // then there is one pending task of the run, showing the extracted fields and why
        // validation asked for a person, with one review.opened entry
        assert_eq!(first.task_id, crate::review::task_id_for(&v.input.run_id));
        assert_eq!(first.status, ReviewStatus::Pending);
        assert_eq!(first.tenant, v.input.tenant);
        assert_eq!(first.run_id, v.input.run_id);
        assert_eq!((&first.report, &first.ocr), (&v.report, &v.ocr));
        assert_eq!(first.document, v.input.raw);
        let total = &first.fields[&FieldName::TotalAmount];
        assert_eq!((total.value.as_str(), total.confidence), ("99.00", 0.55));
        assert!(
            matches!(total.source, FieldSource::Extracted { .. }),
            "{total:?}"
        );
        assert!(!first.reasons.is_empty());
        assert_eq!(first.created_at, "2026-11-30T12:00:00.000Z");
        assert_eq!(first.deadline, "2026-11-30T13:00:00.000Z");
        let opened = w.entries_of(&v.input, "review.opened").await;
        assert_eq!(opened.len(), 1);
        assert_eq!(opened[0].draft.detail["taskId"], first.task_id.as_str());
        assert_eq!(opened[0].draft.detail["deadline"], first.deadline.as_str());
        let codes: Vec<&str> = first.reasons.iter().map(|r| r.code.as_str()).collect();
        assert_eq!(opened[0].draft.detail["reasons"], serde_json::json!(codes));
        // and the retry keeps the task (its creation) but waits until the new deadline under
        // the new token, writing no second entry
        assert_eq!(retried.task_id, first.task_id);
        assert_eq!(retried.created_at, first.created_at);
        assert_eq!(retried.deadline, "2026-11-30T14:01:00.000Z");
        assert_eq!(
            w.ports.reviews.list(None, None).await.unwrap(),
            vec![retried]
        );
        let stored = w
            .ports
            .reviews
            .token(&first.task_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.expose(), "tok-2");
        assert_eq!(w.commits(), commits, "the retry wrote no audit entry");
        assert_eq!(w.entries_of(&v.input, "review.opened").await.len(), 1);
        assert_eq!(w.status(&v.input).await, RunStatus::AwaitingReview);
    }

    #[tokio::test]
    async fn an_open_after_the_decision_writes_nothing_and_keeps_the_deciding_token() {
        // given a task decided (and delivered) under the first token
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;
        w.decide(&alice(), &task.task_id, &approve(&[]))
            .await
            .unwrap();
        let chain = w.chain_of(&v.input).await;

        // when an open comes again with another token
        let again = w.open(&v, "tok-2").await;

        // then it returns the task as decided; no token, task or entry was written
        assert_eq!(again.status, ReviewStatus::Decided);
        assert_eq!(again, w.task(&task.task_id).await);
        let stored = w.ports.reviews.token(&task.task_id).await.unwrap().unwrap();
        assert_eq!(stored.expose(), "tok-1");
        assert_eq!(w.chain_of(&v.input).await, chain);
    }

    #[tokio::test]
    async fn open_refuses_a_run_that_does_not_need_review_and_writes_nothing() {
        // given a run whose clear OCR was auto-approved
        let w = world();
        let v = w.validated(CLEAR, "10.00", 0.97).await;
        assert_eq!(v.decision, "auto_approve");
        let commits = w.commits();

        // when a review is opened for it
        let err = w.open_with(&w.ctx, &v, "tok-1", 3600).await.unwrap_err();
        let no_time = world();
        let blurry = no_time.awaiting_review().await;
        let zero = no_time
            .open_with(&no_time.ctx, &blurry, "tok-1", 0)
            .await
            .unwrap_err();

        // then it is bad input, and neither a task nor an entry exists (nor for a timeout that
        // leaves no time to decide)
        assert_eq!(err.name(), "Fatal.BadInput");
        assert_eq!(zero.name(), "Fatal.BadInput");
        assert!(w.ports.reviews.list(None, None).await.unwrap().is_empty());
        assert!(no_time
            .ports
            .reviews
            .list(None, None)
            .await
            .unwrap()
            .is_empty());
        assert_eq!(w.commits(), commits);
        assert!(no_time
            .entries_of(&blurry.input, "review.opened")
            .await
            .is_empty());
    }

    // decide → route

    #[tokio::test]
    async fn an_approval_with_a_corrected_total_resumes_the_workflow_once_and_routes_the_correction(
    ) {
        // given a pending task of tenant acme whose total was read as 99.00 at 0.55
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;

        // when alice of acme approves it, setting the total to 120.00
        let decided = w
            .decide(
                &alice(),
                &task.task_id,
                &approve(&[("total_amount", " 120.00 ")]),
            )
            .await
            .unwrap();

        // then the task is decided by her and delivered
        assert_eq!(decided.status, ReviewStatus::Decided);
        assert!(decided.delivered_at.is_some());
        assert_eq!(decided, w.task(&task.task_id).await);
        let decision = decided.decision.as_ref().unwrap();
        assert_eq!(decision.reviewer, alice());
        let Verdict::Approve { corrections, .. } = &decision.verdict else {
            panic!("not an approval: {decision:?}")
        };
        assert_eq!(
            corrections,
            &BTreeMap::from([(FieldName::TotalAmount, "120.00".to_string())])
        );
        // and the workflow was resumed exactly once, under the task's token, with the fields
        // to route: the corrected total set by alice, the rest as extracted
        let calls = w.calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].0, "tok-1");
        let reviewed = reviewed_of(&calls[0]);
        assert_eq!(reviewed.task_id, task.task_id);
        assert_eq!(reviewed.reviewer, "alice@acme");
        let total = &reviewed.fields[&FieldName::TotalAmount];
        assert_eq!(total.value, "120.00");
        assert_eq!(total.confidence, 1.0);
        assert_eq!(
            total.source,
            FieldSource::Reviewer {
                id: "alice@acme".into()
            }
        );
        for (name, field) in &task.fields {
            if *name != FieldName::TotalAmount {
                assert_eq!(&reviewed.fields[name], field, "{name} kept as extracted");
            }
        }
        assert_eq!(Some(reviewed.fields.clone()), decided.approved_fields());
        // and the audit log has one review.approved entry naming the changed field, without
        // its values
        let approved = w.entries_of(&v.input, "review.approved").await;
        assert_eq!(approved.len(), 1);
        let detail = &approved[0].draft.detail;
        assert_eq!(detail["taskId"], task.task_id.as_str());
        assert_eq!(detail["reviewer"], "alice@acme");
        assert_eq!(detail["verdict"], "approve");
        let changed: Vec<&Value> = detail["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["field"])
            .collect();
        assert_eq!(changed, ["total_amount"]);
        assert_eq!(detail["changes"][0]["confidenceBefore"], 0.55);
        assert_eq!(detail["changes"][0]["confidenceAfter"], 1.0);
        let text = detail.to_string();
        assert!(
            !text.contains("120.00") && !text.contains("99.00"),
            "values in the audit detail: {text}"
        );

        // when route continues with the reviewed fields
        let routed = route::run(&w.ports, &w.ctx, &v.input, &v.report, Some(&reviewed))
            .await
            .unwrap();

        // then result.json carries the reviewer's decision and corrected total, and the run
        // moved from awaiting_review to completed as the document's current result
        assert_eq!(routed.status, "completed");
        assert_eq!(
            routed.result,
            w.ctx
                .layout
                .result(&v.input.tenant, &v.input.document_id, &v.input.run_id)
        );
        let result: Value =
            serde_json::from_slice(&w.ports.blobs.get(&routed.result).await.unwrap()).unwrap();
        assert_eq!(result["decision"], "approved_by_reviewer");
        assert_eq!(result["reviewer"], "alice@acme");
        assert_eq!(result["reviewTask"], task.task_id.as_str());
        assert_eq!(result["fields"]["total_amount"]["value"], "120.00");
        assert_eq!(result["fields"]["total_amount"]["confidence"], 1.0);
        assert_eq!(
            result["fields"]["total_amount"]["source"]["kind"],
            "reviewer"
        );
        assert_eq!(result["fields"]["invoice_number"]["value"], "INV-2026-0042");
        let run = w.ports.store.run(&v.input.run_id).await.unwrap().unwrap();
        assert_eq!(run.status, RunStatus::Completed);
        assert_eq!(run.outputs["result"], routed.result.to_string());
        let doc = w
            .ports
            .store
            .document(&v.input.document_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(doc.current_run_id, v.input.run_id);
        assert_eq!(
            w.chain_of(&v.input).await,
            [
                "document.accepted",
                "ocr.started",
                "ocr.completed",
                "validation.completed",
                "review.opened",
                "review.approved",
                "run.completed"
            ]
        );
    }

    #[tokio::test]
    async fn a_rejection_fails_the_workflow_once_and_the_run_ends_rejected_without_a_result() {
        // given a pending task
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;

        // when alice rejects it, and the workflow records the rejection (twice: a retry)
        let decided = w
            .decide(&alice(), &task.task_id, &reject("not one of our suppliers"))
            .await
            .unwrap();
        route::reject(&w.ports, &w.ctx, &v.input).await.unwrap();
        route::reject(&w.ports, &w.ctx, &v.input).await.unwrap();

        // then the task is decided and delivered, the workflow was failed once with
        // Business.ReviewRejected, and the run is rejected with no result
        assert_eq!(decided.status, ReviewStatus::Decided);
        assert!(decided.delivered_at.is_some());
        assert!(!decided.decision.as_ref().unwrap().is_approval());
        assert_eq!(
            w.calls(),
            [(
                "tok-1".to_string(),
                Err("Business.ReviewRejected".to_string())
            )]
        );
        let run = w.ports.store.run(&v.input.run_id).await.unwrap().unwrap();
        assert_eq!(run.status, RunStatus::Rejected);
        assert_eq!(run.error.as_deref(), Some("Business.ReviewRejected"));
        assert!(w.results().is_empty(), "{:?}", w.results());
        assert!(w
            .ports
            .store
            .document(&v.input.document_id)
            .await
            .unwrap()
            .is_none());
        let chain = w.chain_of(&v.input).await;
        assert_eq!(
            &chain[chain.len() - 3..],
            ["review.opened", "review.rejected", "run.rejected"]
        );
        let rejected = &w.entries_of(&v.input, "review.rejected").await[0];
        assert_eq!(rejected.draft.detail["verdict"], "reject");
        assert!(
            !rejected.draft.detail.to_string().contains("suppliers"),
            "the reason is content: it stays in the review record"
        );
    }

    #[tokio::test]
    async fn route_refuses_a_run_awaiting_review_without_its_review_and_a_review_without_need() {
        // given a run awaiting review and an auto-approved one
        let w = world();
        let blurry = w.awaiting_review().await;
        let clear = w.validated(CLEAR, "10.00", 0.97).await;
        let reviewed = Reviewed {
            task_id: crate::review::task_id_for(&clear.input.run_id),
            reviewer: "alice@acme".into(),
            fields: BTreeMap::new(),
        };

        // when route is called for the first without a review, and the second with one
        let unreviewed = route::run(&w.ports, &w.ctx, &blurry.input, &blurry.report, None).await;
        let needless = route::run(
            &w.ports,
            &w.ctx,
            &clear.input,
            &clear.report,
            Some(&reviewed),
        )
        .await;

        // then both are bad input, and no result was written
        assert_eq!(unreviewed.unwrap_err().name(), "Fatal.BadInput");
        assert_eq!(needless.unwrap_err().name(), "Fatal.BadInput");
        assert!(w.results().is_empty());
        assert_eq!(w.status(&blurry.input).await, RunStatus::AwaitingReview);
        assert_eq!(w.status(&clear.input).await, RunStatus::Started);
    }

    // the first decision wins

    #[tokio::test]
    async fn a_rejection_after_an_approval_is_already_decided_naming_the_first_reviewer() {
        // given a task approved by alice
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;
        let approved = w
            .decide(
                &alice(),
                &task.task_id,
                &approve(&[("total_amount", "120.00")]),
            )
            .await
            .unwrap();
        let commits = w.commits();

        // when bob rejects it
        let err = w
            .decide(&bob(), &task.task_id, &reject("looks wrong"))
            .await
            .unwrap_err();

        // then he is told who decided first; her approval stands, one callback in all
        assert_eq!(err.name(), "Conflict.AlreadyDecided");
        let message = err.to_string();
        assert!(message.contains("approved by alice@acme"), "{message}");
        assert!(!message.contains("120.00"), "{message}");
        assert_eq!(w.task(&task.task_id).await, approved);
        assert_eq!(w.calls().len(), 1);
        assert!(w.calls()[0].1.is_ok());
        assert_eq!(w.commits(), commits, "nothing written");
        assert!(w.entries_of(&v.input, "review.rejected").await.is_empty());
    }

    #[tokio::test]
    async fn a_second_approval_with_other_corrections_is_already_decided_and_changes_nothing() {
        // given a task approved by alice with the total 120.00
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;
        let first = w
            .decide(
                &alice(),
                &task.task_id,
                &approve(&[("total_amount", "120.00")]),
            )
            .await
            .unwrap();

        // when bob, and then alice herself, approve with other corrections
        let by_bob = w
            .decide(
                &bob(),
                &task.task_id,
                &approve(&[("total_amount", "130.00")]),
            )
            .await
            .unwrap_err();
        let by_alice = w
            .decide(
                &alice(),
                &task.task_id,
                &approve(&[("total_amount", "120.00"), ("currency", "USD")]),
            )
            .await
            .unwrap_err();

        // then both are told it was approved by alice; the first correction is the one
        // recorded and sent, once
        for err in [&by_bob, &by_alice] {
            assert_eq!(err.name(), "Conflict.AlreadyDecided");
            assert!(err.to_string().contains("approved by alice@acme"), "{err}");
        }
        assert_eq!(w.task(&task.task_id).await, first);
        let calls = w.calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        let reviewed = reviewed_of(&calls[0]);
        assert_eq!(reviewed.fields[&FieldName::TotalAmount].value, "120.00");
        assert_eq!(reviewed.fields[&FieldName::Currency].value, "EUR");
        assert_eq!(w.entries_of(&v.input, "review.approved").await.len(), 1);
    }

    #[tokio::test]
    async fn a_reviewer_of_another_tenant_is_told_not_found_and_nothing_is_written() {
        // given a pending task of tenant acme
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;
        let commits = w.commits();
        let mallory = reviewer("mallory@globex", "globex");

        // when a reviewer of globex approves it, rejects it, and decides a task that does not
        // exist
        let approved = w
            .decide(
                &mallory,
                &task.task_id,
                &approve(&[("total_amount", "1.00")]),
            )
            .await
            .unwrap_err();
        let rejected = w
            .decide(&mallory, &task.task_id, &reject("mine now"))
            .await
            .unwrap_err();
        let missing_id = crate::review::task_id_for(
            &w.validated("inbox/globex/x.png", "1.00", 0.97)
                .await
                .input
                .run_id,
        );
        let commits_after_missing_run = w.commits();
        let missing = w
            .decide(&mallory, &missing_id, &reject("mine now"))
            .await
            .unwrap_err();

        // then the answer is the same as for a task that does not exist, and nothing moved
        for err in [&approved, &rejected, &missing] {
            assert_eq!(err.name(), "Business.ReviewNotFound");
        }
        assert_eq!(
            approved.to_string(),
            missing
                .to_string()
                .replace(missing_id.as_str(), task.task_id.as_str())
        );
        let recorded = w.task(&task.task_id).await;
        assert_eq!(recorded.status, ReviewStatus::Pending);
        assert!(recorded.decision.is_none());
        assert!(w.calls().is_empty());
        assert_eq!(w.commits() - commits, commits_after_missing_run - commits);
        assert_eq!(
            w.chain_of(&v.input).await.last().map(String::as_str),
            Some("review.opened")
        );
    }

    // expiry

    #[tokio::test]
    async fn a_decision_the_workflow_no_longer_waits_for_expires_the_task_and_keeps_the_decision() {
        // given a pending task whose Task timed out in Step Functions: its token is closed
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;
        w.ports.callback.closed.lock().unwrap().push("tok-1".into());

        // when alice approves it
        let err = w
            .decide(
                &alice(),
                &task.task_id,
                &approve(&[("total_amount", "120.00")]),
            )
            .await
            .unwrap_err();

        // then she is told it expired; the task is expired with her decision kept, undelivered
        assert_eq!(err.name(), "Conflict.ReviewExpired");
        let message = err.to_string();
        assert!(
            message.contains("alice@acme") && message.contains("TaskTimedOut"),
            "{message}"
        );
        let expired = w.task(&task.task_id).await;
        assert_eq!(expired.status, ReviewStatus::Expired);
        let decision = expired.decision.as_ref().expect("the decision is kept");
        assert_eq!(decision.reviewer, alice());
        assert!(decision.is_approval());
        assert!(expired.delivered_at.is_none());
        assert_eq!(expired.expiry.as_ref().unwrap().reason, "TaskTimedOut");
        assert!(w.calls().is_empty(), "no callback was accepted");
        // and the audit log has the approval, then its expiry naming who decided
        let chain = w.chain_of(&v.input).await;
        assert_eq!(
            &chain[chain.len() - 3..],
            ["review.opened", "review.approved", "review.expired"]
        );
        let entry = &w.entries_of(&v.input, "review.expired").await[0];
        assert_eq!(entry.draft.detail["taskId"], task.task_id.as_str());
        assert_eq!(entry.draft.detail["reason"], "TaskTimedOut");
        assert_eq!(entry.draft.detail["decidedBy"], "alice@acme");
        assert_eq!(w.status(&v.input).await, RunStatus::AwaitingReview);

        // and when bob then rejects it, he is told it expired; nothing more is written
        let commits = w.commits();
        let late = w
            .decide(&bob(), &task.task_id, &reject("too late"))
            .await
            .unwrap_err();
        assert_eq!(late.name(), "Conflict.ReviewExpired");
        assert_eq!(w.commits(), commits);
        assert_eq!(w.task(&task.task_id).await, expired);
    }

    #[tokio::test]
    async fn a_review_not_decided_in_time_is_escalated_to_its_owner_once_and_cannot_be_approved() {
        // given a pending task
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;

        // when the wait times out (and the escalation is retried)
        w.escalate_with(&w.ctx, &v.input).await.unwrap();
        w.escalate_with(&w.ctx, &v.input).await.unwrap();

        // then the task expired on the workflow's timeout, without a decision, and the run is
        // escalated to the configured owner with one entry
        let expired = w.task(&task.task_id).await;
        assert_eq!(expired.status, ReviewStatus::Expired);
        assert_eq!(expired.expiry.as_ref().unwrap().reason, "States.Timeout");
        assert!(expired.decision.is_none());
        let run = w.ports.store.run(&v.input.run_id).await.unwrap().unwrap();
        assert_eq!(run.status, RunStatus::Escalated);
        assert_eq!(run.error.as_deref(), Some("States.Timeout"));
        let escalated = w.entries_of(&v.input, "review.escalated").await;
        assert_eq!(escalated.len(), 1);
        let owner = &w.ctx.config.ledger.unresolved_owner;
        assert!(!owner.is_empty());
        assert_eq!(escalated[0].draft.detail["owner"], owner.as_str());
        assert_eq!(escalated[0].draft.detail["taskId"], task.task_id.as_str());

        // and when alice approves it later, and the escalation runs once more after that
        let late = w
            .decide(
                &alice(),
                &task.task_id,
                &approve(&[("total_amount", "120.00")]),
            )
            .await
            .unwrap_err();
        w.escalate_with(&w.later(600), &v.input).await.unwrap();

        // then she is told it expired; no callback, no decision, still one escalation
        assert_eq!(late.name(), "Conflict.ReviewExpired");
        assert!(late.to_string().contains("States.Timeout"), "{late}");
        assert!(w.calls().is_empty());
        assert_eq!(w.task(&task.task_id).await, expired);
        assert!(w.entries_of(&v.input, "review.approved").await.is_empty());
        assert_eq!(w.entries_of(&v.input, "review.escalated").await.len(), 1);
        assert_eq!(w.status(&v.input).await, RunStatus::Escalated);
    }

    // bad corrections

    #[tokio::test]
    async fn corrections_that_do_not_parse_are_bad_input_and_leave_the_task_pending() {
        // given a pending task
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;
        let commits = w.commits();

        // when alice approves with a total that is not an amount, an unknown field, an empty
        // value, a currency nobody knows, or rejects without a reason
        let cases = [
            approve(&[("total_amount", "abc")]),
            approve(&[("tip_amount", "5.00")]),
            approve(&[("total_amount", "   ")]),
            approve(&[("currency", "ZZZ")]),
            approve(&[("total_amount", "120.00"), ("total", "120.00")]),
            reject("  "),
        ];
        for request in &cases {
            let err = w
                .decide(&alice(), &task.task_id, request)
                .await
                .unwrap_err();

            // then each is Fatal.BadInput, naming the field but not the value
            assert_eq!(err.name(), "Fatal.BadInput", "{request:?}");
            let message = err.to_string();
            assert!(
                !message.contains("abc") && !message.contains("ZZZ"),
                "{message}"
            );
        }
        let err = w
            .decide(&alice(), &task.task_id, &cases[0])
            .await
            .unwrap_err();
        assert!(err.to_string().contains("total_amount"), "{err}");
        let err = w
            .decide(&alice(), &task.task_id, &cases[1])
            .await
            .unwrap_err();
        assert!(err.to_string().contains("tip_amount"), "{err}");
        // and the task is still pending and undecided: no callback, nothing written
        assert_eq!(w.task(&task.task_id).await, task);
        assert!(w.calls().is_empty());
        assert_eq!(w.commits(), commits);

        // and a well-formed approval afterwards still goes through
        w.decide(
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", "120.00")]),
        )
        .await
        .unwrap();
        assert_eq!(w.calls().len(), 1);
    }

    // the token stays server-side

    #[tokio::test]
    async fn the_token_never_appears_in_the_audit_log_the_task_or_an_error() {
        // given distinctive tokens through every path that writes: an open, a retried open,
        // an approval delivered; another run opened, approved too late, and escalated
        let w = world();
        let secrets = [
            "AAAA-token-one-7f3c9e1b",
            "AAAA-token-two-52d8a640",
            "AAAA-token-three-e19b77c2",
        ];
        let v = w.awaiting_review().await;
        let task = w.open(&v, secrets[0]).await;
        w.open(&v, secrets[1]).await;
        w.decide(
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", "120.00")]),
        )
        .await
        .unwrap();
        let late = w.validated("inbox/acme/late.png", "42.00", 0.55).await;
        assert_eq!(late.decision, "needs_review");
        let late_task = w.open(&late, secrets[2]).await;
        w.ports
            .callback
            .closed
            .lock()
            .unwrap()
            .push(secrets[2].into());
        let expired = w
            .decide(&bob(), &late_task.task_id, &reject("blurry"))
            .await
            .unwrap_err();
        w.escalate_with(&w.ctx, &late.input).await.unwrap();
        let refused = w
            .decide(&alice(), &late_task.task_id, &approve(&[]))
            .await
            .unwrap_err();

        // when every audit entry, task and error is serialized or printed
        let mut texts = Vec::new();
        for input in [&v.input, &late.input] {
            for entry in w.entries(input).await {
                texts.push(serde_json::to_string(&entry).unwrap());
                texts.push(format!("{entry:?}"));
            }
        }
        for t in w.ports.reviews.list(None, None).await.unwrap() {
            texts.push(serde_json::to_string(&t).unwrap());
            texts.push(format!("{t:?}"));
        }
        for err in [&expired, &refused] {
            texts.push(err.to_string());
            texts.push(format!("{err:?}"));
        }
        texts.push(format!("{:?}", w.ports.reviews));

        // then no text holds a token (the callbacks did get them: they are the only way out)
        assert!(texts.len() > 20);
        for text in &texts {
            for secret in secrets {
                assert!(!text.contains(secret), "token in {text}");
            }
        }
        assert_eq!(w.calls().len(), 1);
        assert_eq!(w.calls()[0].0, secrets[1]);
    }

    // callbacks that fail

    /// A callback whose next `fail_next` calls fail as an unavailable Step Functions would.
    #[derive(Default)]
    struct FlakyCallback {
        inner: MemoryCallback,
        fail_next: Mutex<usize>,
    }

    impl FlakyCallback {
        fn unavailable(&self) -> Result<(), Error> {
            let mut fail = self.fail_next.lock().unwrap();
            if *fail > 0 {
                *fail -= 1;
                return Err(Error::Dependency("SendTask*: service unavailable".into()));
            }
            Ok(())
        }
    }

    /// The world's ports with another callback.
    struct WithCallback<'a, C> {
        ports: &'a MemoryPorts,
        callback: &'a C,
    }

    impl<C: Sync> HasStore for WithCallback<'_, C> {
        type Store = MemoryStore;
        fn store(&self) -> &MemoryStore {
            &self.ports.store
        }
    }

    impl<C: Sync> HasReviews for WithCallback<'_, C> {
        type Reviews = MemoryReviewStore;
        fn reviews(&self) -> &MemoryReviewStore {
            &self.ports.reviews
        }
    }

    impl<C: TaskCallback> HasCallback for WithCallback<'_, C> {
        type Callback = C;
        fn callback(&self) -> &C {
            self.callback
        }
    }

    impl TaskCallback for FlakyCallback {
        async fn succeed(&self, token: &TaskToken, output: &Value) -> Result<(), Error> {
            self.unavailable()?;
            self.inner.succeed(token, output).await
        }

        async fn fail(
            &self,
            token: &TaskToken,
            error: ErrorKind,
            cause: &str,
        ) -> Result<(), Error> {
            self.unavailable()?;
            self.inner.fail(token, error, cause).await
        }
    }

    #[tokio::test]
    async fn a_callback_that_fails_leaves_the_decision_recorded_and_undelivered() {
        // given a pending task and Step Functions unavailable for one call
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;
        let callback = FlakyCallback::default();
        *callback.fail_next.lock().unwrap() = 1;

        // when alice approves
        let err = decide(
            &WithCallback {
                ports: &w.ports,
                callback: &callback,
            },
            &w.ctx,
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", "120.00")]),
        )
        .await
        .unwrap_err();

        // then she gets the transient error; her decision is recorded and audited, not
        // delivered, and the task is not expired
        assert_eq!(err.name(), "Transient.Dependency");
        let recorded = w.task(&task.task_id).await;
        assert_eq!(recorded.status, ReviewStatus::Decided);
        assert!(recorded.delivered_at.is_none());
        assert_eq!(recorded.decision.as_ref().unwrap().reviewer, alice());
        assert!(callback.inner.calls.lock().unwrap().is_empty());
        assert_eq!(w.entries_of(&v.input, "review.approved").await.len(), 1);
    }

    #[tokio::test]
    async fn a_decision_retried_after_a_failed_callback_is_sent_again() {
        // given alice's approval whose callback failed (Step Functions unavailable)
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;
        let callback = FlakyCallback::default();
        *callback.fail_next.lock().unwrap() = 1;
        let request = approve(&[("total_amount", "120.00")]);
        let first = decide(
            &WithCallback {
                ports: &w.ports,
                callback: &callback,
            },
            &w.ctx,
            &alice(),
            &task.task_id,
            &request,
        )
        .await;
        assert_eq!(first.unwrap_err().name(), "Transient.Dependency");

        // when she repeats the same request a second later, as the step's comment tells her to
        let retried = decide(
            &WithCallback {
                ports: &w.ports,
                callback: &callback,
            },
            &w.later(1),
            &alice(),
            &task.task_id,
            &request,
        )
        .await;

        // then the recorded decision is sent and delivered, once, with one approval entry
        let delivered = retried.expect("the retry delivers the recorded decision");
        assert!(delivered.delivered_at.is_some());
        assert_eq!(callback.inner.calls.lock().unwrap().len(), 1);
        assert_eq!(w.entries_of(&v.input, "review.approved").await.len(), 1);
    }

    #[tokio::test]
    async fn a_repeat_of_a_delivered_decision_is_neither_sent_again_nor_audited_as_expired() {
        // given alice's approval, delivered; Step Functions has closed the token since
        let w = world();
        let v = w.awaiting_review().await;
        let task = w.open(&v, "tok-1").await;
        let request = approve(&[("total_amount", "120.00")]);
        let delivered = w.decide(&alice(), &task.task_id, &request).await.unwrap();
        w.ports.callback.closed.lock().unwrap().push("tok-1".into());

        // when the very same decision comes again (same instant: the store acknowledges it)
        let again = w.decide(&alice(), &task.task_id, &request).await;

        // then it is acknowledged as delivered: the task stands, and no review.expired entry
        // contradicts it
        assert_eq!(again.expect("acknowledged"), delivered);
        assert_eq!(w.task(&task.task_id).await.status, ReviewStatus::Decided);
        assert!(w.entries_of(&v.input, "review.expired").await.is_empty());
        assert_eq!(w.calls().len(), 1);
    }
}
