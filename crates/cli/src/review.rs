//! `docket review list|show|approve|reject`: a reviewer's side of human review, through the
//! review API (the review-callback function's URL, stack output `ReviewApiUrl`, `AuthType:
//! AWS_IAM`).
//!
//! Every request is SigV4-signed (service `lambda`) with the caller's credentials from the
//! default chain: the API takes who the reviewer is, and the tenant they act for, from the
//! signature, never from the request. The API never returns a task token, and nothing here
//! would print one: JSON output is the typed [`ReviewTask`] serialized again, which has no
//! token field, not the raw answer.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::time::{Duration, SystemTime};

use anyhow::{bail, ensure, Context};
use aws_credential_types::provider::ProvideCredentials;
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use docket_core::error::ErrorKind;
use docket_core::model::fields::FieldName;
use docket_core::ids::Tenant;
use docket_core::review::{FieldSource, ReviewStatus, ReviewTask, TaskId, Verdict};
use reqwest::Url;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

/// The signing name of Lambda function URLs.
const SERVICE: &str = "lambda";

/// LocalStack's function URL hosts: `<id>.lambda-url.<region>.localhost.localstack.cloud`.
const LOCALSTACK_DOMAIN: &str = "localhost.localstack.cloud";

/// The LocalStack gateway when `AWS_ENDPOINT_URL` is not set.
const DEFAULT_GATEWAY: (&str, u16) = ("127.0.0.1", 4566);

#[derive(clap::Subcommand)]
pub enum Command {
    /// List review tasks of your tenant, oldest first: id, document, status, deadline, reasons.
    List {
        /// The tenant (only your own: another is refused as not found).
        #[arg(long, value_parser = parse_tenant)]
        tenant: Option<Tenant>,
        /// Only tasks with this status.
        #[arg(long, value_parser = status_parser())]
        status: Option<ReviewStatus>,
    },
    /// Show a task: its fields (value, confidence, source), reasons, pointers, status, decision.
    Show {
        /// The task (`rev-` + 32 hex).
        #[arg(value_parser = parse_task)]
        task: TaskId,
    },
    /// Approve a task, optionally correcting fields; the run goes on with them.
    Approve {
        /// The task (`rev-` + 32 hex).
        #[arg(value_parser = parse_task)]
        task: TaskId,
        /// Set a field, e.g. `--set total_amount=120.00` (repeatable; the API checks the value).
        #[arg(long = "set", value_name = "FIELD=VALUE", value_parser = parse_set)]
        set: Vec<(FieldName, String)>,
        /// A note for the record.
        #[arg(long)]
        comment: Option<String>,
    },
    /// Reject a task: the run fails with `Business.ReviewRejected`.
    Reject {
        /// The task (`rev-` + 32 hex).
        #[arg(value_parser = parse_task)]
        task: TaskId,
        /// Why, for the record.
        #[arg(long)]
        reason: String,
    },
}

pub async fn run(stack: &Stack, command: Command, output: Output) -> anyhow::Result<()> {
    // Arguments are checked before any credentials are looked up or a request is sent.
    let request = request_for(&command)?;
    let api = Api::connect(stack.out("ReviewApiUrl")?).await?;
    let url = api_url(&api.base, &request.path, &request.query)?;
    let answer = match api.call(request.method, url, request.body.as_ref()).await? {
        Ok(answer) => answer,
        Err(refusal) => {
            if output == Output::Json {
                print(output, &refusal.json(), String::new);
            }
            bail!(refusal.explain(request.task.as_ref()));
        }
    };
    match command {
        Command::List { .. } => {
            let TaskList { tasks } = serde_json::from_value(answer)
                .context("the review API's task list does not have the expected shape")?;
            print(output, &json!({ "tasks": tasks }), || list_text(&tasks));
        }
        Command::Show { .. } => {
            let task = task_of(answer)?;
            print(output, &json!({ "task": task }), || show_text(&task));
        }
        Command::Approve { .. } | Command::Reject { .. } => {
            let task = task_of(answer)?;
            print(output, &json!({ "task": task }), || decided_text(&task));
        }
    }
    Ok(())
}

