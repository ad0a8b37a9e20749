//! The functions as the state machine calls them, over the in-memory ports: each Task's payload
//! is built from the execution state by the Task's own `Parameters` in
//! `statemachines/document-pipeline.asl.json`, and what it keeps of the answer by its
//! `ResultSelector` and `ResultPath` — so a field one side renames fails here, not in a deployed
//! execution. Reviewers act through function URL requests built from the fixture.

use docket_core::ids::RunId;
use docket_core::memory::{test_context, MemoryPorts};
use docket_core::model::step::Step;
use docket_core::ocr::OcrDocument;
use docket_core::ports::{OcrPoll, ReviewStore, RunStatus, Store};
use docket_core::review::identity::{Operators, Reviewers, DEFAULT_ROLE_PREFIX};
use docket_core::review::task_id_for;
use docket_core::steps::{Clock, Context};
use lambda_runtime::Diagnostic;
use serde_json::{json, Value};
use time::macros::datetime;

use super::{compensate, ingest, ocr, ocr_notified, review, route, validate};
use crate::{parse, review_api, Failure};

const ASL: &str = include_str!("../../../../../statemachines/document-pipeline.asl.json");
const UPLOAD: &str = include_str!("../../../../../tests/fixtures/s3-object-created.json");
const API_REQUEST: &str =
    include_str!("../../../../../tests/fixtures/function-url-review-decision.json");
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10";

/// A TIFF, whose pages ingest does not count: read as a job (a PNG is one page, read at once).
const TIFF: &[u8] = b"II*\0\x08\0\0\0\x01\0\0\x01\x03\0\x01\0\0\0\x10\0";
const COMPLETION: &str = include_str!("../../../../../tests/fixtures/sns-textract-completion.json");
const TOKEN: &str = "token-of-the-waiting-task";

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

/// A Task state of the pipeline.
fn task(name: &str) -> Value {
    let asl: Value = serde_json::from_str(ASL).unwrap();
    asl["States"][name].clone()
}

/// Evaluates a `Parameters` or `ResultSelector` template: a key ending in `.$` takes the value
/// at a path of `input` (`$.a.b`) or of the context object (`$$.Task.Token`). A missing path
/// fails the test, as it fails the state in Step Functions.
fn template(t: &Value, input: &Value) -> Value {
    let Value::Object(fields) = t else {
        return t.clone();
    };
    let context = json!({"Task": {"Token": TOKEN}});
    let mut out = serde_json::Map::new();
    for (key, value) in fields {
        let Some(key) = key.strip_suffix(".$") else {
            out.insert(key.clone(), template(value, input));
            continue;
        };
        let path = value.as_str().expect("a path");
        if path == "$" {
            out.insert(key.into(), input.clone());
            continue;
        }
        if let Some(intrinsic) = intrinsic(path) {
            out.insert(key.into(), intrinsic);
            continue;
        }
        let (root, rest) = match path.strip_prefix("$$.") {
            Some(rest) => (&context, rest),
            None => (input, path.strip_prefix("$.").expect("a $. path")),
        };
        let found = rest.split('.').fold(root, |v, k| {
            v.get(k)
                .unwrap_or_else(|| panic!("{path} is not in {root}"))
        });
        out.insert(key.into(), found.clone());
    }
    Value::Object(out)
}

/// The stack parameters the definition's intrinsics read, as the tests deploy it.
const SUBSTITUTIONS: [(&str, &str); 1] = [("${ReceiptTimeoutSeconds}", "900")];

/// `States.StringToJson('…')` of a substituted stack parameter, evaluated; `None` for a path.
fn intrinsic(path: &str) -> Option<Value> {
    let text = path
        .strip_prefix("States.StringToJson('")?
        .strip_suffix("')")?;
    let text = SUBSTITUTIONS
        .iter()
        .fold(text.to_string(), |t, (name, value)| t.replace(name, value));
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}")))
}

/// The payload the Task `name` sends in the execution `state`.
fn payload(name: &str, state: &Value) -> Value {
    template(&task(name)["Parameters"]["Payload"], state)
}

