//! What a browser review page asks review-api (issue 15), on the deployed stack: who the signed
//! caller is (`GET /me`), where the task's fields were read (`GET /tasks/{id}/evidence`) and its
//! document (`GET /tasks/{id}/document`, a presigned S3 URL fetched by a plain HTTP client on
//! this machine); another tenant's reviewer gets 404 for all of them. The requests are signed
//! here, as the CLI signs them, with the reviewer role sessions' credentials.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::SystemTime;

use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use docket_e2e::reviewers::{pending_task, reviewer, wait_for_status, Session};
use docket_e2e::stack::{tenant, Stack};
use docket_e2e::util;
use reqwest::Url;
use serde_json::Value;

/// LocalStack's own host names (function URLs, and the endpoint its Lambdas are given): no DNS
/// offline, so the client connects to the gateway for them, as `docket review` does.
const LOCALSTACK_DOMAIN: &str = "localhost.localstack.cloud";

/// An HTTP client that reaches LocalStack's names at the gateway (`AWS_ENDPOINT_URL`'s port on
/// 127.0.0.1) and every other host as usual.
fn client_for(urls: &[&Url]) -> reqwest::Client {
    let gateway = Url::parse(&util::endpoint()).unwrap();
    let port = gateway.port_or_known_default().unwrap();
    let mut http = reqwest::Client::builder();
    for url in urls {
        let host = url.host_str().unwrap();
        if host == LOCALSTACK_DOMAIN || host.ends_with(&format!(".{LOCALSTACK_DOMAIN}")) {
            let port = url.port_or_known_default().unwrap_or(port);
            http = http.resolve(host, SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port));
        }
    }
    http.build().unwrap()
}

/// A SigV4-signed request of `session` to the review API: the status and the JSON answer.
async fn call(session: &Session, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let base = Url::parse(&review_api_url()).unwrap();
    let url = base.join(path.trim_start_matches('/')).unwrap();
    let env = |name: &str| {
        let found = session.env.iter().find(|(k, _)| *k == name);
        found.map(|(_, v)| v.clone()).unwrap()
    };
    let credentials = aws_sdk_sts::config::Credentials::new(
        env("AWS_ACCESS_KEY_ID"),
        env("AWS_SECRET_ACCESS_KEY"),
        Some(env("AWS_SESSION_TOKEN")),
        None,
        "reviewer-session",
    );
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let host = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap()),
        None => url.host_str().unwrap().to_string(),
    };
    let mut headers = vec![("host".to_string(), host)];
    if !bytes.is_empty() {
        headers.push(("content-type".into(), "application/json".into()));
    }
    let identity = credentials.into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("lambda")
        .time(SystemTime::now())
        .settings(SigningSettings::default())
        .build()
        .unwrap()
        .into();
    let signable = SignableRequest::new(
        method,
        url.as_str(),
        headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        SignableBody::Bytes(&bytes),
    )
    .unwrap();
    let (instructions, _) = sign(signable, &params).unwrap().into_parts();
    for (k, v) in instructions.headers() {
        headers.push((k.to_string(), v.to_string()));
    }
    let mut request = client_for(&[&url]).request(method.parse().unwrap(), url.clone());
    for (k, v) in headers {
        request = request.header(k, v);
    }
    let response = request.body(bytes).send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let answer = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {status} {text}"));
    (status, answer)
}

/// The stack's review API URL (stack output `ReviewApiUrl`), as a directory.
fn review_api_url() -> String {
    let text = std::fs::read_to_string(docket_e2e::stack::outputs_path()).unwrap();
    let outputs: Value = serde_json::from_str(&text).unwrap();
    let url = outputs["ReviewApiUrl"].as_str().unwrap();
    format!("{}/", url.trim_end_matches('/'))
}

/// The bytes of one version of an object, read with the test's own S3 client.
async fn raw_version(document: &Value) -> Vec<u8> {
    let cfg = util::aws().await;
    let conf = aws_sdk_s3::config::Builder::from(&cfg)
        .force_path_style(true)
        .build();
    let out = aws_sdk_s3::Client::from_conf(conf)
        .get_object()
        .bucket(document["bucket"].as_str().unwrap())
        .key(document["key"].as_str().unwrap())
        .set_version_id(document["versionId"].as_str().map(String::from))
        .send()
        .await
        .unwrap();
    out.body.collect().await.unwrap().into_bytes().to_vec()
}

