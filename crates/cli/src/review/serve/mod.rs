//! `docket review serve`: the review page on this machine, the way `kubectl proxy` serves a
//! cluster's API. A loopback HTTP server serves the page's files (built into the binary, see
//! [`assets`]) and proxies the page's `/api/…` calls to the review API, each one signed with the
//! reviewer's own credentials (the same [`Api`] client the other `review` commands use). So no
//! login and no new credential: who the reviewer is and which tenant they act for is still what
//! the review API reads off the signature.
//!
//! What keeps other programs and sites from using the server as the reviewer's signer:
//! it listens on 127.0.0.1 only; it proxies the reviewer's routes and nothing else
//! ([`routes::Route`]); and it answers only requests from its own page
//! ([`routes::from_the_page`]). The document is served with the type its bytes show
//! (never the type stored with the upload, which the uploader chose) and in a sandbox, so that
//! a hostile upload cannot run script in the page's origin.

mod assets;
mod routes;

use std::convert::Infallible;
use std::net::Ipv4Addr;
use std::sync::Arc;

use anyhow::Context;
use docket_core::doctype::sniff;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use reqwest::Url;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpListener;

use super::api::{api_url, Api};
use crate::stack::print;
use crate::Output;
use routes::{Route, MAX_BODY_BYTES};

/// What the page's own files may load and run: only this server's files, pdf.js's worker,
/// the canvases and images it draws (`blob:`/`data:`), and calls to this server.
const PAGE_POLICY: &str = "default-src 'self'; img-src 'self' blob: data:; font-src 'self' data:; \
     worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The document as served: nothing in it may run (`sandbox`) or load anything.
const DOCUMENT_POLICY: &str = "sandbox; default-src 'none'";

/// Serves the page on 127.0.0.1:`port` (0: any free port) until stopped; with `open`, opens
/// it in the desktop's browser.
pub(super) async fn run(api: Api, port: u16, open: bool, output: Output) -> anyhow::Result<()> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .await
        .with_context(|| format!("listening on 127.0.0.1:{port}"))?;
    let port = listener.local_addr()?.port();
    let url = format!("http://127.0.0.1:{port}/");
    let listening = json!({
        "url": url,
        "reviewApi": api.base.as_str(),
        "assetBytes": assets::total_bytes(),
    });
    print(output, &listening, || {
        format!(
            "The review page: {url}\n(signing as you for {}; Ctrl-C stops it)",
            api.base
        )
    });
    if open {
        open_in_browser(&url);
    }
    let server = Arc::new(Server { api, port });
    loop {
        let (stream, _) = listener.accept().await.context("accepting a connection")?;
        let server = Arc::clone(&server);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let server = Arc::clone(&server);
                async move { Ok::<_, Infallible>(server.answer(request).await) }
            });
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(e) = connection.await {
                eprintln!("review serve: a connection ended with an error: {e}");
            }
        });
    }
}

/// Opens `url` with the desktop's opener; says so when there is none.
fn open_in_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if std::process::Command::new(opener).arg(url).spawn().is_err() {
        eprintln!("review serve: could not run {opener}; open {url} yourself");
    }
}

struct Server {
    api: Api,
    port: u16,
}

type Answer = Response<Full<Bytes>>;

impl Server {
    async fn answer(&self, request: Request<Incoming>) -> Answer {
        let header = |name: header::HeaderName| {
            request
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let site = request
            .headers()
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok());
        if let Err(foreign) = routes::from_the_page(
            self.port,
            header(header::HOST).as_deref(),
            header(header::ORIGIN).as_deref(),
            site,
        ) {
            return json_answer(
                403,
                &json!({"error": "Forbidden", "message": foreign.message()}),
            );
        }
        let path = request.uri().path().to_string();
        if !path.starts_with("/api/") {
            return page_file(request.method(), &path);
        }
        let query = query_pairs(request.uri());
        let Some(route) = Route::of(request.method().as_str(), &path, &query) else {
            return json_answer(
                404,
                &json!({"error": "NotFound", "message": "no such route"}),
            );
        };
        let body = match Limited::new(request.into_body(), MAX_BODY_BYTES)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes().to_vec(),
            Err(_) => {
                let message = format!("the body is larger than {MAX_BODY_BYTES} bytes");
                return json_answer(413, &json!({"error": "Fatal.BadInput", "message": message}));
            }
        };
        match self.proxy(&route, body).await {
            Ok(answer) => answer,
            Err(e) => json_answer(
                502,
                &json!({"error": "Unavailable", "message": format!("{e:#}")}),
            ),
        }
    }

    /// Sends `route` to the review API, signed, and answers what it answered; a document's
    /// presigned URL is followed here, so the page never holds it.
    async fn proxy(&self, route: &Route, body: Vec<u8>) -> anyhow::Result<Answer> {
        let (method, path) = route.api();
        let url = api_url(&self.api.base, &path, route.query())?;
        let (status, answer) = self.api.send(method, url, body).await?;
        if !matches!(route, Route::Document(_)) || status != 200 {
            return Ok(raw_json_answer(status, answer));
        }
        #[derive(Deserialize)]
        struct Presigned {
            url: String,
        }
        let Presigned { url } = serde_json::from_slice(&answer)
            .context("the review API's document answer has no URL")?;
        let bytes = self.api.fetch_presigned(&url).await?;
        Ok(document_answer(bytes))
    }
}

