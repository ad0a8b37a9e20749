//! Parsing, triggers, counting and installation; the effects on real requests are tested
//! against LocalStack (`tests/localaws/faults.rs`).

use super::interceptor::Armed;
use super::*;

fn rule(json: &str) -> Result<Rule, Error> {
    Faults::from_json(&format!("[{json}]")).map(|f| f.rules()[0].clone())
}

#[test]
fn parses_both_modes_and_both_triggers() {
    let faults = Faults::from_json(
        r#"{"seed": 3, "rules": [
            {"service": "s3", "operation": "PutObject", "mode": "fail_before_send",
             "error_code": "SlowDown", "probability": 0.25},
            {"service": "DynamoDB", "operation": "TransactWriteItems", "mode": "lose_response",
             "nth": 2, "surface": "timeout"},
            {"service": "sfn", "mode": "fail_before_send", "nth": 1, "limit": 1}
        ]}"#,
    )
    .unwrap();
    assert_eq!(
        faults.rules(),
        &[
            Rule::fail_before_send("s3", "PutObject", "SlowDown").probability(0.25),
            Rule::lose_response("dynamodb", "TransactWriteItems")
                .surface(Surface::Timeout)
                .nth(2),
            Rule::fail_before_send("sfn", "*", "ServiceUnavailable")
                .nth(1)
                .limit(1),
        ]
    );
    assert_eq!(
        faults.rules()[0].action,
        Action::FailBeforeSend {
            error_code: "SlowDown".into(),
            status: 503
        }
    );
}

