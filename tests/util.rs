//! What every test binary needs: SDK configuration for LocalStack, unique names, the Chaos API,
//! and the workspace's paths and builds.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::Value;

/// Runs `future` to completion on a runtime of its own, on a thread of its own, and waits for
/// it: how a `Drop` (which cannot await, and may run inside a runtime that must not block) undoes
/// what a test guard set up. `Err` if the future panicked.
pub fn block_on_aside<F>(future: F) -> std::thread::Result<F::Output>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime")
                    .block_on(future)
            })
            .join()
    })
}

/// The LocalStack endpoint the tests talk to (`AWS_ENDPOINT_URL`, default 127.0.0.1:4566).
pub fn endpoint() -> String {
    std::env::var("AWS_ENDPOINT_URL").unwrap_or_else(|_| "http://127.0.0.1:4566".to_string())
}

/// SDK config for LocalStack in the default test region (us-east-1).
pub async fn aws() -> SdkConfig {
    aws_in("us-east-1").await
}

/// SDK config for LocalStack in `region`. Tests that inject faults use their own region so that
/// region-scoped chaos rules cannot disturb tests running at the same time.
pub async fn aws_in(region: &str) -> SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(endpoint())
        .region(Region::new(region.to_string()))
        .credentials_provider(aws_sdk_s3::config::Credentials::new(
            "test",
            "test",
            None,
            None,
            "localstack",
        ))
        .load()
        .await
}

/// S3 client with path-style addressing (LocalStack serves buckets on the path).
pub fn s3(config: &SdkConfig) -> aws_sdk_s3::Client {
    let conf = aws_sdk_s3::config::Builder::from(config)
        .force_path_style(true)
        .build();
    aws_sdk_s3::Client::from_conf(conf)
}

/// Sends `body` to LocalStack's Chaos API (`/_localstack/chaos/<path>`, e.g. `faults` to add,
/// remove or set fault rules); panics unless it answers with success.
pub async fn chaos(method: reqwest::Method, path: &str, body: &Value) -> reqwest::Response {
    let response = reqwest::Client::new()
        .request(method, format!("{}/_localstack/chaos/{path}", endpoint()))
        .json(body)
        .send()
        .await
        .expect("chaos endpoint reachable");
    assert!(response.status().is_success(), "{:?}", response.status());
    response
}

/// Our local Textract's quotas and what it saw per region (`/_docket/textract/quotas`): GET
/// with `Value::Null`, POST a change such as `{"region": r, "tps": {op: n}, "maxJobs": n}`.
pub async fn textract_quotas(method: reqwest::Method, body: &Value) -> Value {
    textract_settings("quotas", method, body).await
}

/// Our local Textract's scale settings (`/_docket/textract/scale`): GET with `Value::Null`, POST
/// a change such as `{"cache": true, "secondsPerPage": 2.0}` (`null` seconds: jobs last as long
/// as their OCR), DELETE to reset the cache's counters.
pub async fn textract_scale(method: reqwest::Method, body: &Value) -> Value {
    textract_settings("scale", method, body).await
}

/// How long LocalStack's process stood still for its garbage collector (`/_docket/gc`): GET
/// with `Value::Null`, DELETE to reset.
pub async fn localstack_gc(method: reqwest::Method) -> Value {
    docket_settings("gc", method, &Value::Null).await
}

/// One of our local Textract's settings endpoints, `/_docket/textract/<name>`.
async fn textract_settings(name: &str, method: reqwest::Method, body: &Value) -> Value {
    docket_settings(&format!("textract/{name}"), method, body).await
}

/// One of our extension's settings endpoints, `/_docket/<name>`.
async fn docket_settings(name: &str, method: reqwest::Method, body: &Value) -> Value {
    let url = format!("{}/_docket/{name}", endpoint());
    let mut request = reqwest::Client::new().request(method, url);
    if !body.is_null() {
        request = request.json(body);
    }
    let response = request.send().await.expect("settings endpoint reachable");
    assert!(
        response.status().is_success(),
        "{name}: {:?}",
        response.status()
    );
    response
        .json()
        .await
        .expect("settings endpoint answers JSON")
}

/// The requests LocalStack served with this `service`, `operation` and (hashed) `subject`, from
/// our extension's wire log (`/_docket/requests`): what really crossed the wire, retries and
/// failed attempts included. The subject of a Step Functions callback is the SHA-256 of its task
/// token (`docket_core::ids::sha256_hex`).
pub async fn wire_requests(service: &str, operation: &str, subject: &str) -> Vec<Value> {
    let response = reqwest::Client::new()
        .get(format!("{}/_docket/requests", endpoint()))
        .query(&[
            ("service", service),
            ("operation", operation),
            ("subject", subject),
        ])
        .send()
        .await
        .expect("wire log reachable");
    assert!(response.status().is_success(), "{:?}", response.status());
    let body: Value = response.json().await.expect("wire log answers JSON");
    body["requests"].as_array().cloned().unwrap_or_default()
}

