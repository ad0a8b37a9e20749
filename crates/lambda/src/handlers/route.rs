//! route: writes an approved run's result and makes it the document's current one (or records
//! it as stale); `action: reject` records a run a reviewer rejected. `action: execution_ended`
//! (a rule on Step Functions' status change events) records a run whose execution failed, and
//! `action: reopen` (`docket ops redrive`) moves it back before its execution is redriven
//! (`docket_core::steps::recover`). See `docket_core::steps::route`. `action: sweep` (a schedule)
//! relays the events that routes left `persisted` in the outbox (`docket_core::steps::saga::stuck`)
//! and redelivers those still unanswered (`docket_core::steps::saga::unanswered`). `action: route`
//! runs in a Task with a token: once routed, the same invocation keeps the token for the consumer's
//! answer to the run's accepted event (`docket_core::steps::saga::await_receipt`), and `action:
//! receipt` (a rule on the bus) is that answer, which ends the wait
//! (`docket_core::steps::saga::receipt`).

use docket_core::ids::RunId;
use docket_core::model::run::{ObjectRef, RunInput, TaskToken};
use docket_core::model::step::Step;
use docket_core::ports::{
    HasBlobs, HasCallback, HasConfigs, HasEvents, HasJournal, HasOutbox, HasReviews, HasStore,
    HasWaits, Outbox, ReviewStore, RunRecord, RunStatus, Store,
};
use docket_core::saga::sink::Answer;
use docket_core::saga::Effect;
use docket_core::steps::recover::{self, Reopened};
use docket_core::steps::review::Reviewed;
use docket_core::steps::saga::{self, Swept};
use docket_core::steps::{route, Context};
use docket_core::Error;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::metrics::{self, Metric};
use crate::{answer, run_context, run_step, span, traced, Failure};

/// What route runs on: the shared adapters and its saga's.
pub type Deps = crate::Deps<crate::deps::Route>;

/// What the state machine (`Route`, `RecordRejected`), the rules, the schedule
/// and `docket ops redrive` send.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Request {
    /// Route an approved run, then wait for the consumer's answer to its accepted event (the
    /// Task waits with a token).
    Route {
        /// The run.
        run: RunInput,
        /// Its validation report.
        report: ObjectRef,
        /// The reviewer's approval (`null` when validate approved), for a reviewed run.
        #[serde(default)]
        review: Option<Reviewed>,
        /// The waiting Task's token (`$$.Task.Token`; serialized by the fixture tests only).
        #[cfg_attr(test, serde(serialize_with = "crate::fixtures::expose_token"))]
        token: TaskToken,
    },
    /// A pipeline execution ended FAILED, TIMED_OUT or ABORTED: Step Functions' "Execution
    /// Status Change" event's `detail`, as the rule delivers it.
    ExecutionEnded {
        /// The event's detail (`name` is the run id; `status`, `error`).
        detail: ExecutionEnded,
    },
    /// Move a failed run back to where it failed, before its execution is redriven.
    Reopen {
        /// The run.
        #[serde(rename = "runId")]
        run_id: String,
    },
    /// A reviewer rejected the run.
    Reject {
        /// The run.
        run: RunInput,
    },
    /// The consumer's answer, as the bus's rule delivers it: the event's `detail-type` and
    /// `detail`.
    Receipt {
        /// `document.recorded` or `document.refused`.
        #[serde(rename = "detailType")]
        detail_type: String,
        /// The answer's ids.
        detail: Value,
    },
    /// Relay the events left `persisted` for longer than this, and redeliver those published
    /// that long ago (but within `answerWithinSeconds`) whose run still waits for the consumer's
    /// answer (the outbox sweeper's schedule).
    Sweep {
        /// How long a record may stay `persisted`, or published and unanswered, before the
        /// sweeper takes it from route.
        #[serde(rename = "olderThanSeconds")]
        older_than_seconds: u32,
        /// The receipt wait's deadline (`ReceiptTimeoutSeconds`): an event published longer ago
        /// than this is not redelivered (the run's compensation has it). Absent: no redelivery.
        #[serde(rename = "answerWithinSeconds", default)]
        answer_within_seconds: Option<u32>,
    },
}

/// The fields of a "Step Functions Execution Status Change" detail that say which run ended
/// and how (the rest, the input and output included, is not read).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ExecutionEnded {
    /// The execution's name: the run id.
    pub name: String,
    /// `FAILED`, `TIMED_OUT` or `ABORTED`.
    pub status: String,
    /// The error the execution failed with (none for an abort).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ExecutionEnded {
    /// The name recorded as the run's error: the execution's error, else what its status
    /// implies (`States.Timeout` for TIMED_OUT, `States.Aborted` for ABORTED).
    fn error_name(&self) -> String {
        match (&self.error, self.status.as_str()) {
            (Some(e), _) if !e.is_empty() => e.clone(),
            (_, "TIMED_OUT") => "States.Timeout".into(),
            (_, "ABORTED") => "States.Aborted".into(),
            (_, other) => format!("States.{other}"),
        }
    }
}

