//! The mapping on constructed SDK errors, and on the errors the SDK's own HTTP client gives for a
//! port nobody listens on (never sent) and for a server that reads the request and hangs up
//! (sent, answer lost).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use aws_sdk_s3::config::retry::RetryConfig;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::operation::put_object::PutObjectError;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::ConnectorError;

use super::*;

type PutError = SdkError<PutObjectError, HttpResponse>;

fn dispatch_failure(e: ConnectorError) -> PutError {
    SdkError::dispatch_failure(e)
}

fn io(kind: std::io::ErrorKind) -> Box<std::io::Error> {
    Box::new(std::io::Error::new(kind, "injected"))
}

#[test]
fn a_dispatch_failure_after_connecting_is_outcome_unknown_for_an_effect_only() {
    for failure in [
        ConnectorError::io(io(std::io::ErrorKind::ConnectionReset)),
        ConnectorError::timeout(io(std::io::ErrorKind::TimedOut)),
        ConnectorError::other(io(std::io::ErrorKind::UnexpectedEof), None),
        ConnectorError::user(io(std::io::ErrorKind::InvalidInput)),
    ] {
        let shown = format!("{failure:?}");
        let effect = classify_effect("s3 PutObject", dispatch_failure(failure));
        assert_eq!(effect.name(), "Ambiguous.OutcomeUnknown", "{shown}");
        assert!(
            effect.to_string().contains("may have been sent"),
            "{effect}"
        );
    }
    let read = classify(
        "s3 GetObject",
        dispatch_failure(ConnectorError::io(io(std::io::ErrorKind::ConnectionReset))),
    );
    assert_eq!(read.name(), "Transient.Dependency");
}

#[test]
fn a_failed_dns_resolution_was_never_sent() {
    let failure = ConnectorError::io(Box::new(ResolveDnsError::new(io(
        std::io::ErrorKind::NotFound,
    ))));
    let err = classify_effect("s3 PutObject", dispatch_failure(failure));
    assert_eq!(err.name(), "Transient.Dependency");
    assert!(err.to_string().contains("no connection"), "{err}");
}

#[test]
fn timeouts_and_broken_responses_stay_outcome_unknown_for_effects() {
    let timeout: PutError = SdkError::timeout_error(io(std::io::ErrorKind::TimedOut));
    assert_eq!(
        classify_effect("s3 PutObject", timeout).name(),
        "Ambiguous.OutcomeUnknown"
    );
    let timeout: PutError = SdkError::timeout_error(io(std::io::ErrorKind::TimedOut));
    assert_eq!(
        classify("s3 GetObject", timeout).name(),
        "Transient.Dependency"
    );
}

/// An S3 client for `127.0.0.1:port`, one attempt per call.
fn local_s3(port: u16) -> aws_sdk_s3::Client {
    let conf = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "test"))
        .endpoint_url(format!("http://127.0.0.1:{port}"))
        .force_path_style(true)
        .retry_config(RetryConfig::standard().with_max_attempts(1))
        .build();
    aws_sdk_s3::Client::from_conf(conf)
}

async fn put(client: &aws_sdk_s3::Client) -> PutError {
    client
        .put_object()
        .bucket("b")
        .key("k")
        .body(aws_sdk_s3::primitives::ByteStream::from_static(b"x"))
        .send()
        .await
        .expect_err("nothing answers")
}

#[tokio::test]
async fn connection_refused_is_a_dispatch_failure_that_was_never_sent() {
    // A port that was just free: nobody listens, the connect is refused.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = put(&local_s3(port)).await;
    let SdkError::DispatchFailure(failure) = &err else {
        panic!("not a dispatch failure: {err:?}")
    };
    assert!(never_sent(failure), "{err:?}");
    let err = classify_effect("s3 PutObject", err);
    assert_eq!(err.name(), "Transient.Dependency", "{err}");
}

#[tokio::test]
async fn a_server_that_reads_the_request_and_hangs_up_leaves_the_outcome_unknown() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(AtomicUsize::new(0));
    let seen = received.clone();
    // Reads one whole request (headers and the 1-byte body), counts it, closes without a word.
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0, "the client hung up first");
            request.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&request).into_owned();
        assert!(text.starts_with("PUT /b/k"), "{text}");
        seen.fetch_add(1, Ordering::SeqCst);
        conn.flush().unwrap();
        drop(conn);
    });

    let err = put(&local_s3(port)).await;
    server.join().unwrap();
    assert_eq!(received.load(Ordering::SeqCst), 1, "the request arrived");
    let SdkError::DispatchFailure(failure) = &err else {
        panic!("not a dispatch failure: {err:?}")
    };
    assert!(!never_sent(failure), "{err:?}");
    let err = classify_effect("s3 PutObject", err);
    assert_eq!(err.name(), "Ambiguous.OutcomeUnknown", "{err}");
}