/// What the Task `name` keeps of the function's `answer` (of a Task that waits for a token:
/// of the callback's output), put at its `ResultPath` in `state`.
fn keep(name: &str, answer: Value, state: &mut Value) {
    let task = task(name);
    let resource = task["Resource"].as_str().unwrap_or_default();
    let result = match resource.ends_with(".waitForTaskToken") {
        true => answer.clone(),
        false => json!({ "Payload": answer }),
    };
    let selected = match &task["ResultSelector"] {
        Value::Null => answer,
        selector => template(selector, &result),
    };
    if let Some(path) = task["ResultPath"].as_str() {
        state[path.strip_prefix("$.").unwrap()] = selected;
    }
}

/// The error the Fail state `name` ends the execution `state` with: its `ErrorPath` read.
fn fail_error(name: &str, state: &Value) -> Value {
    let path = task(name)["ErrorPath"].clone();
    template(&json!({ "error.$": path }), state)["error"].clone()
}

impl World {
    /// Uploads an invoice whose OCR reads with `confidence` (a TIFF when `key` ends with
    /// `.tif`, else a PNG), ingests its event, and returns the execution's input.
    async fn ingested(&self, key: &str, confidence: f64) -> Value {
        let body = if key.ends_with(".tif") { TIFF } else { PNG };
        let version = self.ports.blobs.upload("raw", key, body);
        let lines = [
            "ACME Supplies Ltd",
            "INVOICE",
            "Invoice No: INV-2026-0042",
            "Invoice Date: 2026-11-02",
            "Total: EUR 99.00",
        ];
        let ocr = OcrPoll::Succeeded(OcrDocument::from_lines(&lines, confidence));
        self.ports
            .ocr
            .results
            .lock()
            .unwrap()
            .insert(key.into(), ocr);
        *self.ports.ocr.pending_polls.lock().unwrap() = 1;
        let mut event: Value = serde_json::from_str(UPLOAD).unwrap();
        event["detail"]["bucket"]["name"] = "raw".into();
        event["detail"]["object"]["key"] = key.into();
        event["detail"]["object"]["version-id"] = version.into();
        let queue = ingest_batch::RecordedQueue::default();
        let answer = ingest::handle(&self.ports, &queue, &self.ctx, event)
            .await
            .expect("ingest");
        assert_eq!(answer["outcome"], "started", "{answer}");
        let executions = self.ports.workflow.executions.lock().unwrap();
        executions[answer["run_id"].as_str().unwrap()].clone()
    }

    /// An upload's execution after StartOcr and Validate: with Validate's result when validate
    /// approved it, without (still waiting in Validate, [`waits_for_a_reviewer`]) when it
    /// opened a review task.
    async fn validated(&self, key: &str, confidence: f64) -> Value {
        let state = self.ingested(key, confidence).await;
        self.ocr_and_validate(state).await
    }

    /// An ingested execution after StartOcr (its wait ended by its own invocation for a
    /// one-page document, read at once; otherwise by the job's notification to ocr-notified,
    /// retried while the job runs, as Lambda retries an asynchronous event) and Validate (its
    /// wait ended by validate itself when it approves the document).
    async fn ocr_and_validate(&self, mut state: Value) -> Value {
        let start = parse(payload("StartOcr", &state)).unwrap();
        let answer = ocr::handle(&self.ports, &self.ctx, start).await;
        let one_page = state["run"]["pages"] == 1;
        let expected = if one_page { "succeeded" } else { "waiting" };
        assert_eq!(answer.expect("StartOcr")["wait"], expected);
        if !one_page {
            self.notify_ocr_end(&state).await;
        }
        // The callback is the Task's result (taken, as Step Functions takes it).
        let (token, output) = self.ports.callback.calls.lock().unwrap().pop().unwrap();
        assert_eq!(token, TOKEN);
        keep("StartOcr", output.expect("the wait ended"), &mut state);
        assert_eq!(state["poll"]["status"], "SUCCEEDED");
        let request = parse(payload("Validate", &state)).unwrap();
        let answer = validate::handle(&self.ports, &self.ctx, request).await;
        if answer.expect("Validate")["decision"] == "auto_approve" {
            let (token, output) = self.ports.callback.calls.lock().unwrap().pop().unwrap();
            assert_eq!(token, TOKEN);
            keep("Validate", output.expect("the wait ended"), &mut state);
        }
        state
    }

