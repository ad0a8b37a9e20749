//! Fault injection in the SDK clients, for tests and local runs only: compiled in only with the
//! `fault-injection` feature (else `faults/off.rs` stands in), and off unless configured.
//!
//! A [`Faults`] value holds [`Rule`]s; installed on a client's config builder
//! ([`InstallFaults`], or [`crate::with_faults`]) it adds an SDK interceptor and wraps the HTTP
//! client. Each **attempt** (one HTTP request; the SDK's own retries are attempts too) of an
//! operation is matched against the rules by service and operation name; every matching rule
//! counts it, and the first whose trigger fires is applied:
//!
//! - [`Action::FailBeforeSend`]: the request never leaves the process. The wrapped HTTP client
//!   answers it itself with a synthetic error response (status + the chosen error code, in the
//!   service's protocol), so the SDK parses a genuine `SdkError::ServiceError` with that code:
//!   `classify` sees the same code a real throttle or outage would give, and the SDK's retry
//!   strategy treats it as it would the real one (`ServiceUnavailable`, throttling codes and 5xx
//!   are retried up to the client's max attempts).
//! - [`Action::LoseResponse`] (the lost acknowledgement): the request is sent and the service
//!   commits it; then the answer is thrown away. With [`Surface::ResponseError`] (the default) the
//!   call fails with `SdkError::ResponseError` and the SDK does **not** retry it, so the caller
//!   sees the ambiguity; with [`Surface::Timeout`] it fails with `SdkError::TimeoutError`, which
//!   the SDK's standard retry strategy retries like a real read timeout (the caller then sees the
//!   retry's outcome, e.g. a conditional write refused because the first attempt landed); with
//!   [`Surface::DispatchFailure`] the wrapped HTTP client turns the answer into an I/O error, so
//!   the call fails with `SdkError::DispatchFailure` (a connection reset after sending), which
//!   the SDK retries the same way. In every case `errors::classify_effect` says `OutcomeUnknown`.
//!
//! Triggers: [`Trigger::Nth`] fires on exactly the n-th matching attempt (1-based, per rule);
//! [`Trigger::Probability`] draws from a seeded generator shared by all clones. Counters live
//! behind an `Arc`: clones of one `Faults` (and every client it is installed on) count together.
//!
//! JSON (`DOCKET_FAULTS`, read only when `DOCKET_FAULT_INJECTION=1`, see [`Faults::from_env`]):
//!
//! ```json
//! { "seed": 7, "rules": [
//!   { "service": "s3", "operation": "PutObject", "mode": "fail_before_send",
//!     "error_code": "SlowDown", "probability": 0.3 },
//!   { "service": "dynamodb", "operation": "TransactWriteItems", "mode": "lose_response", "nth": 2 }
//! ] }
//! ```
//!
//! Rule fields: `service` (`s3`, `dynamodb`, `textract`, `sfn`, … matched case-insensitively
//! against the SDK's service name), `operation` (the API name; absent or `*` = any), `mode`,
//! exactly one of `probability` / `nth`, and optionally `error_code` (fail_before_send; default
//! `ServiceUnavailable`), `status` (its HTTP status; default from the code), `surface`
//! (lose_response: `response_error` | `timeout` | `dispatch_failure`) and `limit` (at most this
//! many injections). A bare array of rules is accepted too.

mod interceptor;
mod rules;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use docket_core::Error;

pub use interceptor::{FaultHttpClient, FaultInterceptor, InstallFaults, LostResponse};
pub use rules::{Action, Rule, Surface, Trigger};

use interceptor::Armed;
use rules::normalize_service;

/// Enables fault injection when set to `1`.
pub const ENABLE_VAR: &str = "DOCKET_FAULT_INJECTION";
/// The JSON rules, read only when [`ENABLE_VAR`] is `1`.
pub const RULES_VAR: &str = "DOCKET_FAULTS";

#[derive(Debug, Default)]
struct Counter {
    seen: AtomicU64,
    injected: AtomicU64,
}

#[derive(Debug)]
struct Inner {
    rules: Vec<Rule>,
    counters: Vec<Counter>,
    rng: AtomicU64,
}

/// The line a function logs at init when it runs with fault injection: it is outside every step,
/// so it carries no document ids (the e2e privacy test knows it by this text).
pub const ENABLED_LINE: &str = "fault injection is ENABLED in the AWS SDK clients";

/// A set of fault rules with shared counters. `Faults::default()` (= [`Faults::none`]) injects
/// nothing and installs nothing.
#[derive(Debug, Clone)]
pub struct Faults {
    inner: Arc<Inner>,
}

impl Default for Faults {
    fn default() -> Self {
        Faults::none()
    }
}

/// Counts of one rule, for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleCount {
    /// The rule, described.
    pub rule: String,
    /// Matching attempts seen.
    pub seen: u64,
    /// Faults injected.
    pub injected: u64,
}

impl Faults {
    /// No rules: nothing is injected and nothing installed.
    pub fn none() -> Faults {
        Faults::new(Vec::new(), 0)
    }

