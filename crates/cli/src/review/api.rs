//! The review API's client: the URL of a request, its SigV4 signature (with the caller's
//! credentials from the default chain), the connection to a LocalStack function URL that has no
//! DNS offline, and the answers' shapes.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use docket_core::review::ReviewTask;
use reqwest::Url;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Mutex;

use super::refusal::Refusal;

/// The signing name of Lambda function URLs.
const SERVICE: &str = "lambda";

/// LocalStack's function URL hosts: `<id>.lambda-url.<region>.localhost.localstack.cloud`.
const LOCALSTACK_DOMAIN: &str = "localhost.localstack.cloud";

/// The LocalStack gateway when `AWS_ENDPOINT_URL` is not set.
const DEFAULT_GATEWAY: (&str, u16) = ("127.0.0.1", 4566);

/// `base` (the function URL) with `path` and `query`; the base's own path is kept as a
/// directory whether or not it ends with `/`.
pub(crate) fn api_url(base: &Url, path: &str, query: &[(&str, String)]) -> anyhow::Result<Url> {
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
pub(crate) struct Api {
    pub(crate) base: Url,
    http: reqwest::Client,
    provider: SharedCredentialsProvider,
    /// The credentials last resolved; resolved again when they are near their expiry (a
    /// long-running `review serve` outlives an assumed role's session).
    credentials: Mutex<Credentials>,
    region: String,
}

/// How long before their expiry credentials are resolved again.
const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(300);

impl Api {
    pub(crate) async fn connect(url: &str) -> anyhow::Result<Api> {
        let base = Url::parse(url).with_context(|| format!("ReviewApiUrl {url:?} is not a URL"))?;
        let http = client_for(&base, Duration::from_secs(60))?;
        let sdk = docket_aws::load_config().await;
        let provider = sdk
            .credentials_provider()
            .context("no AWS credentials provider configured")?;
        let credentials = resolve(&provider).await?;
        let region = signing_region(&base, sdk.region().map(|r| r.as_ref()))?;
        Ok(Api {
            base,
            http,
            provider,
            credentials: Mutex::new(credentials),
            region,
        })
    }

    /// The credentials to sign with now: the last ones, or fresh ones when those expire soon.
    async fn credentials(&self) -> anyhow::Result<Credentials> {
        let mut held = self.credentials.lock().await;
        let expiring = held
            .expiry()
            .is_some_and(|at| at <= SystemTime::now() + REFRESH_BEFORE_EXPIRY);
        if expiring {
            *held = resolve(&self.provider).await?;
        }
        Ok(held.clone())
    }

    /// Sends a signed request: the JSON answer of a 2xx, or the API's refusal.
    pub(crate) async fn call(
        &self,
        method: &'static str,
        url: Url,
        body: Option<&Value>,
    ) -> anyhow::Result<Result<Value, Refusal>> {
        let bytes = body
            .map(serde_json::to_vec)
            .transpose()?
            .unwrap_or_default();
        let what = format!("{method} {}", url.path());
        let (status, body) = self.send(method, url, bytes).await?;
        if !(200..300).contains(&status) {
            return Ok(Err(Refusal::parse(status, &body)));
        }
        let answer = serde_json::from_slice(&body)
            .with_context(|| format!("review API {what}: the answer is not JSON"))?;
        Ok(Ok(answer))
    }

    /// Sends a signed request with a JSON `body` (empty: none): the answer's status and body,
    /// whatever they are.
    pub(crate) async fn send(
        &self,
        method: &str,
        url: Url,
        body: Vec<u8>,
    ) -> anyhow::Result<(u16, Vec<u8>)> {
        let headers = signed_headers(
            method,
            &url,
            &body,
            &self.credentials().await?,
            &self.region,
            SERVICE,
            SystemTime::now(),
        )?;
        let mut request = self.http.request(method.parse()?, url.clone());
        for (name, value) in headers {
            request = request.header(name, value);
        }
        if !body.is_empty() {
            request = request.body(body);
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
        Ok((status, body.to_vec()))
    }

    /// Reads the object a presigned URL the API handed out points at. The URL carries its own
    /// signature, so nothing is signed here. (What type the object was stored with is not
    /// asked: the uploader chose it.)
    pub(crate) async fn fetch_presigned(&self, url: &str) -> anyhow::Result<Vec<u8>> {
        let url = Url::parse(url).context("the document URL is not a URL")?;
        // Never put the URL itself in an error: it is a bearer credential until it expires.
        let response = client_for(&url, Duration::from_secs(120))?
            .get(url)
            .send()
            .await
            .context("reading the document: no answer from storage")?;
        let status = response.status();
        anyhow::ensure!(
            status.is_success(),
            "reading the document: storage answered {status}"
        );
        let bytes = response
            .bytes()
            .await
            .context("reading the document's bytes")?;
        Ok(bytes.to_vec())
    }
}

/// An HTTP client for `url` with a `timeout`: a LocalStack host (no DNS offline) connects to
/// the gateway of `AWS_ENDPOINT_URL`; any other host is resolved as usual.
fn client_for(url: &Url, timeout: Duration) -> anyhow::Result<reqwest::Client> {
    let mut http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(timeout);
    let endpoint = std::env::var("AWS_ENDPOINT_URL").ok();
    if let Some((host, gateway, port)) = localstack_gateway(url, endpoint.as_deref())? {
        // reqwest keeps the URL's own port when it has one; the gateway's port then only
        // matters for a URL without one.
        http = http.resolve(&host, gateway_addr(&gateway, port)?);
    }
    http.build().context("building the HTTP client")
}

/// Credentials from `provider`, or why there are none.
async fn resolve(provider: &SharedCredentialsProvider) -> anyhow::Result<Credentials> {
    provider
        .provide_credentials()
        .await
        .context("no AWS credentials to sign the review API request with")
}

/// One page of a list answer: its tasks, and the token of the next page when more follow.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TaskPage {
    pub(super) tasks: Vec<ReviewTask>,
    #[serde(default)]
    pub(super) next_token: Option<String>,
}

/// The page of a list answer.
pub(super) fn page_of(answer: Value) -> anyhow::Result<TaskPage> {
    serde_json::from_value(answer)
        .context("the review API's task list does not have the expected shape")
}

#[derive(Deserialize)]
struct TaskAnswer {
    task: ReviewTask,
}

/// The task of a show or decision answer.
pub(super) fn task_of(answer: Value) -> anyhow::Result<ReviewTask> {
    let TaskAnswer { task } = serde_json::from_value(answer)
        .context("the review API's task does not have the expected shape")?;
    Ok(task)
}

#[cfg(test)]
mod tests;
