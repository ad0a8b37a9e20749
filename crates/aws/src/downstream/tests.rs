//! The request and answer shapes, and the client against a local HTTP server playing the Lambda
//! Invoke API: what it sends, and how each kind of answer comes back.

use aws_sdk_lambda::config::retry::RetryConfig;
use aws_sdk_lambda::config::{BehaviorVersion, Credentials, Region, SharedCredentialsProvider};
use serde_json::{json, Value};

use super::*;
use crate::stand_in::{Answer, StandIn};

fn event() -> EventId {
    serde_json::from_value(json!("ev-0123")).unwrap()
}

fn receipt() -> ReceiptId {
    ReceiptId::from_string("rc-4567".into())
}

#[test]
fn requests_have_one_shape_each_and_no_other_field() {
    let shapes = [
        (
            Request::ReceiptFor { event_id: event() },
            json!({"action": "receiptFor", "eventId": "ev-0123"}),
        ),
        (
            Request::Fence { event_id: event() },
            json!({"action": "fence", "eventId": "ev-0123"}),
        ),
        (
            Request::Void {
                receipt_id: receipt(),
                reason: "withdrawn".into(),
            },
            json!({"action": "void", "receiptId": "rc-4567", "reason": "withdrawn"}),
        ),
    ];
    for (request, shape) in shapes {
        assert_eq!(serde_json::to_value(&request).unwrap(), shape);
        assert_eq!(serde_json::from_value::<Request>(shape).unwrap(), request);
    }
    for bad in [
        json!({"action": "fence", "eventId": "ev-0123", "extra": 1}),
        json!({"action": "void", "receiptId": "rc-4567"}),
        json!({"action": "apply", "eventId": "ev-0123"}),
        json!({"eventId": "ev-0123"}),
        json!({"Records": []}),
    ] {
        assert!(
            serde_json::from_value::<Request>(bad.clone()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn answers_name_every_field_and_a_void_says_which_it_was() {
    let none = ReceiptAnswer { receipt_id: None };
    assert_eq!(
        serde_json::to_value(&none).unwrap(),
        json!({"receiptId": null})
    );
    let some: ReceiptAnswer = serde_json::from_value(json!({"receiptId": "rc-4567"})).unwrap();
    assert_eq!(some.receipt_id, Some(receipt()));
    for bad in [json!({}), json!({"batchItemFailures": []})] {
        let parsed = serde_json::from_value::<ReceiptAnswer>(bad.clone());
        assert!(
            parsed.is_err(),
            "{bad}: an answer without receiptId is not one"
        );
    }

    for (voided, shape) in [
        (
            Voided::Voided,
            json!({"voided": true, "alreadyVoided": null}),
        ),
        (
            Voided::AlreadyVoided("amended".into()),
            json!({"voided": false, "alreadyVoided": "amended"}),
        ),
    ] {
        assert_eq!(
            serde_json::to_value(VoidAnswer::from(&voided)).unwrap(),
            shape
        );
        let back: VoidAnswer = serde_json::from_value(shape).unwrap();
        assert_eq!(Voided::try_from(back).unwrap(), voided);
    }
    for bad in [
        json!({"voided": true, "alreadyVoided": "x"}),
        json!({"voided": false, "alreadyVoided": null}),
    ] {
        let back: VoidAnswer = serde_json::from_value(bad).unwrap();
        assert_eq!(Voided::try_from(back).unwrap_err().name(), "Fatal.Internal");
    }
    assert!(serde_json::from_value::<VoidAnswer>(json!({"voided": true})).is_err());
}

#[test]
fn a_function_error_is_its_taxonomy_name_or_else_transient() {
    let error = |payload: Value| {
        let bytes = payload.to_string().into_bytes();
        answer::<ReceiptAnswer>("ap", Some("Unhandled"), &bytes).unwrap_err()
    };
    let unknown = error(json!({"errorType": "Conflict.UnknownReceipt",
                               "errorMessage": "unknown receipt: no receipt rc-1 to void"}));
    assert_eq!(unknown.name(), "Conflict.UnknownReceipt");
    assert!(unknown.to_string().contains("no receipt rc-1"), "{unknown}");
    let throttled = error(json!({"errorType": "Transient.Dependency", "errorMessage": "x"}));
    assert_eq!(throttled.name(), "Transient.Dependency");
    let crashed = error(json!({"errorType": "Runtime.ExitError", "errorMessage": "exit 1"}));
    assert_eq!(crashed.name(), "Transient.Dependency");
    assert!(
        crashed.to_string().contains("Runtime.ExitError"),
        "{crashed}"
    );
    let garbled = answer::<ReceiptAnswer>("ap", Some("Unhandled"), b"not json").unwrap_err();
    assert_eq!(garbled.name(), "Transient.Dependency");

    let wrong = answer::<ReceiptAnswer>("ap", None, br#"{"batchItemFailures": []}"#);
    assert_eq!(wrong.unwrap_err().name(), "Fatal.Internal");
    let ok = answer::<ReceiptAnswer>("ap", None, br#"{"receiptId": null}"#).unwrap();
    assert_eq!(ok.receipt_id, None);
}

/// The client of function `ap` at `127.0.0.1:port`, one attempt per call.
fn local(port: u16) -> LambdaDownstream {
    local_with(port, &crate::Faults::none())
}

/// The same with `faults` injected.
fn local_with(port: u16, faults: &crate::Faults) -> LambdaDownstream {
    let sdk = aws_config::SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(SharedCredentialsProvider::new(Credentials::new(
            "test", "test", None, None, "test",
        )))
        .endpoint_url(format!("http://127.0.0.1:{port}"))
        .retry_config(RetryConfig::standard().with_max_attempts(1))
        .build();
    LambdaDownstream::with_faults(&sdk, "ap", faults)
}

fn ok(body: Value) -> Answer {
    (200, vec![], body.to_string())
}

#[tokio::test]
async fn each_call_invokes_the_function_synchronously_with_its_request() {
    let server = StandIn::scripted(vec![
        ok(json!({"receiptId": null})),
        ok(json!({"receiptId": "rc-4567"})),
        ok(json!({"voided": false, "alreadyVoided": "amended"})),
    ]);
    let downstream = local(server.port);
    assert_eq!(downstream.receipt_for(&event()).await.unwrap(), None);
    assert_eq!(downstream.fence(&event()).await.unwrap(), Some(receipt()));
    assert_eq!(
        downstream.void(&receipt(), "withdrawn").await.unwrap(),
        Voided::AlreadyVoided("amended".into())
    );
    let seen = server.seen();
    for (line, _) in &seen {
        assert!(
            line.starts_with("POST /2015-03-31/functions/ap/invocations"),
            "{line}"
        );
    }
    let bodies: Vec<Value> = seen.into_iter().map(|(_, body)| body).collect();
    assert_eq!(
        bodies,
        [
            json!({"action": "receiptFor", "eventId": "ev-0123"}),
            json!({"action": "fence", "eventId": "ev-0123"}),
            json!({"action": "void", "receiptId": "rc-4567", "reason": "withdrawn"}),
        ]
    );
}

#[tokio::test]
async fn function_errors_and_service_errors_come_back_classified() {
    let unhandled = vec![("X-Amz-Function-Error", "Unhandled")];
    let service = |code: &'static str| vec![("x-amzn-errortype", code)];
    let server = StandIn::scripted(vec![
        (
            200,
            unhandled.clone(),
            json!({"errorType": "Conflict.UnknownReceipt", "errorMessage": "no rc-4567"})
                .to_string(),
        ),
        (
            200,
            unhandled,
            json!({"errorType": "Sandbox.Timedout", "errorMessage": "3.00 seconds"}).to_string(),
        ),
        (
            500,
            service("ServiceException"),
            json!({"message": "x"}).to_string(),
        ),
        (
            429,
            service("TooManyRequestsException"),
            json!({"message": "x"}).to_string(),
        ),
        (
            404,
            service("ResourceNotFoundException"),
            json!({"message": "x"}).to_string(),
        ),
    ]);
    let downstream = local(server.port);
    let void = downstream.void(&receipt(), "withdrawn").await.unwrap_err();
    assert_eq!(void.name(), "Conflict.UnknownReceipt", "{void}");
    let mut names = vec![];
    for _ in 0..4 {
        names.push(downstream.fence(&event()).await.unwrap_err().name());
    }
    assert_eq!(
        names,
        [
            "Transient.Dependency",
            "Transient.Dependency",
            "Transient.Dependency",
            "Fatal.Internal"
        ]
    );
    assert_eq!(server.seen().len(), 5, "one request a call");
}

#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn faults_are_injected_into_the_invoke_and_a_lost_answer_is_to_retry() {
    use crate::faults::Rule;
    let faults = crate::Faults::builder()
        .rule(Rule::fail_before_send("lambda", "Invoke", "ServiceException").nth(1))
        .rule(Rule::lose_response("lambda", "Invoke").nth(2))
        .build();
    let server = StandIn::scripted(vec![
        ok(json!({"voided": true, "alreadyVoided": null})),
        ok(json!({"voided": false, "alreadyVoided": "withdrawn"})),
    ]);
    let downstream = local_with(server.port, &faults);
    let mut outcomes = vec![];
    for _ in 0..3 {
        outcomes.push(match downstream.void(&receipt(), "withdrawn").await {
            Ok(voided) => format!("{voided:?}"),
            Err(e) => e.name().to_string(),
        });
    }
    assert_eq!(
        outcomes,
        [
            "Transient.Dependency",
            "Transient.Dependency",
            "AlreadyVoided(\"withdrawn\")"
        ]
    );
    assert_eq!(server.seen().len(), 2, "the first never left");
    assert_eq!((faults.injected_by(0), faults.injected_by(1)), (1, 1));
}