/// A request to the review API, before signing: method, path under the base URL, query, body.
#[derive(Debug, PartialEq)]
struct ApiRequest {
    method: &'static str,
    path: String,
    query: Vec<(&'static str, String)>,
    body: Option<Value>,
    /// The task it is about, for messages.
    task: Option<TaskId>,
}

/// The request `command` makes (the contract: `GET tasks?status=&tenant=`, `GET tasks/<id>`,
/// `POST tasks/<id>/decision` with `{"verdict": "approve", "set": {...}, "comment": ...}` or
/// `{"verdict": "reject", "reason": ...}`).
fn request_for(command: &Command) -> anyhow::Result<ApiRequest> {
    Ok(match command {
        Command::List { tenant, status } => ApiRequest {
            method: "GET",
            path: "tasks".into(),
            query: status
                .map(|s| ("status", s.as_str().to_string()))
                .into_iter()
                .chain(tenant.as_ref().map(|t| ("tenant", t.to_string())))
                .collect(),
            body: None,
            task: None,
        },
        Command::Show { task } => ApiRequest {
            method: "GET",
            path: format!("tasks/{task}"),
            query: Vec::new(),
            body: None,
            task: Some(task.clone()),
        },
        Command::Approve { task, set, comment } => {
            let mut body = json!({ "verdict": "approve", "set": corrections(set)? });
            if let Some(comment) = comment {
                body["comment"] = json!(comment);
            }
            decision(task, body)
        }
        Command::Reject { task, reason } => {
            ensure!(!reason.trim().is_empty(), "a rejection needs a --reason");
            decision(task, json!({ "verdict": "reject", "reason": reason }))
        }
    })
}

fn decision(task: &TaskId, body: Value) -> ApiRequest {
    ApiRequest {
        method: "POST",
        path: format!("tasks/{task}/decision"),
        query: Vec::new(),
        body: Some(body),
        task: Some(task.clone()),
    }
}

fn status_parser() -> impl TypedValueParser<Value = ReviewStatus> {
    PossibleValuesParser::new(ReviewStatus::ALL.map(ReviewStatus::as_str))
        .map(|s| ReviewStatus::parse(&s).expect("one of the possible values"))
}

fn parse_task(s: &str) -> Result<TaskId, String> {
    TaskId::parse(s).map_err(|e| e.to_string())
}

fn parse_tenant(s: &str) -> Result<Tenant, String> {
    Tenant::parse(s).map_err(|e| e.to_string())
}

/// `FIELD=VALUE` (split at the first `=`, so a value may contain one): a known field and a
/// non-empty value. Whether the value is well-formed is the API's to say.
fn parse_set(s: &str) -> Result<(FieldName, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected FIELD=VALUE, got {s:?}"))?;
    let name = name.trim();
    let field = FieldName::ALL
        .into_iter()
        .find(|f| f.as_str() == name)
        .ok_or_else(|| {
            let known: Vec<_> = FieldName::ALL.iter().map(|f| f.as_str()).collect();
            format!("unknown field {name:?}; fields are {}", known.join(", "))
        })?;
    if value.trim().is_empty() {
        return Err(format!("no value given for {field}"));
    }
    Ok((field, value.to_string()))
}

/// The `set` object of an approval; a field set twice is refused rather than one value chosen.
fn corrections(set: &[(FieldName, String)]) -> anyhow::Result<BTreeMap<&'static str, String>> {
    let mut out = BTreeMap::new();
    for (field, value) in set {
        if out.insert(field.as_str(), value.clone()).is_some() {
            bail!("--set {field}= is given more than once");
        }
    }
    Ok(out)
}

