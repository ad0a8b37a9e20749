//! Unit tests of the review API's client (`super`): URLs, signatures, answers' shapes.

use std::time::UNIX_EPOCH;

use super::*;
use crate::review::fixtures::{task_json, url, TASK};

#[test]
fn a_list_page_carries_the_next_token_when_more_follow() {
    let more =
        page_of(serde_json::json!({"tasks": [task_json("pending")], "nextToken": TASK})).unwrap();
    let last = page_of(serde_json::json!({"tasks": []})).unwrap();

    assert_eq!(
        (more.tasks.len(), more.next_token.as_deref()),
        (1, Some(TASK))
    );
    assert_eq!((last.tasks.len(), last.next_token), (0, None));
}

#[test]
fn the_base_url_is_a_directory_with_or_without_its_trailing_slash() {
    for base in ["http://h:4566/api", "http://h:4566/api/"] {
        assert_eq!(
            api_url(&url(base), &format!("tasks/{TASK}"), &[])
                .unwrap()
                .as_str(),
            format!("http://h:4566/api/tasks/{TASK}")
        );
    }
}

#[test]
fn the_host_header_has_the_port_unless_it_is_the_schemes_default() {
    let local = "http://abc.lambda-url.us-east-1.localhost.localstack.cloud:4566/tasks";
    assert_eq!(
        host_header(&url(local)).unwrap(),
        "abc.lambda-url.us-east-1.localhost.localstack.cloud:4566"
    );
    assert_eq!(
        host_header(&url("https://abc.lambda-url.eu-west-1.on.aws:443/")).unwrap(),
        "abc.lambda-url.eu-west-1.on.aws"
    );
}

/// AWS's SigV4 test suite, `get-vanilla-with-session-token` (also in aws-sigv4's sources).
#[test]
fn signing_matches_the_sigv4_test_suite_with_a_session_token() {
    let creds = Credentials::new(
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        Some("6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267".into()),
        None,
        "test",
    );
    let time = UNIX_EPOCH + Duration::from_secs(1_440_938_160); // 2015-08-30T12:36:00Z
    let headers = signed_headers(
        "GET",
        &url("https://example.amazonaws.com/"),
        b"",
        &creds,
        "us-east-1",
        "service",
        time,
    )
    .unwrap();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(get("host"), Some("example.amazonaws.com"));
    assert_eq!(get("x-amz-date"), Some("20150830T123600Z"));
    assert_eq!(
        get("x-amz-security-token"),
        Some("6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267")
    );
    assert_eq!(
        get("authorization"),
        Some(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date;x-amz-security-token, \
             Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"
        )
    );
}

#[test]
fn a_post_signs_its_host_with_port_its_content_type_and_its_body() {
    let creds = Credentials::new("AKID", "secret", None, None, "test");
    let u = url(&format!(
        "http://abc.lambda-url.us-east-1.localhost.localstack.cloud:4566/tasks/{TASK}/decision"
    ));
    let sign = |u: &Url, body: &[u8]| {
        signed_headers("POST", u, body, &creds, "us-east-1", SERVICE, UNIX_EPOCH).unwrap()
    };
    let body = br#"{"verdict":"reject","reason":"x"}"#;
    let headers = sign(&u, body);
    let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    assert!(!names.contains(&"x-amz-security-token"));
    let auth = |h: &[(String, String)]| {
        h.iter()
            .find(|(k, _)| k == "authorization")
            .unwrap()
            .1
            .clone()
    };
    assert!(auth(&headers).contains("/19700101/us-east-1/lambda/aws4_request"));
    assert!(auth(&headers).contains("SignedHeaders=content-type;host;x-amz-date,"));
    assert_eq!(
        headers[0],
        (
            "host".into(),
            "abc.lambda-url.us-east-1.localhost.localstack.cloud:4566".into()
        )
    );
    // The port and the body are part of what is signed.
    let other_port = sign(&url(&u.as_str().replace(":4566", ":4567")), body);
    let other_body = sign(&u, b"{}");
    assert_ne!(auth(&headers), auth(&other_port));
    assert_ne!(auth(&headers), auth(&other_body));
}

#[test]
fn the_signing_region_is_the_one_the_function_url_names() {
    let aws = url("https://abc.lambda-url.eu-west-1.on.aws/");
    assert_eq!(
        signing_region(&aws, Some("us-east-1")).unwrap(),
        "eu-west-1"
    );
    let local = url("http://abc.lambda-url.us-east-1.localhost.localstack.cloud:4566/");
    assert_eq!(signing_region(&local, None).unwrap(), "us-east-1");
    let other = url("https://review.example.com/");
    assert_eq!(
        signing_region(&other, Some("eu-central-1")).unwrap(),
        "eu-central-1"
    );
    assert!(signing_region(&other, None).is_err());
}

#[test]
fn a_localstack_function_url_connects_to_the_gateway_from_aws_endpoint_url() {
    let local = url("http://abc.lambda-url.us-east-1.localhost.localstack.cloud:4566/");
    let host = "abc.lambda-url.us-east-1.localhost.localstack.cloud".to_string();
    assert_eq!(
        localstack_gateway(&local, None).unwrap(),
        Some((host.clone(), "127.0.0.1".into(), 4566))
    );
    assert_eq!(
        localstack_gateway(&local, Some("http://localhost:4567")).unwrap(),
        Some((host, "localhost".into(), 4567))
    );
    assert!(localstack_gateway(&local, Some("not a url")).is_err());
}

#[test]
fn an_aws_function_url_is_resolved_as_usual() {
    let aws = url("https://abc.lambda-url.eu-west-1.on.aws/");
    assert_eq!(
        localstack_gateway(&aws, Some("http://localhost:4566")).unwrap(),
        None
    );
}

#[test]
fn gateway_addresses_need_no_dns_for_literals_and_local_names() {
    assert_eq!(
        gateway_addr("127.0.0.1", 4566).unwrap(),
        "127.0.0.1:4566".parse().unwrap()
    );
    assert_eq!(
        gateway_addr("[::1]", 4566).unwrap(),
        "[::1]:4566".parse().unwrap()
    );
    for name in ["localhost", "localhost.localstack.cloud"] {
        assert_eq!(
            gateway_addr(name, 4566).unwrap(),
            "127.0.0.1:4566".parse().unwrap()
        );
    }
}
