//! Local Lambda latency (not a timed test; `make bench-local` runs it against a running
//! LocalStack): cold start (first invoke after CreateFunction, and after
//! UpdateFunctionConfiguration, which makes LocalStack start new environments) and warm invoke
//! round trip. Targets: < 100 ms cold, < 20 ms warm.
//!
//! "init" is the executor's own spawn -> first `next` time, read from the REPORT line's
//! `Init Duration` (LogType=Tail); "round trip" is what the SDK client sees.

use std::time::{Duration, Instant};

use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::LogType;
use docket_e2e::function::Function;
use docket_e2e::util::{self, percentile};

const WARM_INVOKES: usize = 200;
const COLD_STARTS: usize = 10;

/// One invoke with the log tail: (round trip, Init Duration from REPORT if this was a cold start).
async fn timed_invoke(f: &Function) -> (Duration, Option<f64>) {
    let started = Instant::now();
    let out = f
        .client
        .invoke()
        .function_name(&f.name)
        .log_type(LogType::Tail)
        .payload(Blob::new(r#"{"echo": 1}"#))
        .send()
        .await
        .expect("invoke");
    let took = started.elapsed();
    assert!(out.function_error().is_none(), "invoke failed: {out:?}");
    let tail = aws_smithy_types::base64::decode(out.log_result().unwrap_or_default())
        .expect("the log tail is base64");
    let init = String::from_utf8_lossy(&tail)
        .lines()
        .filter(|l| l.starts_with("REPORT"))
        .flat_map(|l| l.split('\t'))
        .find_map(|field| field.strip_prefix("Init Duration: "))
        .and_then(|v| v.trim_end_matches(" ms").parse().ok());
    (took, init)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn summary(name: &str, mut values: Vec<f64>, target_ms: f64) {
    values.sort_by(|a, b| a.total_cmp(b));
    let median = percentile(&values, 0.5);
    println!(
        "{name:<34} n={:<4} median={median:>7.2} ms  p95={:>7.2} ms  min={:>7.2} ms  max={:>7.2} ms  target<{target_ms} ms: {}",
        values.len(),
        percentile(&values, 0.95),
        values[0],
        values[values.len() - 1],
        if median < target_ms { "met" } else { "MISSED" },
    );
}

#[tokio::main]
async fn main() {
    let config = util::aws().await;
    let f = Function::deploy(&config, 10, &[("DOCKET_BENCH", "0")]).await;

    let mut cold_round_trip = Vec::new();
    let mut cold_init = Vec::new();
    for i in 0..=COLD_STARTS {
        if i > 0 {
            // New configuration: LocalStack drops the old environments and starts new ones.
            f.set_env(&[("DOCKET_BENCH", &i.to_string())]).await;
        }
        let (took, init) = timed_invoke(&f).await;
        cold_round_trip.push(ms(took));
        cold_init.extend(init);
    }

    let mut warm = Vec::new();
    for _ in 0..WARM_INVOKES {
        let (took, init) = timed_invoke(&f).await;
        assert!(init.is_none(), "a warm invoke re-initialised the runtime");
        warm.push(ms(took));
    }

    // Baseline: a Lambda API call that runs no function (LocalStack gateway + SDK signing).
    let mut baseline = Vec::new();
    for _ in 0..WARM_INVOKES {
        let started = Instant::now();
        f.client
            .get_function_configuration()
            .function_name(&f.name)
            .send()
            .await
            .expect("get function configuration");
        baseline.push(ms(started.elapsed()));
    }

    println!(
        "local Lambda (docket-process executor), function {}",
        f.name
    );
    summary("cold start: invoke round trip", cold_round_trip, 100.0);
    if !cold_init.is_empty() {
        summary("cold start: spawn -> first next", cold_init, 100.0);
    }
    summary("warm invoke round trip", warm, 20.0);
    summary("baseline: GetFunctionConfiguration", baseline, 20.0);
    f.delete().await;
}