/// `base` (the function URL) with `path` and `query`; the base's own path is kept as a
/// directory whether or not it ends with `/`.
fn api_url(base: &Url, path: &str, query: &[(&str, String)]) -> anyhow::Result<Url> {
    let mut base = base.clone();
    if !base.path().ends_with('/') {
        let dir = format!("{}/", base.path());
        base.set_path(&dir);
    }
    let mut url = base.join(path).context("building the review API URL")?;
    // No `?` at all without parameters: `query_pairs_mut` would leave an empty query behind.
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    Ok(url)
}

/// The `Host` header for `url`: its host, with the port unless it is the scheme's default (the
/// form hyper and aws-sigv4 both use). It is sent explicitly, and signed, so that the Host
/// signed is the Host sent.
fn host_header(url: &Url) -> anyhow::Result<String> {
    let host = url.host_str().context("the review API URL has no host")?;
    Ok(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    })
}

/// The headers of a signed request to `url`: `host`, `content-type` when there is a body, and
/// the signature's (`x-amz-date`, `x-amz-security-token` with a session token, `authorization`).
/// Exactly these are sent.
fn signed_headers(
    method: &str,
    url: &Url,
    body: &[u8],
    credentials: &Credentials,
    region: &str,
    service: &str,
    time: SystemTime,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut headers = vec![("host".to_string(), host_header(url)?)];
    if !body.is_empty() {
        headers.push(("content-type".into(), "application/json".into()));
    }
    let identity = credentials.clone().into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .context("signing the review API request")?
        .into();
    let request = SignableRequest::new(
        method,
        url.as_str(),
        headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        SignableBody::Bytes(body),
    )
    .context("signing the review API request")?;
    let (instructions, _signature) = sign(request, &params)
        .context("signing the review API request")?
        .into_parts();
    headers.extend(
        instructions
            .headers()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    Ok(headers)
}

/// The region to sign for: the one a function URL names
/// (`<id>.lambda-url.<region>.on.aws`, or LocalStack's `...localhost.localstack.cloud`), since
/// a signature for any other region is refused; otherwise the SDK config's.
fn signing_region(url: &Url, configured: Option<&str>) -> anyhow::Result<String> {
    let labels: Vec<&str> = url.host_str().unwrap_or_default().split('.').collect();
    let named = labels
        .windows(2)
        .find(|w| w[0] == "lambda-url")
        .map(|w| w[1]);
    named
        .or(configured)
        .map(String::from)
        .context("no AWS region configured (set AWS_REGION)")
}

/// Where to connect for a LocalStack function URL, whose host has no DNS offline: `(url host,
/// gateway host, gateway port)` from `AWS_ENDPOINT_URL` (default 127.0.0.1:4566); `None` for
/// any other host, which is resolved as usual.
fn localstack_gateway(
    url: &Url,
    endpoint: Option<&str>,
) -> anyhow::Result<Option<(String, String, u16)>> {
    let host = url.host_str().context("the review API URL has no host")?;
    if !host.ends_with(&format!(".{LOCALSTACK_DOMAIN}")) {
        return Ok(None);
    }
    let (gateway, port) = match endpoint {
        Some(endpoint) => {
            let e = Url::parse(endpoint)
                .with_context(|| format!("AWS_ENDPOINT_URL {endpoint:?} is not a URL"))?;
            let gateway = e
                .host_str()
                .with_context(|| format!("AWS_ENDPOINT_URL {endpoint:?} has no host"))?;
            let port = e.port_or_known_default().unwrap_or(DEFAULT_GATEWAY.1);
            (gateway.to_string(), port)
        }
        None => (DEFAULT_GATEWAY.0.to_string(), DEFAULT_GATEWAY.1),
    };
    Ok(Some((host.to_string(), gateway, port)))
}

/// The socket address of the gateway `host:port`: an IP literal as is, `localhost` and
/// LocalStack's own names as 127.0.0.1 (no DNS needed), anything else through the resolver.
fn gateway_addr(host: &str, port: u16) -> anyhow::Result<SocketAddr> {
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = literal.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    if host == "localhost" || host == LOCALSTACK_DOMAIN || host.ends_with(LOCALSTACK_DOMAIN) {
        return Ok(SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port));
    }
    (host, port)
        .to_socket_addrs()
        .with_context(|| format!("resolving the LocalStack gateway {host}:{port}"))?
        .next()
        .with_context(|| format!("the LocalStack gateway {host} has no address"))
}