/// Routes, or records the failure or rejection.
pub async fn handle(
    ports: &(impl HasBlobs
          + HasStore
          + HasJournal
          + HasOutbox
          + HasEvents
          + HasWaits
          + HasCallback
          + HasConfigs
          + HasReviews),
    ctx: &Context,
    request: Request,
) -> Result<Value, Failure> {
    match request {
        Request::Route {
            run,
            report,
            review,
            token,
        } => {
            let ctx = &*run_context(ports, ctx, "route", &run).await?;
            let mut routed = run_step("route", Step::Route, &run, async {
                let routed = route::run(ports, ctx, &run, &report, review.as_ref()).await?;
                tracing::info!(status = %routed.status, "routed");
                if routed.status == RunStatus::Completed.as_str() {
                    let of = metrics::Of::run(&run, Step::Route);
                    metrics::emit(Metric::DocumentsCompleted, 1.0, of, &[]);
                }
                Ok(routed)
            })
            .await?;
            // The Task's output is the consumer's answer (or `stale`); this invocation's answer
            // says how it left the wait, for its log and the fixture tests.
            let work = saga::await_receipt(ports, &run.run_id, &token);
            let waited = run_step("route.await_receipt", Step::Receipt, &run, async {
                let waited = work.await?;
                tracing::info!(wait = waited.name(), "awaiting the receipt");
                Ok(waited.name())
            });
            routed["wait"] = waited.await?;
            Ok(routed)
        }
        Request::ExecutionEnded { detail } => execution_ended(ports, ctx, &detail).await,
        Request::Reopen { run_id } => {
            let run_id = RunId::parse(&run_id).map_err(Failure)?;
            let op = Step::Redrive.operation(&run_id);
            let span = span("route.reopen", "-", run_id.as_str(), op.as_str());
            let reopened = traced(span.clone(), recover::reopen(ports, ctx, &run_id)).await?;
            let (reopened, status) = match reopened {
                Reopened::To(status) => (true, status),
                Reopened::NotFailed(status) => (false, status),
            };
            let status = status.as_str();
            span.in_scope(|| tracing::info!(reopened, status, "reopen"));
            Ok(json!({"reopened": reopened, "status": status}))
        }
        Request::Reject { run } => {
            let ctx = &*run_context(ports, ctx, "route.reject", &run).await?;
            let work = route::reject(ports, ctx, &run);
            run_step("route.reject", Step::Reject, &run, work).await?;
            Ok(json!({"status": "rejected"}))
        }
        Request::Receipt {
            detail_type,
            detail,
        } => receipt(ports, ctx, &detail_type, detail).await,
        Request::Sweep {
            older_than_seconds,
            answer_within_seconds,
        } => answer(&sweep(ports, ctx, older_than_seconds, answer_within_seconds).await?),
    }
}

/// Records the run of an execution that ended in a technical failure; an execution that is not
/// a run's (no such run) is left alone, with a line that says so.
async fn execution_ended(
    ports: &impl HasStore,
    ctx: &Context,
    ended: &ExecutionEnded,
) -> Result<Value, Failure> {
    let error = ended.error_name();
    let Some(run) = run_of(ports, &ended.name).await? else {
        let span = span("route.execution_ended", "-", "-", "-");
        span.in_scope(
            || tracing::warn!(status = %ended.status, "an execution that is no run ended"),
        );
        return Ok(json!({"recorded": false}));
    };
    let op = Step::Fail.operation(&run.run_id);
    let (document, id) = (run.document_id.as_str(), run.run_id.as_str());
    let span = span("route.execution_ended", document, id, op.as_str());
    let work = recover::fail(ports, ctx, &run, &error, &ended.status);
    let from = traced(span.clone(), work).await?;
    let recorded = from.is_some();
    let status = ended.status.as_str();
    span.in_scope(|| tracing::info!(status, error, recorded, "the run's execution ended"));
    let of = metrics::Of {
        tenant: &run.tenant,
        document_id: &run.document_id,
        run_id: &run.run_id,
        step: Step::Fail,
    };
    if recorded {
        metrics::emit(Metric::TechnicalFailures, 1.0, of, &[("error", &error)]);
    } else if run.status == RunStatus::Unresolved {
        metrics::emit(Metric::RunsUnresolved, 1.0, of, &[("error", &error)]);
    }
    Ok(json!({"recorded": recorded, "error": error}))
}

/// The run an execution's name names, if it is one of ours.
async fn run_of(ports: &impl HasStore, name: &str) -> Result<Option<RunRecord>, Failure> {
    let Ok(run_id) = RunId::parse(name) else {
        return Ok(None);
    };
    let span = span("route.execution_ended", "-", run_id.as_str(), "-");
    traced(span, ports.store().run(&run_id)).await
}