    /// The end of `state`'s OCR job, notified to ocr-notified (retried while the job runs).
    async fn notify_ocr_end(&self, state: &Value) {
        let run = RunId::parse(state["run"]["runId"].as_str().unwrap()).unwrap();
        let job = self.ports.ocr.job_of(&Step::Ocr.operation(&run)).unwrap();
        let message = json!({"JobId": job, "Status": "SUCCEEDED", "JobTag": run.as_str()});
        let mut event: Value = serde_json::from_str(COMPLETION).unwrap();
        event["Records"][0]["Sns"]["Message"] = message.to_string().into();
        loop {
            let event = parse(event.clone()).unwrap();
            match ocr_notified::handle(&self.ports, &self.ctx, event).await {
                Ok(answer) => break assert_eq!(answer["waits"], json!(["succeeded"])),
                Err(Failure(e)) => assert_eq!(e.name(), "Transient.InProgress"),
            }
        }
    }

    /// A blurry upload's execution waiting in Validate for a reviewer, and its task id.
    async fn awaiting_review(&self, key: &str) -> (Value, String) {
        let state = self.validated(key, 0.55).await;
        assert!(waits_for_a_reviewer(&state), "{state}");
        let run = RunId::parse(state["run"]["runId"].as_str().unwrap()).unwrap();
        let task_id = task_id_for(&run);
        let opened = self.ports.reviews.get(&task_id).await.unwrap();
        assert!(opened.is_some(), "validate opened the task");
        assert!(
            self.ports.callback.calls.lock().unwrap().is_empty(),
            "and left the wait to the reviewer"
        );
        (state, task_id.as_str().into())
    }

    /// route, as the Task `name` invokes it; its answer is kept in `state` unless the Task
    /// waits for a token (then the callback's output is its result, which the test keeps).
    async fn route(&self, name: &str, state: &mut Value) -> Value {
        let request = parse(payload(name, state)).unwrap();
        let answer = route::handle(&self.ports, &self.ctx, request).await;
        let answer = answer.unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let resource = task(name)["Resource"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if !resource.ends_with(".waitForTaskToken") {
            keep(name, answer.clone(), state);
        }
        answer
    }

    /// review-callback, as the state machine invokes it.
    async fn review(&self, payload: Value) -> Result<Value, Failure> {
        review::handle(&self.ports, &self.ctx, payload).await
    }

    /// review-api, as its function URL invokes it (the fixture's account is the stack's).
    async fn review_api(&self, payload: Value) -> Result<Value, Failure> {
        let callers = review_api::Callers {
            reviewers: Reviewers {
                role_prefix: DEFAULT_ROLE_PREFIX.into(),
                account: "111122223333".into(),
            },
            operators: Operators {
                role: "docket-operator".into(),
                account: "111122223333".into(),
            },
        };
        review_api::handle(&self.ports, &self.ctx, &callers, payload).await
    }

    /// A function URL request of `caller` (an IAM ARN; `None` for an unsigned one), with the
    /// HTTP answer's status and parsed body.
    async fn api(
        &self,
        caller: Option<&str>,
        method: &str,
        path: &str,
        body: Value,
    ) -> (u64, Value) {
        self.api_raw(caller, method, path, body.to_string()).await
    }

    /// [`Self::api`] with the body as sent (path may carry a query string after `?`).
    async fn api_raw(
        &self,
        caller: Option<&str>,
        method: &str,
        path: &str,
        body: String,
    ) -> (u64, Value) {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let mut request: Value = serde_json::from_str(API_REQUEST).unwrap();
        request["requestContext"]["http"]["method"] = method.into();
        request["rawPath"] = path.into();
        request["rawQueryString"] = query.into();
        let params: serde_json::Map<String, Value> = query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), Value::from(v)))
            .collect();
        request["queryStringParameters"] = params.into();
        request["body"] = body.into();
        match caller {
            Some(arn) => request["requestContext"]["authorizer"]["iam"]["userArn"] = arn.into(),
            None => request["requestContext"]["authorizer"] = Value::Null,
        }
        let answer = self
            .review_api(request)
            .await
            .expect("the API answers every request");
        let body = serde_json::from_str(answer["body"].as_str().unwrap()).unwrap();
        (answer["statusCode"].as_u64().unwrap(), body)
    }
}

/// Whether the execution still waits in Validate (validate opened a review task instead of
/// ending the wait).
fn waits_for_a_reviewer(state: &Value) -> bool {
    state.get("validation").is_none()
}

