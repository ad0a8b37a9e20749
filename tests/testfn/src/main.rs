//! A tiny Lambda for the local-AWS tests. The input JSON chooses what it does:
//!
//! - `{"echo": v}` returns `v`;
//! - `{"env": "NAME"}` returns `{"NAME": value-or-null}`;
//! - `{"sleep_ms": n}` sleeps n ms, then returns `{"slept_ms": n}`;
//! - `{"fail": {"errorType": "Docket.Example", "message": "..."}}` fails with exactly that
//!   Lambda error type (what Step Functions' Retry/Catch match on);
//! - `{"fail_times": {"key": k, "n": n}}` fails with `Docket.Transient` on the first n calls per
//!   key in this process (warm environments keep the count), then returns `{"attempt": i}`;
//! - `{"fail_unless_env": "NAME"}` fails with `Docket.Transient` while the function's environment
//!   has no non-empty NAME, else returns `{"NAME": value}` (a flag a test flips with
//!   UpdateFunctionConfiguration, which survives new execution environments);
//! - `{"exit": code}` ends the process mid-invocation (a crashing runtime).
//!
//! Every invocation prints one line with its request id and input (for the CloudWatch Logs check).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use lambda_runtime::{service_fn, Diagnostic, LambdaEvent};
use serde_json::{json, Value};

/// An error whose Lambda `errorType` is chosen by the input.
#[derive(Debug)]
struct Failure {
    error_type: String,
    message: String,
}

impl From<Failure> for Diagnostic {
    fn from(f: Failure) -> Diagnostic {
        Diagnostic {
            error_type: f.error_type,
            error_message: f.message,
        }
    }
}

static CALLS: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);

async fn handle(event: LambdaEvent<Value>) -> Result<Value, Failure> {
    let input = event.payload;
    println!(
        "docket-testfn request_id={} input={input}",
        event.context.request_id
    );
    if let Some(v) = input.get("echo") {
        return Ok(v.clone());
    }
    if let Some(name) = input.get("env").and_then(Value::as_str) {
        return Ok(json!({ name: std::env::var(name).ok() }));
    }
    if let Some(ms) = input.get("sleep_ms").and_then(Value::as_u64) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        return Ok(json!({ "slept_ms": ms }));
    }
    if let Some(code) = input.get("exit").and_then(Value::as_i64) {
        std::process::exit(code as i32);
    }
    if let Some(f) = input.get("fail") {
        let text = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or_default();
        return Err(Failure {
            error_type: text("errorType").to_string(),
            message: text("message").to_string(),
        });
    }
    if let Some(name) = input.get("fail_unless_env").and_then(Value::as_str) {
        return match std::env::var(name) {
            Ok(value) if !value.is_empty() => Ok(json!({ name: value })),
            _ => Err(Failure {
                error_type: "Docket.Transient".to_string(),
                message: format!("{name} is not set: failing on purpose"),
            }),
        };
    }
    if let Some(spec) = input.get("fail_times") {
        let key = spec.get("key").and_then(Value::as_str).unwrap_or_default();
        let n = spec.get("n").and_then(Value::as_u64).unwrap_or(0);
        let attempt = {
            let mut calls = CALLS.lock().unwrap();
            let count = calls
                .get_or_insert_with(HashMap::new)
                .entry(key.to_string());
            let count = count.or_insert(0);
            *count += 1;
            *count
        };
        if attempt <= n {
            return Err(Failure {
                error_type: "Docket.Transient".to_string(),
                message: format!("attempt {attempt} of key {key} fails on purpose"),
            });
        }
        return Ok(json!({ "attempt": attempt }));
    }
    Ok(json!({ "unknown_input": input }))
}

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda_runtime::run(service_fn(handle)).await
}