/// The item of `table` whose string key `key` is `value` (a consistent read).
pub async fn get_item(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    key: &str,
    value: &str,
) -> Option<HashMap<String, AttributeValue>> {
    client
        .get_item()
        .table_name(table)
        .key(key, AttributeValue::S(value.to_string()))
        .consistent_read(true)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GetItem {table} {key}={value}: {e:?}"))
        .item
}

/// A name no other test (or earlier run against the same LocalStack) uses.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{prefix}-{:x}-{}",
        nanos % 0xffff_ffff,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A directory of the system's temporary directory that only this test writes, removed with
/// what it holds when dropped (a test that fails leaves nothing behind either).
pub struct Scratch(std::path::PathBuf);

impl Scratch {
    /// A new, empty directory named from `prefix` ([`unique`]).
    pub fn new(prefix: &str) -> Scratch {
        let dir = std::env::temp_dir().join(unique(prefix));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }

    /// The path of `name` in it.
    pub fn join(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `cargo build` of binary `bin` as the scripts build it, run from inside a test.
///
/// `--workspace`: the same feature unification as the scripts' builds, so the binary is the one
/// they make (and is not rebuilt with another feature set). Without the variables cargo sets for
/// the test binary itself (its package's name, manifest dir, version, …): a build script's
/// `rerun-if-env-changed` compares them with the cargo process's own environment (ring's names
/// `CARGO_MANIFEST_DIR` and `CARGO_PKG_NAME`), so a nested cargo that inherits them rebuilds ring
/// and everything above it (rustls, the SDK crates: minutes), and the next build from the shell
/// rebuilds them back.
fn cargo_build_command(bin: &str) -> std::process::Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = std::process::Command::new(cargo);
    command
        .args(["build", "--workspace", "--bin", bin])
        .arg("--message-format=json-render-diagnostics")
        .current_dir(workspace_root());
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(set_by_cargo_for_the_test) {
            command.env_remove(name);
        }
    }
    command
}

/// Whether cargo sets variable `name` for the crate it runs (here: the test binary), as
/// opposed to configuring cargo itself (`CARGO_HOME`, `CARGO_TARGET_DIR`, `CARGO_TERM_*`, …).
fn set_by_cargo_for_the_test(name: &str) -> bool {
    const PREFIXES: [&str; 5] = [
        "CARGO_PKG_",
        "CARGO_MANIFEST_",
        "CARGO_BIN_",
        "CARGO_CRATE_",
        "CARGO_CFG_",
    ];
    const NAMES: [&str; 4] = [
        "OUT_DIR",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name)
}

/// The workspace root (tests run with the package dir `tests/` as cwd).
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Builds the workspace's binary `bin` (honouring CARGO_TARGET_DIR) and returns its path.
pub fn cargo_build(bin: &str) -> std::path::PathBuf {
    let out = cargo_build_command(bin)
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("cargo build --workspace --bin {bin}: {e}"));
    assert!(
        out.status.success(),
        "cargo build --workspace --bin {bin} failed"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == bin)
        .find_map(|m| m["executable"].as_str().map(Into::into))
        .unwrap_or_else(|| panic!("cargo reported no {bin} executable"))
}

/// The `p`-th quantile (0 to 1) of `sorted`, at the nearest index; 0 for none.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(at).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod cargo_build_tests {
    use super::*;

    #[test]
    fn a_nested_build_has_none_of_the_variables_cargo_set_for_the_test() {
        // (this test runs under cargo, which set them)
        for set in [
            "CARGO_MANIFEST_DIR",
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
        ] {
            assert!(std::env::var_os(set).is_some(), "{set} is set for the test");
        }
        let command = cargo_build_command("docket");
        let removed: Vec<String> = command
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        for set in [
            "CARGO_MANIFEST_DIR",
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
        ] {
            assert!(removed.iter().any(|r| r == set), "{set}: {removed:?}");
        }
        // cargo's own configuration is kept
        for kept in [
            "CARGO_TARGET_DIR",
            "CARGO_HOME",
            "CARGO_TERM_COLOR",
            "CARGO",
        ] {
            assert!(!set_by_cargo_for_the_test(kept), "{kept}");
        }
    }
}
