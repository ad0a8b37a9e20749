//! The soak's faults: switched on behind a guard that switches them off again also when the test
//! panics, and the evidence that each one fired (LocalStack's log for the Chaos-API rules, the
//! functions' "fault injected" lines for the SDK rules). A rule that never fired tested nothing.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use docket_e2e::stack::Stack;
use docket_e2e::util;
use reqwest::Method;
use serde_json::Value;

use crate::pinned::{publish_faulty, restore, Rerouted};

const FUNCTIONS: &[&str] = &[
    "IngestFunctionName",
    "OcrFunctionName",
    "ValidateFunctionName",
    "RouteFunctionName",
];

/// Chaos-API rules and SDK fault rules that are on while this lives. Dropping it (a panic
/// included) switches them off on a runtime and thread of its own, as `docket_e2e::resource`
/// deletes what a test made; [`FaultsOn::off`] does so explicitly.
pub struct FaultsOn {
    chaos: Value,
    functions: Vec<String>,
    /// The alias's routing to versions published with the SDK faults (when there are some).
    rerouted: Option<Rerouted>,
    live: bool,
    /// When the faults went on (ms since the epoch) and the LocalStack log's length then.
    since_ms: i64,
    log_from: u64,
}

impl FaultsOn {
    /// Switches `sdk` (the functions' `DOCKET_FAULTS`, if any) and then `chaos` on.
    pub async fn on(stack: &Stack, chaos: Value, sdk: Option<&Value>) -> FaultsOn {
        let functions = match sdk {
            Some(_) => FUNCTIONS.iter().map(|o| stack.out(o).to_string()).collect(),
            None => Vec::new(),
        };
        let since_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let log_from = std::fs::metadata(localstack_log())
            .map(|m| m.len())
            .unwrap_or(0);
        let mut guard = FaultsOn {
            chaos,
            functions,
            rerouted: None,
            live: true,
            since_ms,
            log_from,
        };
        let lambda = &stack.lambda;
        for name in &guard.functions {
            function_faults(lambda, name, sdk).await;
        }
        if sdk.is_some() {
            guard.rerouted = Some(publish_faulty(stack, &guard.functions).await);
        }
        util::chaos(Method::PATCH, "faults", &guard.chaos).await;
        guard
    }

    /// Switches the faults off now.
    pub async fn off(mut self) {
        self.live = false;
        switch_off(&self.chaos, &self.functions, self.rerouted.as_ref()).await;
    }

    /// How many requests each Chaos-API rule failed, from LocalStack's log since [`FaultsOn::on`]
    /// (`chaos: failing <service>.<operation> in <region> with <code>`), keyed `service code`.
    pub fn chaos_fired(&self) -> BTreeMap<String, usize> {
        let log = std::fs::read(localstack_log()).expect("read the LocalStack log");
        let text = String::from_utf8_lossy(&log[(self.log_from as usize).min(log.len())..]);
        let mut fired = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.split("chaos: failing ").nth(1) else {
                continue;
            };
            let service = rest.split('.').next().unwrap_or_default();
            let code = rest.rsplit(" with ").next().unwrap_or_default();
            *fired.entry(format!("{service} {code}")).or_default() += 1;
        }
        fired
    }

    /// How many faults each SDK rule injected in the functions since [`FaultsOn::on`], from
    /// their "fault injected" log lines, keyed by the rule as the line names it
    /// (`<service> <operation>: ...`).
    pub async fn sdk_fired(&self, stack: &Stack) -> BTreeMap<String, usize> {
        let mut fired = BTreeMap::new();
        for name in &self.functions {
            for line in stack
                .log_messages(&format!("/aws/lambda/{name}"), Some(self.since_ms))
                .await
            {
                let Some(json) = line.find('{').map(|i| &line[i..]) else {
                    continue;
                };
                let Ok(entry) = serde_json::from_str::<Value>(json) else {
                    continue;
                };
                if entry["fields"]["message"] == "fault injected" {
                    let rule = entry["fields"]["rule"].as_str().unwrap_or("?").to_string();
                    *fired.entry(rule).or_default() += 1;
                }
            }
        }
        fired
    }
}

impl Drop for FaultsOn {
    fn drop(&mut self) {
        if !self.live {
            return;
        }
        let off = util::block_on_aside(switch_off(
            &self.chaos,
            &self.functions,
            self.rerouted.as_ref(),
        ));
        if off.is_err() {
            eprintln!(
                "cleanup: switching the faults off panicked; check /_localstack/chaos/faults"
            );
        }
    }
}

/// Asserts that every rule fired at least once: `fired` keys start with one of `rules`.
pub fn assert_each_fired(kind: &str, rules: &[String], fired: &BTreeMap<String, usize>) {
    let silent: Vec<&String> = rules
        .iter()
        .filter(|r| {
            !fired
                .iter()
                .any(|(k, n)| k.starts_with(r.as_str()) && *n > 0)
        })
        .collect();
    assert!(
        silent.is_empty(),
        "{kind} rules that never fired: {silent:?} (fired: {fired:?})"
    );
}

/// LocalStack's log: `$DOCKET_LOCAL_DIR/localstack.log` (as `scripts/localstack.sh` writes it).
fn localstack_log() -> std::path::PathBuf {
    let dir = std::env::var("DOCKET_LOCAL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| util::workspace_root().join(".localstack"));
    dir.join("localstack.log")
}

async fn switch_off(chaos: &Value, functions: &[String], rerouted: Option<&Rerouted>) {
    util::chaos(Method::DELETE, "faults", chaos).await;
    let sdk = util::aws().await;
    if let Some(rerouted) = rerouted {
        restore(aws_sdk_sfn::Client::new(&sdk), rerouted).await;
    }
    let lambda = aws_sdk_lambda::Client::new(&sdk);
    for name in functions {
        function_faults(&lambda, name, None).await;
    }
}

/// Sets (or, with `None`, removes) the SDK fault rules of one function.
async fn function_faults(lambda: &aws_sdk_lambda::Client, name: &str, rules: Option<&Value>) {
    let config = lambda
        .get_function_configuration()
        .function_name(name)
        .send()
        .await
        .unwrap();
    let mut vars: std::collections::HashMap<String, String> = config
        .environment()
        .and_then(|e| e.variables())
        .cloned()
        .unwrap_or_default();
    match rules {
        Some(r) => {
            vars.insert("DOCKET_FAULT_INJECTION".into(), "1".into());
            vars.insert("DOCKET_FAULTS".into(), r.to_string());
        }
        None => {
            vars.remove("DOCKET_FAULT_INJECTION");
            vars.remove("DOCKET_FAULTS");
        }
    }
    lambda
        .update_function_configuration()
        .function_name(name)
        .environment(
            aws_sdk_lambda::types::Environment::builder()
                .set_variables(Some(vars))
                .build(),
        )
        .send()
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let c = lambda
            .get_function_configuration()
            .function_name(name)
            .send()
            .await
            .unwrap();
        if c.last_update_status().map(|s| s.as_str()) != Some("InProgress") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{name}: update still in progress"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