/// A signed-request client of the review API.
struct Api {
    base: Url,
    http: reqwest::Client,
    credentials: Credentials,
    region: String,
}

impl Api {
    async fn connect(url: &str) -> anyhow::Result<Api> {
        let base = Url::parse(url).with_context(|| format!("ReviewApiUrl {url:?} is not a URL"))?;
        let mut http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60));
        let endpoint = std::env::var("AWS_ENDPOINT_URL").ok();
        if let Some((host, gateway, port)) = localstack_gateway(&base, endpoint.as_deref())? {
            // reqwest keeps the URL's own port when it has one; the gateway's port then only
            // matters for a URL without one.
            http = http.resolve(&host, gateway_addr(&gateway, port)?);
        }
        let sdk = docket_aws::load_config().await;
        let credentials = sdk
            .credentials_provider()
            .context("no AWS credentials provider configured")?
            .provide_credentials()
            .await
            .context("no AWS credentials to sign the review API request with")?;
        let region = signing_region(&base, sdk.region().map(|r| r.as_ref()))?;
        Ok(Api {
            base,
            http: http.build().context("building the HTTP client")?,
            credentials,
            region,
        })
    }

    /// Sends a signed request: the JSON answer of a 2xx, or the API's refusal.
    async fn call(
        &self,
        method: &'static str,
        url: Url,
        body: Option<&Value>,
    ) -> anyhow::Result<Result<Value, Refusal>> {
        let bytes = body
            .map(serde_json::to_vec)
            .transpose()?
            .unwrap_or_default();
        let headers = signed_headers(
            method,
            &url,
            &bytes,
            &self.credentials,
            &self.region,
            SERVICE,
            SystemTime::now(),
        )?;
        let mut request = self.http.request(method.parse()?, url.clone());
        for (name, value) in headers {
            request = request.header(name, value);
        }
        if !bytes.is_empty() {
            request = request.body(bytes);
        }
        let what = format!("{method} {}", url.path());
        let response = request
            .send()
            .await
            .with_context(|| format!("review API {what}: no answer"))?;
        let status = response.status().as_u16();
        let body = response
            .bytes()
            .await
            .with_context(|| format!("review API {what}: reading the answer"))?;
        if !(200..300).contains(&status) {
            return Ok(Err(Refusal::parse(status, &body)));
        }
        let answer = serde_json::from_slice(&body)
            .with_context(|| format!("review API {what}: the answer is not JSON"))?;
        Ok(Ok(answer))
    }
}

#[derive(Deserialize)]
struct TaskList {
    tasks: Vec<ReviewTask>,
}

#[derive(Deserialize)]
struct TaskAnswer {
    task: ReviewTask,
}

fn task_of(answer: Value) -> anyhow::Result<ReviewTask> {
    let TaskAnswer { task } = serde_json::from_value(answer)
        .context("the review API's task does not have the expected shape")?;
    Ok(task)
}

/// A 4xx/5xx answer: `{"error": "<Family.Name>", "message": ..., "task": ReviewTask?}`, or
/// what the function URL itself answers (403 `{"Message": "Forbidden"}`), or anything else a
/// proxy may put there.
#[derive(Debug)]
struct Refusal {
    status: u16,
    error: String,
    message: String,
    task: Option<ReviewTask>,
}