#[test]
fn default_codes_and_statuses() {
    let r = rule(r#"{"service":"s3","operation":"PutObject","mode":"fail_before_send","nth":1}"#)
        .unwrap();
    assert_eq!(
        r.action,
        Action::FailBeforeSend {
            error_code: "ServiceUnavailable".into(),
            status: 503
        }
    );
    let r = rule(r#"{"service":"dynamodb","mode":"fail_before_send","error_code":"ThrottlingException","nth":1}"#).unwrap();
    assert!(matches!(
        r.action,
        Action::FailBeforeSend { status: 400, .. }
    ));
    let r = rule(r#"{"service":"textract","mode":"fail_before_send","error_code":"InternalServerError","status":502,"nth":1}"#).unwrap();
    assert!(matches!(
        r.action,
        Action::FailBeforeSend { status: 502, .. }
    ));
    let r = rule(r#"{"service":"s3","mode":"lose_response","surface":"dispatch_failure","nth":1}"#)
        .unwrap();
    assert_eq!(
        r.action,
        Action::LoseResponse {
            surface: Surface::DispatchFailure
        }
    );
    let r = rule(r#"{"service":"sfn","mode":"lose_response","nth":1}"#).unwrap();
    assert_eq!(
        r.action,
        Action::LoseResponse {
            surface: Surface::ResponseError
        }
    );
}

#[test]
fn rejects_bad_rules() {
    for bad in [
        // no trigger, two triggers
        r#"{"service":"s3","mode":"lose_response"}"#,
        r#"{"service":"s3","mode":"lose_response","nth":1,"probability":0.5}"#,
        // out of range
        r#"{"service":"s3","mode":"lose_response","probability":1.5}"#,
        r#"{"service":"s3","mode":"lose_response","nth":0}"#,
        r#"{"service":"s3","mode":"fail_before_send","status":200,"nth":1}"#,
        // fields of the other mode, unknown fields and modes
        r#"{"service":"s3","mode":"lose_response","error_code":"X","nth":1}"#,
        r#"{"service":"s3","mode":"fail_before_send","surface":"timeout","nth":1}"#,
        r#"{"service":"s3","mode":"lose_response","nth":1,"typo":1}"#,
        r#"{"service":"s3","mode":"explode","nth":1}"#,
        r#"{"service":"","mode":"lose_response","nth":1}"#,
    ] {
        assert!(rule(bad).is_err(), "accepted {bad}");
    }
    assert!(Faults::from_json("not json").is_err());
}

#[test]
fn nth_fires_exactly_once_on_the_nth_matching_attempt() {
    let faults = Faults::builder()
        .rule(Rule::lose_response("s3", "PutObject").nth(3))
        .build();
    let fired: Vec<bool> = (0..6)
        .map(|_| {
            // Other operations and services are not counted.
            assert_eq!(faults.decide("S3", "GetObject"), None);
            assert_eq!(faults.decide("DynamoDB", "PutObject"), None);
            faults.decide("S3", "PutObject").is_some()
        })
        .collect();
    assert_eq!(fired, [false, false, true, false, false, false]);
    assert_eq!(faults.seen_by(0), 6);
}

#[test]
fn nth_counts_are_shared_by_clones() {
    let a = Faults::builder()
        .rule(Rule::fail_before_send("sfn", "StartExecution", "ServiceUnavailable").nth(2))
        .build();
    let b = a.clone();
    assert_eq!(a.decide("SFN", "StartExecution"), None);
    assert_eq!(b.decide("SFN", "StartExecution"), Some(0));
    assert_eq!(a.seen_by(0), 2);
}

#[test]
fn probability_is_deterministic_for_a_seed_and_close_to_p() {
    let run = |seed| {
        let f = Faults::builder()
            .seed(seed)
            .rule(Rule::fail_before_send("dynamodb", "*", "ThrottlingException").probability(0.3))
            .build();
        (0..10_000)
            .map(|_| f.decide("DynamoDB", "PutItem").is_some())
            .collect::<Vec<_>>()
    };
    let a = run(42);
    assert_eq!(a, run(42));
    assert_ne!(a, run(43));
    let hits = a.iter().filter(|&&x| x).count();
    assert!(
        (2_700..3_300).contains(&hits),
        "{hits} hits of 10000 at p=0.3"
    );
    let never = Faults::builder()
        .rule(Rule::lose_response("s3", "*").probability(0.0))
        .build();
    assert!((0..100).all(|_| never.decide("S3", "PutObject").is_none()));
}

#[test]
fn first_firing_rule_wins_and_every_matching_rule_counts() {
    let faults = Faults::builder()
        .rule(Rule::fail_before_send("s3", "PutObject", "SlowDown").nth(1))
        .rule(Rule::lose_response("s3", "*").nth(1))
        .rule(Rule::lose_response("s3", "*").nth(2))
        .build();
    assert_eq!(faults.decide("S3", "PutObject"), Some(0));
    assert_eq!(faults.decide("S3", "HeadObject"), Some(2));
    assert_eq!(
        faults.counts().iter().map(|c| c.seen).collect::<Vec<_>>(),
        [1, 2, 2]
    );
}

#[test]
fn limit_caps_injections() {
    let faults = Faults::builder()
        .rule(Rule::lose_response("s3", "PutObject").limit(2))
        .build();
    let armed = |rule| Armed {
        rule,
        service: "S3".into(),
        operation: "PutObject".into(),
        action: Action::LoseResponse {
            surface: Surface::ResponseError,
        },
    };
    for _ in 0..2 {
        let rule = faults.decide("S3", "PutObject").expect("fires");
        faults.record(&armed(rule));
    }
    assert_eq!(faults.decide("S3", "PutObject"), None);
    assert_eq!(faults.injected(), 2);
}

#[test]
fn none_is_empty_and_installs_nothing() {
    let faults = Faults::none();
    assert!(faults.is_empty());
    assert_eq!(faults.decide("S3", "PutObject"), None);
    let conf = aws_sdk_s3::config::Builder::new()
        .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
        .install_faults(&faults)
        .build();
    assert_eq!(conf.interceptors().count(), 0);
    assert!(conf.http_client().is_none());
}

#[test]
fn installs_an_interceptor_and_a_wrapped_default_client() {
    let faults = Faults::builder()
        .rule(Rule::lose_response("s3", "PutObject").nth(1))
        .build();
    let conf = aws_sdk_s3::config::Builder::new()
        .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
        .install_faults(&faults)
        .build();
    assert_eq!(conf.interceptors().count(), 1);
    assert!(format!("{:?}", conf.http_client().expect("wrapped")).contains("FaultHttpClient"));
}

#[test]
fn from_env_is_off_unless_enabled() {
    // Only checks the disabled path: tests share the process environment.
    if std::env::var(ENABLE_VAR).as_deref() != Ok("1") {
        assert!(Faults::from_env().unwrap().is_none());
    }
}