/// The query of `uri` as decoded pairs.
fn query_pairs(uri: &hyper::Uri) -> Vec<(String, String)> {
    let Ok(url) = Url::parse(&format!("http://page{uri}")) else {
        return Vec::new();
    };
    url.query_pairs().into_owned().collect()
}

/// One of the page's files, or 404.
fn page_file(method: &Method, path: &str) -> Answer {
    let asset = assets::find(path).filter(|_| method == Method::GET || method == Method::HEAD);
    let Some(asset) = asset else {
        return answer(404, "text/plain; charset=utf-8", b"not found\n".to_vec());
    };
    let mut response = answer(200, asset.content_type, asset.bytes.to_vec());
    set(&mut response, header::CONTENT_SECURITY_POLICY, PAGE_POLICY);
    response
}

/// The raw document, typed by what its bytes are.
fn document_answer(bytes: Vec<u8>) -> Answer {
    let content_type = sniff(&bytes).unwrap_or("application/octet-stream");
    let mut response = answer(200, content_type, bytes);
    set(
        &mut response,
        header::CONTENT_SECURITY_POLICY,
        DOCUMENT_POLICY,
    );
    set(&mut response, header::CONTENT_DISPOSITION, "inline");
    response
}

/// The review API's answer as is (it is JSON, errors included).
fn raw_json_answer(status: u16, body: Vec<u8>) -> Answer {
    answer(status, "application/json", body)
}

fn json_answer(status: u16, body: &Value) -> Answer {
    answer(status, "application/json", body.to_string().into_bytes())
}

/// An answer with the headers every answer has: its type, `nosniff`, no caching (a task's
/// state changes; a document is the tenant's), no referrer.
fn answer(status: u16, content_type: &'static str, body: Vec<u8>) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    set(&mut response, header::CONTENT_TYPE, content_type);
    set(&mut response, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(&mut response, header::CACHE_CONTROL, "no-store");
    set(&mut response, header::REFERRER_POLICY, "no-referrer");
    response
}

fn set(response: &mut Answer, name: header::HeaderName, value: &'static str) {
    response
        .headers_mut()
        .insert(name, HeaderValue::from_static(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_is_typed_by_its_bytes_and_sandboxed() {
        let pdf = document_answer(b"%PDF-1.7\n...".to_vec());
        assert_eq!(pdf.headers()[header::CONTENT_TYPE], "application/pdf");
        // An upload that says it is HTML is only bytes here: never run in the page's origin.
        let html = document_answer(b"<html><script>fetch('/api/me')</script>".to_vec());
        assert_eq!(
            html.headers()[header::CONTENT_TYPE],
            "application/octet-stream"
        );
        assert_eq!(
            html.headers()[header::CONTENT_SECURITY_POLICY],
            DOCUMENT_POLICY
        );
        assert_eq!(html.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }

    #[test]
    fn the_page_is_served_with_its_policy_and_unknown_paths_are_not_found() {
        let page = page_file(&Method::GET, "/");
        assert_eq!(page.status(), 200);
        assert_eq!(page.headers()[header::CONTENT_SECURITY_POLICY], PAGE_POLICY);
        assert_eq!(page_file(&Method::GET, "/etc/passwd").status(), 404);
        assert_eq!(page_file(&Method::POST, "/").status(), 404);
    }

    #[test]
    fn the_query_is_decoded() {
        let uri: hyper::Uri = "/api/tasks?status=pending&nextToken=a%2Bb".parse().unwrap();
        assert_eq!(
            query_pairs(&uri),
            [
                ("status".to_string(), "pending".to_string()),
                ("nextToken".to_string(), "a+b".to_string())
            ]
        );
    }
}