impl Refusal {
    fn parse(status: u16, body: &[u8]) -> Refusal {
        let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(String::from);
        let error = text("error").unwrap_or_else(|| match status {
            403 => "Forbidden".into(),
            _ => format!("HTTP {status}"),
        });
        let message = text("message")
            .or_else(|| text("Message"))
            .unwrap_or_else(|| {
                let raw = String::from_utf8_lossy(body);
                raw.trim().chars().take(300).collect()
            });
        // A task that does not parse is left out rather than hiding the error itself.
        let task = value
            .get("task")
            .and_then(|t| serde_json::from_value(t.clone()).ok());
        Refusal {
            status,
            error,
            message,
            task,
        }
    }

    /// The error body for `--output json`: the contract's fields and the HTTP status.
    fn json(&self) -> Value {
        let mut v = json!({
            "error": self.error,
            "message": self.message,
            "status": self.status,
        });
        if let Some(task) = &self.task {
            v["task"] = json!(task);
        }
        v
    }

    /// The message the command fails with: the error's name and message, and what the
    /// recorded task says (who decided what and when; when and why it expired).
    fn explain(&self, task: Option<&TaskId>) -> String {
        let mut msg = if self.message.is_empty() || self.message == self.error {
            format!("review API: {} (HTTP {})", self.error, self.status)
        } else {
            format!("review API: {}: {}", self.error, self.message)
        };
        let recorded = self.task.as_ref();
        let id = recorded.map(|t| &t.task_id).or(task);
        match ErrorKind::from_name(&self.error) {
            Some(ErrorKind::AlreadyDecided) => match recorded.and_then(|t| t.decision.as_ref()) {
                Some(d) => {
                    let what = if d.is_approval() {
                        "approved"
                    } else {
                        "rejected"
                    };
                    msg += &format!(
                        "\ntask {} was already decided: {what} by {} at {}",
                        id.map(TaskId::as_str).unwrap_or("?"),
                        d.reviewer.id,
                        d.decided_at
                    );
                }
                None => msg += "\n(the API did not say who decided)",
            },
            Some(ErrorKind::ReviewExpired) => {
                if let Some(e) = recorded.and_then(|t| t.expiry.as_ref()) {
                    msg += &format!("\nthe task expired at {} ({})", e.at, e.reason);
                }
            }
            _ if self.status == 403 => {
                msg += "\nthe caller is not a reviewer (sign in with your tenant's reviewer role), \
                        or the request was not signed"
            }
            _ if self.error.starts_with("Transient.") || self.status >= 500 => {
                msg += "\nthis may pass: try again"
            }
            _ => {}
        }
        msg
    }
}