#[tokio::test]
async fn a_reviewer_gets_who_they_are_the_evidence_and_the_document_and_another_tenant_nothing() {
    let stack = Stack::load().await;
    let (tenant, other) = (tenant(), tenant());
    let alice = reviewer(&tenant, "alice").await;
    let mallory = reviewer(&other, "mallory").await;
    let (document, task) = pending_task(&stack, &tenant, &alice).await;
    wait_for_status(&stack, &document, "awaiting_review").await;

    let me = call(&alice, "GET", "/me", None).await;
    let (_, shown) = call(&alice, "GET", &format!("/tasks/{task}"), None).await;
    let evidence = call(&alice, "GET", &format!("/tasks/{task}/evidence"), None).await;
    let url = call(&alice, "GET", &format!("/tasks/{task}/document"), None).await;

    assert_eq!(
        me,
        (
            200,
            serde_json::json!({"reviewer": "alice", "tenant": tenant})
        )
    );
    assert_eq!(evidence.0, 200, "{}", evidence.1);
    assert_eq!(evidence.1["pages"], serde_json::json!([{"number": 1}]));
    let date = &evidence.1["fields"]["invoice_date"];
    assert_eq!(date["page"], 1, "{}", evidence.1);
    for side in ["left", "top", "width", "height"] {
        let x = date["box"][side].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&x), "{side} {x}: {date}");
    }
    let right = date["box"]["left"].as_f64().unwrap() + date["box"]["width"].as_f64().unwrap();
    assert!(
        right <= 1.0 && date["box"]["width"].as_f64().unwrap() > 0.0,
        "{date}"
    );
    assert_eq!(url.0, 200, "{}", url.1);
    assert_eq!(url.1["expiresInSeconds"], 300);
    // The URL, as the function made it, fetched as is by a plain client of this machine (locally
    // its host is the function's AWS_ENDPOINT_URL, LocalStack's gateway): exactly the raw
    // upload's bytes (of the task's version), with no credential but the URL's own.
    let presigned = Url::parse(url.1["url"].as_str().unwrap()).unwrap();
    eprintln!(
        "presigned URL: {}://{}:{:?}/<bucket>/<key>?<signature>",
        presigned.scheme(),
        presigned.host_str().unwrap_or_default(),
        presigned.port()
    );
    assert!(
        presigned.query().unwrap().contains("versionId="),
        "{presigned:?}"
    );
    let fetched = reqwest::Client::new().get(presigned.clone()).send().await;
    let fetched = fetched.unwrap_or_else(|e| panic!("fetching the document URL: {e}"));
    assert_eq!(fetched.status().as_u16(), 200);
    let bytes = fetched.bytes().await.unwrap().to_vec();
    let raw = raw_version(&shown["task"]["document"]).await;
    assert!(bytes.starts_with(b"%PDF"), "not the document");
    assert_eq!(bytes, raw, "the URL serves the raw document's bytes");

    // Another tenant's reviewer learns nothing about the task, on any route.
    let (_, theirs) = call(&mallory, "GET", "/me", None).await;
    assert_eq!(theirs["tenant"], other.as_str());
    let check = serde_json::json!({"set": {"invoice_date": "2026-04-03"}});
    for (method, route, body) in [
        ("GET", "", None),
        ("GET", "/evidence", None),
        ("GET", "/document", None),
        ("POST", "/check", Some(&check)),
    ] {
        let (status, refused) =
            call(&mallory, method, &format!("/tasks/{task}{route}"), body).await;
        assert_eq!(
            (status, refused["error"].as_str()),
            (404, Some("Business.ReviewNotFound")),
            "{method} {route}: {refused}"
        );
        assert!(!refused.to_string().contains("X-Amz-"), "{refused}");
    }
    // The owner's check of the same corrections passes and decides nothing.
    let (status, ok) = call(
        &alice,
        "POST",
        &format!("/tasks/{task}/check"),
        Some(&check),
    )
    .await;
    assert_eq!((status, ok), (200, serde_json::json!({"ok": true})));
    let (_, still) = call(&alice, "GET", &format!("/tasks/{task}"), None).await;
    assert_eq!(still["task"]["status"], "pending");
}
