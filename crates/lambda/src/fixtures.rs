//! The events the functions receive, as real JSON in `tests/fixtures/`, each round-tripped
//! through the type its handler parses: parsed, serialized back and compared as JSON values, so
//! a type neither drops nor renames a field the sender puts there.
//!
//! The request types derive `Serialize` for these tests only: the functions only read them.

use aws_lambda_events::event::sns::SnsEvent;
use aws_lambda_events::event::sqs::SqsEvent;
use aws_lambda_events::lambda_function_urls::LambdaFunctionUrlRequest;
use docket_core::model::run::TaskToken;
use docket_core::review::identity::{reviewer_from_principal, DEFAULT_ROLE_PREFIX};
use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::events::ObjectCreatedEvent;
use crate::handlers::ingest::object_created;
use crate::handlers::{ocr, ocr_notified, review, route, validate};

/// Writes the token back for the round trip (tests only: a production build cannot serialize it).
pub(crate) fn expose_token<S: Serializer>(token: &TaskToken, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(token.expose())
}

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../../tests/fixtures/", $name))
    };
}

fn round_trip<T: DeserializeOwned + Serialize>(json: &str) -> T {
    let fixture: Value = serde_json::from_str(json).expect("fixture is JSON");
    let parsed: T = serde_json::from_value(fixture.clone()).expect("fixture parses");
    let written = serde_json::to_value(&parsed).expect("serializes");
    assert!(
        same_but_absent_defaults(&written, &fixture),
        "round trip changed the event:\n{written:#}\nfixture:\n{fixture:#}"
    );
    parsed
}

/// Equal, except that a field the sender left out may come back empty: `aws_lambda_events`
/// writes an absent `cookies` as null and absent `queryStringParameters` as `{}`.
fn same_but_absent_defaults(written: &Value, fixture: &Value) -> bool {
    let is_empty = |v: &Value| match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    match (written, fixture) {
        (Value::Object(w), Value::Object(f)) => {
            f.keys().all(|k| w.contains_key(k))
                && w.iter().all(|(k, v)| match f.get(k) {
                    Some(fv) => same_but_absent_defaults(v, fv),
                    None => is_empty(v),
                })
        }
        (Value::Array(w), Value::Array(f)) => {
            w.len() == f.len() && w.iter().zip(f).all(|(w, f)| same_but_absent_defaults(w, f))
        }
        _ => written == fixture,
    }
}

#[test]
fn an_s3_object_created_event_is_an_upload_to_ingest() {
    let event: ObjectCreatedEvent = round_trip(fixture!("s3-object-created.json"));
    assert_eq!(event.detail_type, "Object Created");
    let mut precise = event.clone();
    precise.time = Some("2026-11-30T10:00:00.123Z".parse().unwrap());

    let created = object_created(event);

    assert_eq!(created.key, "inbox/acme/example+invoice.pdf");
    assert_eq!(created.sequencer.as_deref(), Some("00617F08299329D189"));
    // The time orders a key's versions: it is passed on as EventBridge wrote it.
    assert_eq!(created.time.as_deref(), Some("2026-11-30T10:00:00Z"));
    let precise = object_created(precise).time;
    assert_eq!(precise.as_deref(), Some("2026-11-30T10:00:00.123Z"));
}

#[test]
fn ingest_queue_batches_carry_the_event_as_each_message_body() {
    let batch: SqsEvent = round_trip(fixture!("sqs-ingest-batch.json"));
    let message = &batch.records[0];
    assert_eq!(message.attributes["ApproximateReceiveCount"], "1");
    let body = message.body.as_deref().unwrap();
    let queued: ObjectCreatedEvent = serde_json::from_str(body).unwrap();
    let direct: ObjectCreatedEvent =
        serde_json::from_str(fixture!("s3-object-created.json")).unwrap();
    assert_eq!(
        queued, direct,
        "the rule's SQS target sends the event unchanged"
    );
}

#[test]
fn ocr_start_and_poll_payloads_are_ocr_requests() {
    let start: ocr::Request = round_trip(fixture!("sfn-ocr-start.json"));
    let ocr::Request::Start { token, .. } = &start else {
        panic!("not a start: {start:?}");
    };
    assert!(token.expose().starts_with("AQCEAAAA"));
    assert!(
        !format!("{start:?}").contains("AQCEAAAA"),
        "the token prints redacted"
    );
    let poll: ocr::Request = round_trip(fixture!("sfn-ocr-poll.json"));
    assert!(matches!(poll, ocr::Request::Poll { .. }));
}

#[test]
fn a_textract_completion_on_sns_names_the_job_and_its_run() {
    let event: SnsEvent = round_trip(fixture!("sns-textract-completion.json"));
    let completions = ocr_notified::completions(&event).unwrap();
    assert_eq!(completions.len(), 1);
    assert!(completions[0].job_id.starts_with("a3f1c2d4"));
    assert_eq!(
        completions[0].job_tag,
        "d0ec2709f9a2730509ce80ef5-ra4b55ce07eb266824763"
    );
}

#[test]
fn the_validate_payload_points_at_the_normalized_ocr_and_holds_the_tasks_token() {
    let request: validate::Request = round_trip(fixture!("sfn-validate.json"));
    assert!(request.normalized.key.ends_with("/ocr.json"));
    assert!(request.token.expose().starts_with("AQCEAAAA"));
    assert_eq!(request.timeout_seconds, 86400);
    assert!(
        !format!("{request:?}").contains("AQCEAAAA"),
        "the token prints redacted"
    );
}

#[test]
fn route_payloads_route_reject_or_record_an_ended_execution() {
    let plain: route::Request = round_trip(fixture!("sfn-route.json"));
    assert!(matches!(plain, route::Request::Route { review: None, .. }));
    let reviewed: route::Request = round_trip(fixture!("sfn-route-reviewed.json"));
    assert!(
        matches!(reviewed, route::Request::Route { review: Some(r), .. } if r.reviewer == "alice")
    );
    let ended: route::Request =
        serde_json::from_str(fixture!("events-execution-failed.json")).expect("parses");
    assert!(matches!(
        ended,
        route::Request::ExecutionEnded { detail } if detail.error.as_deref() == Some("Transient.Dependency")
    ));
    let rejected: route::Request = round_trip(fixture!("sfn-route-reject.json"));
    assert!(matches!(rejected, route::Request::Reject { .. }));
}

#[test]
fn the_escalate_payload_is_a_review_request() {
    let escalate: review::Request = round_trip(fixture!("sfn-review-escalate.json"));
    assert!(matches!(escalate, review::Request::Escalate { .. }));
}

#[test]
fn a_function_url_request_names_its_iam_caller() {
    let request: LambdaFunctionUrlRequest =
        round_trip(fixture!("function-url-review-decision.json"));
    let caller = request
        .request_context
        .authorizer
        .and_then(|a| a.iam)
        .and_then(|iam| iam.user_arn);
    let reviewer =
        reviewer_from_principal(&caller.expect("a caller"), DEFAULT_ROLE_PREFIX).unwrap();
    assert_eq!(reviewer.tenant.as_str(), "acme");
    assert_eq!(request.request_context.http.method.as_deref(), Some("POST"));
    assert!(!request.is_base64_encoded);
}