    /// A builder, for tests.
    pub fn builder() -> FaultsBuilder {
        FaultsBuilder::default()
    }

    fn new(rules: Vec<Rule>, seed: u64) -> Faults {
        let counters = rules.iter().map(|_| Counter::default()).collect();
        Faults {
            inner: Arc::new(Inner {
                rules,
                counters,
                rng: AtomicU64::new(seed),
            }),
        }
    }

    /// Parses the JSON form (see the module docs). Without a `seed`, one is taken from the clock.
    pub fn from_json(json: &str) -> Result<Faults, Error> {
        let bad = |e: String| Error::Internal(format!("{RULES_VAR}: {e}"));
        let (seed, rules) = rules::parse(json).map_err(bad)?;
        FaultsBuilder { rules, seed }.try_build().map_err(bad)
    }

    /// The faults configured by the environment: `None` unless `DOCKET_FAULT_INJECTION=1`
    /// (then `DOCKET_FAULTS` is required and must parse; the rules are logged at warn level).
    pub fn from_env() -> Result<Option<Faults>, Error> {
        if std::env::var(ENABLE_VAR).as_deref() != Ok("1") {
            return Ok(None);
        }
        let json = std::env::var(RULES_VAR)
            .map_err(|_| Error::Internal(format!("{ENABLE_VAR}=1 but {RULES_VAR} is not set")))?;
        let faults = Faults::from_json(&json)?;
        let rules: Vec<String> = faults.rules().iter().map(Rule::to_string).collect();
        tracing::warn!(?rules, "{ENABLED_LINE}");
        Ok(Some(faults))
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.inner.rules.is_empty()
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.inner.rules
    }

    /// Faults injected so far, by every rule.
    pub fn injected(&self) -> u64 {
        self.inner
            .counters
            .iter()
            .map(|c| c.injected.load(Ordering::SeqCst))
            .sum()
    }

    /// Faults injected by rule `index`.
    pub fn injected_by(&self, index: usize) -> u64 {
        self.inner.counters[index].injected.load(Ordering::SeqCst)
    }

    /// Matching attempts rule `index` has seen.
    pub fn seen_by(&self, index: usize) -> u64 {
        self.inner.counters[index].seen.load(Ordering::SeqCst)
    }

    /// Every rule's counts.
    pub fn counts(&self) -> Vec<RuleCount> {
        self.inner
            .rules
            .iter()
            .zip(&self.inner.counters)
            .map(|(rule, c)| RuleCount {
                rule: rule.to_string(),
                seen: c.seen.load(Ordering::SeqCst),
                injected: c.injected.load(Ordering::SeqCst),
            })
            .collect()
    }

    /// The next uniform draw in [0, 1) (SplitMix64 over a shared counter: deterministic for a
    /// seed and a sequence of draws, lock-free across threads).
    fn draw(&self) -> f64 {
        const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut z = self
            .inner
            .rng
            .fetch_add(GAMMA, Ordering::SeqCst)
            .wrapping_add(GAMMA);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Counts an attempt of `service`/`operation` against every matching rule and returns the
    /// index of the first rule that fires, if any.
    fn decide(&self, service: &str, operation: &str) -> Option<usize> {
        let service = normalize_service(service);
        let mut chosen = None;
        for (i, rule) in self.inner.rules.iter().enumerate() {
            if !rule.matches(&service, operation) {
                continue;
            }
            let counter = &self.inner.counters[i];
            let n = counter.seen.fetch_add(1, Ordering::SeqCst) + 1;
            if chosen.is_some() {
                continue;
            }
            let under_limit = rule
                .limit
                .is_none_or(|l| counter.injected.load(Ordering::SeqCst) < l);
            let fires = match rule.trigger {
                Trigger::Nth(k) => n == k,
                Trigger::Probability(p) => p >= 1.0 || (p > 0.0 && self.draw() < p),
            };
            if fires && under_limit {
                chosen = Some(i);
            }
        }
        chosen
    }

    fn record(&self, armed: &Armed) {
        self.inner.counters[armed.rule]
            .injected
            .fetch_add(1, Ordering::SeqCst);
        tracing::warn!(
            service = %armed.service,
            operation = %armed.operation,
            rule = %self.inner.rules[armed.rule],
            "fault injected"
        );
    }
}

/// Builds [`Faults`].
#[derive(Debug, Default)]
pub struct FaultsBuilder {
    rules: Vec<Rule>,
    seed: Option<u64>,
}

impl FaultsBuilder {
    /// Adds a rule (rules are tried in the order added).
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Seeds the probability draws (default: from the clock).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Builds; panics on an invalid rule (tests).
    pub fn build(self) -> Faults {
        self.try_build().expect("valid fault rules")
    }

    fn try_build(self) -> Result<Faults, String> {
        for (i, rule) in self.rules.iter().enumerate() {
            rule.validate().map_err(|e| format!("rule {i}: {e}"))?;
        }
        let seed = self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        Ok(Faults::new(self.rules, seed))
    }
}

#[cfg(test)]
mod tests;