const ALICE: &str = "arn:aws:sts::111122223333:assumed-role/docket-reviewer-acme/alice";

#[tokio::test]
async fn the_ocr_and_review_waits_deadlines_are_in_the_execution_input() {
    let w = world();
    let state = w.ingested("inbox/acme/deadline.png", 0.97).await;
    for field in ["TimeoutSecondsPath", "HeartbeatSecondsPath"] {
        for (name, wait) in [
            ("StartOcr", w.ctx.ocr_wait_seconds),
            ("Validate", w.ctx.review_wait_seconds),
        ] {
            let path = task(name)[field].as_str().unwrap().to_string();
            let seconds = template(&json!({ "s.$": path }), &state)["s"].clone();
            assert_eq!(seconds, json!(wait), "{name}.{field}");
        }
    }
}

#[tokio::test]
async fn a_clear_invoice_goes_through_ingest_ocr_validate_and_route() {
    for key in ["inbox/acme/clear.png", "inbox/acme/clear-as-a-job.tif"] {
        a_clear_invoice_goes_through(key).await;
    }
}

/// A clear invoice at `key` (a one-page PNG read at once, or a TIFF read as a job).
async fn a_clear_invoice_goes_through(key: &str) {
    let w = world();
    let mut state = w.validated(key, 0.99).await;
    assert!(!waits_for_a_reviewer(&state), "{state}");
    assert_eq!(state["validation"]["review"], Value::Null, "{state}");

    let routed = w.route("Route", &mut state).await;

    assert_eq!(routed["status"], "completed", "{routed}");
    assert!(routed["result"]["key"]
        .as_str()
        .unwrap()
        .ends_with("/result.json"));
    // The same Task then waits for the consumer's answer (tests/saga.rs), with the deadline
    // Validate's result carries from the stack parameter.
    assert_eq!(routed["wait"], "waiting", "{routed}");
    for field in ["TimeoutSecondsPath", "HeartbeatSecondsPath"] {
        let path = task("Route")[field].as_str().unwrap().to_string();
        let seconds = template(&json!({ "s.$": path }), &state)["s"].clone();
        assert_eq!(seconds, 900, "Route.{field}");
    }
}

#[tokio::test]
async fn a_blurry_invoice_waits_for_a_reviewer_who_approves_it_through_the_api() {
    let w = world();
    let (mut state, task_id) = w.awaiting_review("inbox/acme/blurry.png").await;

    let (status, listed) = w.api(Some(ALICE), "GET", "/tasks", json!(null)).await;
    assert_eq!(status, 200);
    assert_eq!(listed["tasks"][0]["taskId"], task_id.as_str());
    assert!(
        !listed.to_string().contains(TOKEN),
        "the token never leaves the server"
    );

    let decision = json!({"verdict": "approve", "set": {"total_amount": "99.00"}});
    let path = format!("/tasks/{task_id}/decision");
    let (status, decided) = w.api(Some(ALICE), "POST", &path, decision).await;
    assert_eq!(status, 200, "{decided}");
    let second = json!({"verdict": "reject", "reason": "changed my mind"});
    let (status, again) = w.api(Some(ALICE), "POST", &path, second).await;
    assert_eq!(
        (status, again["error"].as_str()),
        (409, Some("Conflict.AlreadyDecided"))
    );
    assert_eq!(
        again["task"]["taskId"],
        task_id.as_str(),
        "the recorded decision is shown"
    );

    // The one callback resumes the execution with the approval as the Task's output.
    let calls = w.ports.callback.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1);
    let (token, output) = &calls[0];
    assert_eq!(token, TOKEN);
    keep("Validate", output.clone().expect("an approval"), &mut state);
    assert_eq!(
        state["validation"]["review"]["reviewer"], "alice",
        "{state}"
    );
    let routed = w.route("Route", &mut state).await;
    assert_eq!(routed["status"], "completed", "{routed}");
    assert_eq!(routed["wait"], "waiting", "{routed}");
}