/// Settles the consumer's answer (a `detail` without its type, as the bus carries it) under
/// the ids of the run whose event it answers.
async fn receipt(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasWaits + HasCallback),
    ctx: &Context,
    detail_type: &str,
    mut detail: Value,
) -> Result<Value, Failure> {
    let bad = |e: String| Failure(Error::BadInput(format!("answer: {e}")));
    let fields = detail
        .as_object_mut()
        .ok_or_else(|| bad("not an object".into()))?;
    fields.insert("detailType".into(), detail_type.into());
    let answer: Answer = serde_json::from_value(detail).map_err(|e| bad(e.to_string()))?;
    let event = answer.event_id().clone();
    let record = traced(span("route.receipt", "-", "-", event.as_str()), async {
        let record = ports.outbox().record(&event).await?;
        record.ok_or_else(|| Error::BadInput(format!("no event {event} was published")))
    });
    let body = record.await?.body;
    let op = Effect::DownstreamRecorded.operation(&body.run_id);
    let (document, run) = (body.document_id.as_str(), body.run_id.as_str());
    traced(span("route.receipt", document, run, op.as_str()), async {
        let settled = saga::receipt(ports, ctx, &answer).await?.is_some();
        let answer = answer.detail_type();
        tracing::info!(answer, settled, "the consumer answered");
        Ok(json!({"answer": answer, "settled": settled}))
    })
    .await
}

/// Announces every event stuck `persisted` for longer than `older_than` seconds, each under the
/// ids of its run, then redelivers the events published between `answer_within` and
/// `older_than` seconds ago whose run still waits; one that fails is named and left for the
/// next sweep.
async fn sweep(
    ports: &(impl HasStore + HasJournal + HasOutbox + HasEvents + HasReviews),
    ctx: &Context,
    older_than: u32,
    answer_within: Option<u32>,
) -> Result<Swept, Failure> {
    // The outbox stamps a record's state with the system clock (not the step's): so is the cutoff.
    let now = time::OffsetDateTime::now_utc();
    let cutoff = now - time::Duration::seconds(older_than.into());
    // The sweep's own lines name no document: its span carries "-" for the ids.
    let whole = span("route.sweep", "-", "-", "-");
    let stuck = traced(whole.clone(), saga::stuck(ports, cutoff)).await?;
    let mut swept = Swept::default();
    for body in stuck {
        let (document, run) = (body.document_id.as_str(), &body.run_id);
        let op = Effect::EventPublished.operation(run);
        let span = span("route.sweep", document, run.as_str(), op.as_str());
        match traced(span.clone(), saga::announce(ports, ctx, run)).await {
            Ok(()) => {
                swept.relayed += 1;
                span.in_scope(|| tracing::info!("relayed a persisted event"));
            }
            Err(Failure(e)) => swept
                .failed
                .push((body.event_id.to_string(), e.name().into())),
        }
    }
    if let Some(within) = answer_within {
        let after = now - time::Duration::seconds(within.into());
        let waiting = traced(whole.clone(), saga::unanswered(ports, after, cutoff)).await?;
        for body in waiting {
            let (document, run) = (body.document_id.as_str(), &body.run_id);
            let op = Effect::DownstreamRecorded.operation(run);
            let span = span("route.sweep", document, run.as_str(), op.as_str());
            let event = body.event_id.to_string();
            match traced(span.clone(), saga::redeliver(ports, &body)).await {
                Ok(()) => {
                    span.in_scope(|| tracing::info!("redelivered an unanswered event"));
                    swept.redelivered.push(event);
                }
                Err(Failure(e)) => swept.failed.push((event, e.name().into())),
            }
        }
    }
    let (relayed, redelivered) = (swept.relayed, swept.redelivered.len());
    let failed = swept.failed.len();
    whole.in_scope(|| tracing::info!(relayed, redelivered, failed, "swept the outbox"));
    oldest_open_review(ports, now).await;
    Ok(swept)
}

/// Logs the age of the oldest pending review task as a metric (nothing while none is pending).
/// A failure to read it is logged, never the sweep's failure.
async fn oldest_open_review(ports: &impl HasReviews, now: time::OffsetDateTime) {
    let whole = span("route.sweep", "-", "-", "-");
    let Ok(Some(oldest)) = traced(whole, ports.reviews().oldest_pending()).await else {
        return;
    };
    let Ok(opened) = time::OffsetDateTime::parse(
        &oldest.created_at,
        &time::format_description::well_known::Rfc3339,
    ) else {
        return;
    };
    let document = oldest.run_id.document_id();
    let of = metrics::Of {
        tenant: &oldest.tenant,
        document_id: &document,
        run_id: &oldest.run_id,
        step: Step::Review,
    };
    let age = (now - opened).as_seconds_f64().max(0.0);
    metrics::emit(Metric::OldestOpenReviewAge, age, of, &[]);
}