fn list_text(tasks: &[ReviewTask]) -> String {
    if tasks.is_empty() {
        return "no review tasks".into();
    }
    tasks
        .iter()
        .map(|t| {
            let reasons: Vec<&str> = t.reasons.iter().map(|r| r.code.as_str()).collect();
            format!(
                "{}  {}  {:<8} {}  {}",
                t.task_id,
                t.document_id,
                t.status.as_str(),
                t.deadline,
                reasons.join(",")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn source_text(source: &FieldSource) -> String {
    match source {
        FieldSource::Extracted { page, line } => format!("extracted p{page} l{line}"),
        FieldSource::Reviewer { id } => format!("reviewer {id}"),
    }
}

fn show_text(t: &ReviewTask) -> String {
    let mut lines = vec![
        format!("task      {}", t.task_id),
        format!("tenant    {}", t.tenant),
        format!("document  {}", t.document_id),
        format!("run       {}", t.run_id),
        format!("status    {}", t.status.as_str()),
        format!("created   {}", t.created_at),
        format!("deadline  {}", t.deadline),
        "fields:".into(),
    ];
    for (name, f) in &t.fields {
        lines.push(format!(
            "  {:<15} {:<30} {:.2}  {}",
            name.as_str(),
            f.value,
            f.confidence,
            source_text(&f.source)
        ));
    }
    lines.push("reasons:".into());
    for r in &t.reasons {
        let field = r.field.map(FieldName::as_str).unwrap_or("-");
        lines.push(format!("  {:<22} {:<15} {}", r.code, field, r.detail));
    }
    lines.push("pointers:".into());
    lines.push(format!("  document  {}", t.document));
    lines.push(format!("  ocr       {}", t.ocr));
    lines.push(format!("  report    {}", t.report));
    if let Some(d) = &t.decision {
        lines.push(format!("decision  {}", d.summary()));
        lines.extend(verdict_lines(t));
    }
    if let Some(at) = &t.delivered_at {
        lines.push(format!("delivered {at}"));
    }
    if let Some(e) = &t.expiry {
        lines.push(format!("expired   {} ({})", e.at, e.reason));
    }
    lines.join("\n")
}

/// The decision's comment or reason and its changes, indented.
fn verdict_lines(t: &ReviewTask) -> Vec<String> {
    let Some(d) = &t.decision else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    match &d.verdict {
        Verdict::Approve { comment, .. } => {
            if let Some(c) = comment {
                lines.push(format!("  comment: {c}"));
            }
        }
        Verdict::Reject { reason } => lines.push(format!("  reason: {reason}")),
    }
    for c in &d.changes {
        let before = c
            .before
            .as_ref()
            .map(|b| format!("{} ({:.2})", b.value, b.confidence))
            .unwrap_or_else(|| "(none)".into());
        lines.push(format!(
            "  {}: {before} -> {} ({:.2})",
            c.field, c.after.value, c.after.confidence
        ));
    }
    if d.is_approval() && d.changes.is_empty() {
        lines.push("  no fields changed".into());
    }
    lines
}

fn decided_text(t: &ReviewTask) -> String {
    let verb = match &t.decision {
        Some(d) if d.is_approval() => "approved",
        Some(_) => "rejected",
        None => "recorded no decision on",
    };
    let mut lines = vec![format!("{verb} task {}", t.task_id)];
    lines.extend(verdict_lines(t));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    const TASK: &str = "rev-0123456789abcdef0123456789abcdef";

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn task_json(status: &str) -> Value {
        json!({
            "taskId": TASK,
            "tenant": "acme",
            "documentId": "d0123456789abcdef01234567",
            "runId": "d0123456789abcdef01234567-r0123456789abcdef0123",
            "reasons": [{"code": "low_confidence", "field": "total_amount", "detail": "0.62 < 0.80"}],
            "fields": {
                "total_amount": {"value": "12.00", "confidence": 0.62,
                                 "source": {"kind": "extracted", "page": 1, "line": 12}},
                "currency": {"value": "EUR", "confidence": 0.99,
                             "source": {"kind": "extracted", "page": 1, "line": 13}}
            },
            "document": {"bucket": "raw", "key": "inbox/acme/a.pdf", "versionId": "v1"},
            "ocr": {"bucket": "normalized", "key": "acme/d/r/ocr.json"},
            "report": {"bucket": "derived", "key": "acme/d/r/validation.json"},
            "createdAt": "2026-03-01T10:00:00.000Z",
            "deadline": "2026-03-02T10:00:00.000Z",
            "status": status
        })
    }

    fn decided_json() -> Value {
        let mut t = task_json("decided");
        t["decision"] = json!({
            "reviewer": {"id": "alice", "tenant": "acme"},
            "decidedAt": "2026-03-01T11:00:00.000Z",
            "verdict": "approve",
            "corrections": {"total_amount": "120.00"},
            "comment": "typo on the scan",
            "changes": [{"field": "total_amount",
                         "before": {"value": "12.00", "confidence": 0.62},
                         "after": {"value": "120.00", "confidence": 1.0}}]
        });
        t
    }

    fn task(v: Value) -> ReviewTask {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn set_splits_at_the_first_equals_sign_into_a_known_field_and_its_value() {
        assert_eq!(
            parse_set("total_amount=120.00").unwrap(),
            (FieldName::TotalAmount, "120.00".to_string())
        );
        assert_eq!(
            parse_set("issuer=A=B GmbH").unwrap(),
            (FieldName::Issuer, "A=B GmbH".to_string())
        );
    }

    #[test]
    fn set_refuses_a_missing_equals_an_unknown_field_and_an_empty_value() {
        assert!(parse_set("total_amount")
            .unwrap_err()
            .contains("FIELD=VALUE"));
        let unknown = parse_set("totl=1.00").unwrap_err();
        assert!(unknown.contains("\"totl\"") && unknown.contains("total_amount"));
        assert!(parse_set("currency= ").unwrap_err().contains("no value"));
    }

    #[test]
    fn a_field_set_twice_is_refused() {
        let set = vec![
            (FieldName::Currency, "EUR".to_string()),
            (FieldName::Currency, "USD".to_string()),
        ];
        assert!(corrections(&set).is_err());
    }

    #[test]
    fn approve_sends_the_verdict_the_set_object_and_the_comment() {
        let r = request_for(&Command::Approve {
            task: TaskId::parse(TASK).unwrap(),
            set: vec![(FieldName::TotalAmount, "120.00".into())],
            comment: Some("typo".into()),
        })
        .unwrap();
        assert_eq!(
            (r.method, r.path.as_str()),
            ("POST", &*format!("tasks/{TASK}/decision"))
        );
        assert_eq!(
            r.body.unwrap(),
            json!({"verdict": "approve", "set": {"total_amount": "120.00"}, "comment": "typo"})
        );
    }

    #[test]
    fn approve_without_corrections_sends_an_empty_set_and_no_comment() {
        let r = request_for(&Command::Approve {
            task: TaskId::parse(TASK).unwrap(),
            set: Vec::new(),
            comment: None,
        })
        .unwrap();
        assert_eq!(r.body.unwrap(), json!({"verdict": "approve", "set": {}}));
    }

    #[test]
    fn reject_sends_the_reason_and_needs_one() {
        let task = TaskId::parse(TASK).unwrap();
        let r = request_for(&Command::Reject {
            task: task.clone(),
            reason: "not an invoice".into(),
        })
        .unwrap();
        assert_eq!(
            r.body.unwrap(),
            json!({"verdict": "reject", "reason": "not an invoice"})
        );
        let blank = Command::Reject {
            task,
            reason: "  ".into(),
        };
        assert!(request_for(&blank).is_err());
    }

    #[test]
    fn list_puts_only_the_given_filters_in_the_query() {
        let all = request_for(&Command::List {
            tenant: None,
            status: None,
        })
        .unwrap();
        let base = url("https://abc.lambda-url.eu-west-1.on.aws/");
        assert_eq!(
            api_url(&base, &all.path, &all.query).unwrap().as_str(),
            "https://abc.lambda-url.eu-west-1.on.aws/tasks"
        );
        let some = request_for(&Command::List {
            tenant: Some(Tenant::parse("acme").unwrap()),
            status: Some(ReviewStatus::Pending),
        })
        .unwrap();
        assert_eq!(
            api_url(&base, &some.path, &some.query).unwrap().as_str(),
            "https://abc.lambda-url.eu-west-1.on.aws/tasks?status=pending&tenant=acme"
        );
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

    #[test]
    fn already_decided_says_who_decided_what_and_when() {
        let body = json!({
            "error": "Conflict.AlreadyDecided",
            "message": "the task is decided",
            "task": decided_json()
        });
        let r = Refusal::parse(409, body.to_string().as_bytes());
        assert_eq!(r.error, "Conflict.AlreadyDecided");
        let msg = r.explain(None);
        assert!(msg.contains("Conflict.AlreadyDecided: the task is decided"));
        assert!(msg.contains(&format!(
            "task {TASK} was already decided: approved by alice at 2026-03-01T11:00:00.000Z"
        )));
        assert_eq!(r.json()["task"], decided_json());
        assert_eq!(r.json()["status"], 409);
    }

    #[test]
    fn an_expired_task_says_when_and_why() {
        let mut t = task_json("expired");
        t["expiry"] = json!({"reason": "TaskTimedOut", "at": "2026-03-02T10:00:01.000Z"});
        let body = json!({"error": "Conflict.ReviewExpired", "message": "too late", "task": t});
        let msg = Refusal::parse(410, body.to_string().as_bytes()).explain(None);
        assert!(msg.contains("Conflict.ReviewExpired: too late"));
        assert!(msg.contains("expired at 2026-03-02T10:00:01.000Z (TaskTimedOut)"));
    }

    #[test]
    fn the_function_urls_own_403_and_a_non_json_body_still_make_a_message() {
        let r = Refusal::parse(403, br#"{"Message":"Forbidden"}"#);
        assert_eq!(
            (r.error.as_str(), r.message.as_str()),
            ("Forbidden", "Forbidden")
        );
        let msg = r.explain(None);
        assert!(msg.starts_with("review API: Forbidden (HTTP 403)\n"));
        assert!(msg.contains("not a reviewer"));
        let r = Refusal::parse(502, b"<html>Bad Gateway</html>");
        assert_eq!(r.error, "HTTP 502");
        assert_eq!(r.message, "<html>Bad Gateway</html>");
        assert!(r.task.is_none());
        assert!(r.json().get("task").is_none());
    }

    #[test]
    fn a_transient_error_says_to_try_again() {
        let body = json!({"error": "Transient.Throttled", "message": "slow down"});
        let msg = Refusal::parse(503, body.to_string().as_bytes()).explain(None);
        assert!(msg.starts_with("review API: Transient.Throttled: slow down"));
        assert!(msg.contains("try again"));
    }

    #[test]
    fn list_shows_one_line_per_task_with_its_reason_codes() {
        let text = list_text(&[task(task_json("pending"))]);
        assert_eq!(
            text,
            format!(
                "{TASK}  d0123456789abcdef01234567  pending  2026-03-02T10:00:00.000Z  \
                 low_confidence"
            )
        );
        assert_eq!(list_text(&[]), "no review tasks");
    }

    #[test]
    fn show_has_fields_with_confidence_and_source_reasons_pointers_and_the_decision() {
        let text = show_text(&task(decided_json()));
        for expected in [
            "status    decided",
            "total_amount",
            "12.00",
            "0.62  extracted p1 l12",
            "low_confidence",
            "document  s3://raw/inbox/acme/a.pdf?versionId=v1",
            "report    s3://derived/acme/d/r/validation.json",
            "decision  approved by alice at 2026-03-01T11:00:00.000Z",
            "comment: typo on the scan",
            "total_amount: 12.00 (0.62) -> 120.00 (1.00)",
        ] {
            assert!(text.contains(expected), "{expected:?} missing in\n{text}");
        }
    }

    #[test]
    fn a_decision_prints_the_verdict_and_the_changes() {
        let text = decided_text(&task(decided_json()));
        assert!(text.starts_with(&format!("approved task {TASK}\n")));
        assert!(text.contains("total_amount: 12.00 (0.62) -> 120.00 (1.00)"));
        let mut rejected = task_json("decided");
        rejected["decision"] = json!({
            "reviewer": {"id": "bob", "tenant": "acme"},
            "decidedAt": "2026-03-01T11:00:00.000Z",
            "verdict": "reject",
            "reason": "not an invoice",
            "changes": []
        });
        assert_eq!(
            decided_text(&task(rejected)),
            format!("rejected task {TASK}\n  reason: not an invoice")
        );
    }
}