#[tokio::test]
async fn a_rejection_or_a_timeout_is_recorded_by_its_own_task() {
    let w = world();
    let (mut rejected, task_id) = w.awaiting_review("inbox/acme/rejected.png").await;
    let (late, _) = w.awaiting_review("inbox/acme/late.png").await;

    let path = format!("/tasks/{task_id}/decision");
    let decision = json!({"verdict": "reject", "reason": "not our invoice"});
    assert_eq!(w.api(Some(ALICE), "POST", &path, decision).await.0, 200);
    let failed = w.ports.callback.calls.lock().unwrap()[0].1.clone();
    assert_eq!(failed, Err("Business.ReviewRejected".to_string()));

    assert_eq!(
        w.route("RecordRejected", &mut rejected).await,
        json!({"status": "rejected"})
    );
    let escalated = w
        .review(payload("Escalate", &late))
        .await
        .expect("Escalate");
    assert_eq!(escalated, json!({"status": "escalated"}));
}

#[tokio::test]
async fn a_failed_execution_is_recorded_by_its_error_then_reopened_for_a_redrive() {
    // given a run in OCR, and the event Step Functions sends when its execution fails (the
    // fixture's shape, as the rule's input transformer delivers it)
    let w = world();
    let state = w.ingested("inbox/acme/failing.png", 0.99).await;
    let run_id = state["run"]["runId"].as_str().unwrap().to_string();
    let mut event: Value = serde_json::from_str(include_str!(
        "../../../../../tests/fixtures/events-execution-failed.json"
    ))
    .unwrap();
    event["detail"]["name"] = json!(run_id);
    let call = |payload: Value| async {
        let request = parse(payload).unwrap();
        route::handle(&w.ports, &w.ctx, request).await.unwrap()
    };

    // when it is delivered twice, then the run is reopened twice
    let first = call(event.clone()).await;
    let again = call(event.clone()).await;
    let status = w
        .ports
        .store
        .run(&RunId::parse(&run_id).unwrap())
        .await
        .unwrap()
        .unwrap();
    let reopen = json!({"action": "reopen", "runId": run_id});
    let (reopened, reopened_again) = (call(reopen.clone()).await, call(reopen).await);

    // then the run was failed with the event's error, recorded once, and reopened once
    assert_eq!(
        first,
        json!({"recorded": true, "error": "Transient.Dependency"})
    );
    assert_eq!(first, again, "a repeat finds its own entry");
    let chain = w
        .ports
        .store
        .audit_entries(&status.document_id)
        .await
        .unwrap();
    let failed = chain
        .iter()
        .filter(|e| e.draft.action == "run.failed")
        .count();
    assert_eq!(failed, 1);
    assert_eq!(status.status, RunStatus::Failed);
    assert_eq!(reopened, json!({"reopened": true, "status": "started"}));
    assert_eq!(
        reopened_again,
        json!({"reopened": false, "status": "started"})
    );

    // and an execution that is no run of ours (another machine's) is left alone
    event["detail"]["name"] = json!("rp-c6fc99f2aed7ceb8b8d5f941");
    assert_eq!(call(event).await, json!({"recorded": false}));
}

#[tokio::test]
async fn the_api_refuses_unsigned_callers_and_hides_other_tenants_tasks() {
    let w = world();
    let (_, task_id) = w.awaiting_review("inbox/acme/private.png").await;
    let path = format!("/tasks/{task_id}");
    let mallory = "arn:aws:sts::111122223333:assumed-role/docket-reviewer-other/mallory";

    assert_eq!(w.api(None, "GET", &path, json!(null)).await.0, 403);
    let (status, hidden) = w.api(Some(mallory), "GET", &path, json!(null)).await;
    assert_eq!(
        (status, hidden["error"].as_str()),
        (404, Some("Business.ReviewNotFound"))
    );
    assert_eq!(w.api(Some(ALICE), "GET", &path, json!(null)).await.0, 200);
    assert_eq!(
        w.api(Some(ALICE), "DELETE", &path, json!(null)).await.0,
        404
    );
}

#[test]
fn a_payload_that_does_not_parse_is_reported_as_fatal_bad_input() {
    let unknown = json!({"action": "translate", "run": {}});

    let error = Failure::from(parse::<route::Request>(unknown).unwrap_err());

    assert_eq!(Diagnostic::from(error).error_type, "Fatal.BadInput");
}

#[tokio::test]
async fn each_review_function_refuses_the_others_payloads() {
    let w = world();
    let (state, task_id) = w.awaiting_review("inbox/acme/split.png").await;
    let validation = payload("Validate", &state);
    // A function URL request as anyone could hand-craft it for a direct Invoke.
    let mut forged: Value = serde_json::from_str(API_REQUEST).unwrap();
    forged["rawPath"] = format!("/tasks/{task_id}/decision").into();

    let api_given_validation = w.review_api(validation).await.unwrap_err();
    let callback_given_url = w.review(forged.clone()).await.unwrap_err();
    let validate_given_url = Failure::from(parse::<validate::Request>(forged.clone()).unwrap_err());
    forged["action"] = "escalate".into();
    forged["run"] = state["run"].clone();
    let callback_given_both = w.review(forged).await.unwrap_err();

    for e in [
        &api_given_validation,
        &callback_given_url,
        &validate_given_url,
        &callback_given_both,
    ] {
        assert_eq!(e.0.name(), "Fatal.BadInput", "{e:?}");
    }
    assert!(w.ports.callback.calls.lock().unwrap().is_empty());
    let (_, shown) = w
        .api(
            Some(ALICE),
            "GET",
            &format!("/tasks/{task_id}"),
            json!(null),
        )
        .await;
    assert_eq!(shown["task"]["status"], "pending", "{shown}");
}

#[tokio::test]
async fn a_decision_body_is_strict_bounded_and_plain_text() {
    let w = world();
    let (_, task_id) = w.awaiting_review("inbox/acme/strict.png").await;
    let path = format!("/tasks/{task_id}/decision");

    let misspelt = json!({"verdict": "approve", "corrections": {"total_amount": "99.00"}});
    let (unknown, unknown_body) = w.api(Some(ALICE), "POST", &path, misspelt).await;
    let escape = json!({"verdict": "reject", "reason": "fine\u{1b}]0;pwned\u{7}"});
    let (control, _) = w.api(Some(ALICE), "POST", &path, escape).await;
    let huge = json!({"verdict": "reject", "reason": "x".repeat(super::super::review_api::MAX_BODY_BYTES)});
    let (too_large, _) = w.api(Some(ALICE), "POST", &path, huge).await;
    let (bogus, bogus_body) = w
        .api(Some(ALICE), "GET", "/tasks?status=bogus", json!(null))
        .await;

    assert_eq!(unknown, 400, "{unknown_body}");
    assert!(unknown_body["message"]
        .as_str()
        .unwrap()
        .contains("corrections"));
    assert_eq!(control, 400);
    assert_eq!(too_large, 413);
    assert_eq!(bogus, 400, "{bogus_body}");
    assert!(
        w.ports.callback.calls.lock().unwrap().is_empty(),
        "nothing was decided"
    );
}

#[tokio::test]
async fn the_task_list_pages_with_a_next_token() {
    let w = world();
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(
            w.awaiting_review(&format!("inbox/acme/page-{n}.png"))
                .await
                .1,
        );
    }
    let (_, all) = w.api(Some(ALICE), "GET", "/tasks", json!(null)).await;
    let all: Vec<String> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(all.len(), 3, "the data paged through is there");

    let mut seen = Vec::new();
    let mut path = "/tasks?limit=2".to_string();
    loop {
        let (status, page) = w.api_raw(Some(ALICE), "GET", &path, String::new()).await;
        assert_eq!(status, 200, "{page}");
        assert!(page["tasks"].as_array().unwrap().len() <= 2);
        seen.extend(
            page["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["taskId"].as_str().unwrap().to_string()),
        );
        match page["nextToken"].as_str() {
            Some(next) => path = format!("/tasks?limit=2&nextToken={next}"),
            None => break,
        }
    }
    let (bad_limit, _) = w
        .api_raw(Some(ALICE), "GET", "/tasks?limit=0", String::new())
        .await;

    assert_eq!(seen, all);
    assert_eq!(bad_limit, 400);
}

#[tokio::test]
async fn a_reviewer_role_of_another_account_is_refused() {
    let w = world();
    let (_, task_id) = w.awaiting_review("inbox/acme/foreign.png").await;
    let foreign = "arn:aws:sts::999999999999:assumed-role/docket-reviewer-acme/alice";

    let (status, body) = w
        .api(
            Some(foreign),
            "GET",
            &format!("/tasks/{task_id}"),
            json!(null),
        )
        .await;

    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("account"),
        "{body}"
    );
}

mod config;
mod ingest_batch;
mod operations;
mod reprocess;
mod review_pages;
mod saga;
