//! Fault injection in the SDK clients, for tests and local runs only: off unless configured.
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
//!   retry's outcome, e.g. a conditional write refused because the first attempt landed).
//!   Either way `errors::classify_effect` says `OutcomeUnknown`.
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
//! (lose_response: `response_error` | `timeout`) and `limit` (at most this many injections).
//! A bare array of rules is accepted too.

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::interceptors::context::{
    AfterDeserializationInterceptorContextRef, BeforeTransmitInterceptorContextMut,
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextMut,
};
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::orchestrator::{
    HttpRequest, HttpResponse, Metadata, OrchestratorError,
};
use aws_smithy_runtime_api::client::runtime_components::{
    RuntimeComponents, RuntimeComponentsBuilder,
};
use aws_smithy_runtime_api::client::runtime_plugin::RuntimePlugin;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};
use docket_core::Error;
use serde::Deserialize;

/// Enables fault injection when set to `1`.
pub const ENABLE_VAR: &str = "DOCKET_FAULT_INJECTION";
/// The JSON rules, read only when [`ENABLE_VAR`] is `1`.
pub const RULES_VAR: &str = "DOCKET_FAULTS";

/// What a rule does to a matching attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Answer locally with an error response; nothing is sent.
    FailBeforeSend {
        /// The service error code (e.g. `ServiceUnavailable`, `ThrottlingException`).
        error_code: String,
        /// The HTTP status of the synthetic response.
        status: u16,
    },
    /// Send the request, let the service commit it, then drop the answer.
    LoseResponse {
        /// How the loss reaches the caller.
        surface: Surface,
    },
}

/// How a lost response surfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// `SdkError::ResponseError`; not retried by the SDK.
    #[default]
    ResponseError,
    /// `SdkError::TimeoutError`; retried by the SDK's standard retry strategy.
    Timeout,
}

/// When a rule fires.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trigger {
    /// On each matching attempt with this probability (0..=1).
    Probability(f64),
    /// On exactly the n-th matching attempt (1-based).
    Nth(u64),
}

/// One fault rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Service, lowercase (`s3`, `dynamodb`, `textract`, `sfn`).
    pub service: String,
    /// Operation name (`PutObject`); `None` matches every operation of the service.
    pub operation: Option<String>,
    /// What to do.
    pub action: Action,
    /// When.
    pub trigger: Trigger,
    /// At most this many injections by this rule.
    pub limit: Option<u64>,
}

impl Rule {
    /// Fail `operation` of `service` before sending, answering `error_code`; fires on every
    /// attempt until a trigger is set ([`Rule::nth`], [`Rule::probability`]).
    pub fn fail_before_send(service: &str, operation: &str, error_code: &str) -> Rule {
        Rule::new(
            service,
            operation,
            Action::FailBeforeSend {
                error_code: error_code.to_string(),
                status: default_status(error_code),
            },
        )
    }

    /// Lose the response of `operation` of `service` (as [`Surface::ResponseError`]); fires on
    /// every attempt until a trigger is set.
    pub fn lose_response(service: &str, operation: &str) -> Rule {
        Rule::new(
            service,
            operation,
            Action::LoseResponse {
                surface: Surface::ResponseError,
            },
        )
    }

    fn new(service: &str, operation: &str, action: Action) -> Rule {
        Rule {
            service: normalize_service(service),
            operation: match operation {
                "" | "*" => None,
                op => Some(op.to_string()),
            },
            action,
            trigger: Trigger::Probability(1.0),
            limit: None,
        }
    }

    /// Fire on exactly the n-th matching attempt (1-based).
    pub fn nth(mut self, n: u64) -> Rule {
        self.trigger = Trigger::Nth(n);
        self
    }

    /// Fire with probability `p` on each matching attempt.
    pub fn probability(mut self, p: f64) -> Rule {
        self.trigger = Trigger::Probability(p);
        self
    }

    /// Inject at most `n` times.
    pub fn limit(mut self, n: u64) -> Rule {
        self.limit = Some(n);
        self
    }

    /// For a lost response: how it surfaces.
    pub fn surface(mut self, surface: Surface) -> Rule {
        if let Action::LoseResponse { surface: s } = &mut self.action {
            *s = surface;
        }
        self
    }

    /// For a failure before sending: the HTTP status of the synthetic answer.
    pub fn status(mut self, status: u16) -> Rule {
        if let Action::FailBeforeSend { status: s, .. } = &mut self.action {
            *s = status;
        }
        self
    }

    fn validate(&self) -> Result<(), String> {
        if self.service.is_empty() {
            return Err("rule without a service".into());
        }
        match self.trigger {
            Trigger::Probability(p) if !(0.0..=1.0).contains(&p) => {
                return Err(format!("probability {p} is not within 0..=1"))
            }
            Trigger::Nth(0) => return Err("nth is 1-based; 0 never fires".into()),
            _ => {}
        }
        if let Action::FailBeforeSend { error_code, status } = &self.action {
            if error_code.is_empty() || !(400..=599).contains(status) {
                return Err(format!(
                    "fail_before_send needs an error code and a 4xx/5xx status, got {error_code:?} {status}"
                ));
            }
        }
        Ok(())
    }

    fn matches(&self, service: &str, operation: &str) -> bool {
        self.service == service && self.operation.as_deref().is_none_or(|op| op == operation)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = self.operation.as_deref().unwrap_or("*");
        match &self.action {
            Action::FailBeforeSend { error_code, status } => write!(
                f,
                "{} {op}: fail_before_send {error_code} ({status})",
                self.service
            )?,
            Action::LoseResponse { surface } => {
                write!(f, "{} {op}: lose_response as {surface:?}", self.service)?
            }
        }
        match self.trigger {
            Trigger::Probability(p) => write!(f, ", probability {p}")?,
            Trigger::Nth(n) => write!(f, ", call {n}")?,
        }
        match self.limit {
            Some(l) => write!(f, ", at most {l}"),
            None => Ok(()),
        }
    }
}

/// `S3` → `s3`, `SFN`/`step-functions` → `sfn`, `DynamoDB` → `dynamodb`.
fn normalize_service(s: &str) -> String {
    let s: String = s
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    match s.as_str() {
        "stepfunctions" | "states" => "sfn".into(),
        _ => s,
    }
}

/// The HTTP status AWS uses for `code`.
fn default_status(code: &str) -> u16 {
    match code {
        "ServiceUnavailable" | "ServiceUnavailableException" | "SlowDown" => 503,
        c if c.starts_with("Internal") => 500,
        _ => 400,
    }
}

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

#[derive(Deserialize)]
#[serde(untagged)]
enum Spec {
    Full {
        #[serde(default)]
        seed: Option<u64>,
        rules: Vec<RuleSpec>,
    },
    Rules(Vec<RuleSpec>),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ModeSpec {
    FailBeforeSend,
    LoseResponse,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    service: String,
    #[serde(default)]
    operation: Option<String>,
    mode: ModeSpec,
    #[serde(default)]
    error_code: Option<String>,
    #[serde(default)]
    status: Option<u16>,
    #[serde(default)]
    surface: Option<Surface>,
    #[serde(default)]
    probability: Option<f64>,
    #[serde(default)]
    nth: Option<u64>,
    #[serde(default)]
    limit: Option<u64>,
}

impl RuleSpec {
    fn into_rule(self) -> Result<Rule, String> {
        let op = self.operation.as_deref().unwrap_or("*");
        let mut rule = match self.mode {
            ModeSpec::FailBeforeSend => {
                if self.surface.is_some() {
                    return Err("surface applies to lose_response only".into());
                }
                let code = self.error_code.as_deref().unwrap_or("ServiceUnavailable");
                let rule = Rule::fail_before_send(&self.service, op, code);
                match self.status {
                    Some(s) => rule.status(s),
                    None => rule,
                }
            }
            ModeSpec::LoseResponse => {
                if self.error_code.is_some() || self.status.is_some() {
                    return Err("error_code and status apply to fail_before_send only".into());
                }
                Rule::lose_response(&self.service, op).surface(self.surface.unwrap_or_default())
            }
        };
        rule = match (self.probability, self.nth) {
            (Some(p), None) => rule.probability(p),
            (None, Some(n)) => rule.nth(n),
            _ => return Err("give exactly one trigger: probability or nth".into()),
        };
        rule.limit = self.limit;
        Ok(rule)
    }
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
        let (seed, specs) =
            match serde_json::from_str::<Spec>(json).map_err(|e| bad(e.to_string()))? {
                Spec::Full { seed, rules } => (seed, rules),
                Spec::Rules(rules) => (None, rules),
            };
        let mut builder = Faults::builder();
        if let Some(seed) = seed {
            builder = builder.seed(seed);
        }
        for (i, spec) in specs.into_iter().enumerate() {
            let rule = spec
                .into_rule()
                .map_err(|e| bad(format!("rule {i}: {e}")))?;
            builder = builder.rule(rule);
        }
        builder.try_build().map_err(bad)
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
        tracing::warn!(?rules, "fault injection is ENABLED in the AWS SDK clients");
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

    /// The SDK interceptor for these faults.
    pub fn interceptor(&self) -> FaultInterceptor {
        FaultInterceptor {
            faults: self.clone(),
        }
    }

    /// `inner` wrapped so that requests armed with [`Action::FailBeforeSend`] are answered
    /// locally.
    pub fn http_client(&self, inner: SharedHttpClient) -> FaultHttpClient {
        FaultHttpClient {
            inner,
            faults: self.clone(),
        }
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

/// The error a lost response surfaces with (inside `SdkError::ResponseError`/`TimeoutError`).
#[derive(Debug)]
pub struct LostResponse {
    /// Service.
    pub service: String,
    /// Operation.
    pub operation: String,
}

impl fmt::Display for LostResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "injected fault: the response to {} {} was lost after the request was sent",
            self.service, self.operation
        )
    }
}

impl std::error::Error for LostResponse {}

/// The decision for the current attempt, kept in the config bag (and, for fail_before_send, on
/// the request, where the HTTP client finds it).
#[derive(Debug, Clone)]
struct Armed {
    rule: usize,
    service: String,
    operation: String,
    action: Action,
}

#[derive(Debug, Clone)]
struct Attempt(Option<Armed>);

impl Storable for Attempt {
    type Storer = StoreReplace<Self>;
}

/// The interceptor: decides per attempt, just before transmit; applies lost responses.
#[derive(Debug, Clone)]
pub struct FaultInterceptor {
    faults: Faults,
}

impl FaultInterceptor {
    fn armed(cfg: &ConfigBag) -> Option<Armed> {
        cfg.load::<Attempt>().and_then(|a| a.0.clone())
    }
}

impl Intercept for FaultInterceptor {
    fn name(&self) -> &'static str {
        "DocketFaultInjection"
    }

    fn read_before_attempt(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        cfg.interceptor_state().store_put(Attempt(None));
        Ok(())
    }

    fn modify_before_transmit(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some((service, operation)) = cfg
            .load::<Metadata>()
            .map(|m| (m.service().to_string(), m.name().to_string()))
        else {
            return Ok(());
        };
        let armed = self.faults.decide(&service, &operation).map(|rule| Armed {
            rule,
            service,
            operation,
            action: self.faults.inner.rules[rule].action.clone(),
        });
        if let Some(
            armed @ Armed {
                action: Action::FailBeforeSend { .. },
                ..
            },
        ) = &armed
        {
            context.request_mut().add_extension(armed.clone());
        }
        cfg.interceptor_state().store_put(Attempt(armed));
        Ok(())
    }

    fn read_after_deserialization(
        &self,
        _context: &AfterDeserializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        match Self::armed(cfg) {
            Some(
                armed @ Armed {
                    action:
                        Action::LoseResponse {
                            surface: Surface::ResponseError,
                        },
                    ..
                },
            ) => {
                // An interceptor error after deserialization surfaces as ResponseError, which
                // no retry classifier retries.
                cfg.interceptor_state().store_put(Attempt(None));
                self.faults.record(&armed);
                Err(Box::new(LostResponse {
                    service: armed.service,
                    operation: armed.operation,
                }))
            }
            _ => Ok(()),
        }
    }

    fn modify_before_attempt_completion(
        &self,
        context: &mut FinalizerInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(
            armed @ Armed {
                action:
                    Action::LoseResponse {
                        surface: Surface::Timeout,
                    },
                ..
            },
        ) = Self::armed(cfg)
        else {
            return Ok(());
        };
        cfg.interceptor_state().store_put(Attempt(None));
        // Only an attempt that got an answer had its answer lost.
        if context.response().is_none() {
            return Ok(());
        }
        if let Some(result) = context.output_or_error_mut() {
            self.faults.record(&armed);
            *result = Err(OrchestratorError::timeout(Box::new(LostResponse {
                service: armed.service,
                operation: armed.operation,
            })));
        }
        Ok(())
    }
}

/// An HTTP client that answers requests armed with [`Action::FailBeforeSend`] itself and passes
/// every other request to the real client.
#[derive(Debug, Clone)]
pub struct FaultHttpClient {
    inner: SharedHttpClient,
    faults: Faults,
}

impl HttpClient for FaultHttpClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(FaultConnector {
            inner: self.inner.http_connector(settings, components),
            faults: self.faults.clone(),
        })
    }

    fn validate_base_client_config(
        &self,
        runtime_components: &RuntimeComponentsBuilder,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner
            .validate_base_client_config(runtime_components, cfg)
    }

    fn validate_final_config(
        &self,
        runtime_components: &RuntimeComponents,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner.validate_final_config(runtime_components, cfg)
    }

    fn connector_metadata(
        &self,
    ) -> Option<aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata> {
        self.inner.connector_metadata()
    }
}

#[derive(Debug)]
struct FaultConnector {
    inner: SharedHttpConnector,
    faults: Faults,
}

impl HttpConnector for FaultConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        match request.extension::<Armed>() {
            Some(armed) => {
                self.faults.record(armed);
                HttpConnectorFuture::ready(Ok(synthetic_error(&request, armed)))
            }
            None => self.inner.call(request),
        }
    }
}

/// The error response a service would send for `armed`'s code, in its protocol: S3's `<Error>`
/// XML, the query protocol's `<ErrorResponse>`, or JSON with `__type` (awsJson) — always with
/// `x-amzn-errortype` too (restJson).
fn synthetic_error(request: &HttpRequest, armed: &Armed) -> HttpResponse {
    let Action::FailBeforeSend { error_code, status } = &armed.action else {
        unreachable!("only fail_before_send is armed on the request")
    };
    let message = format!(
        "injected fault: {} {} failed before sending",
        armed.service, armed.operation
    );
    let content_type = request.headers().get("content-type").unwrap_or("");
    let (body, body_type) = if normalize_service(&armed.service) == "s3" {
        (
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{error_code}</Code>\
                 <Message>{message}</Message><RequestId>docket-fault</RequestId></Error>"
            ),
            "application/xml",
        )
    } else if content_type.starts_with("application/x-www-form-urlencoded") {
        (
            format!(
                "<ErrorResponse><Error><Type>Receiver</Type><Code>{error_code}</Code>\
                 <Message>{message}</Message></Error><RequestId>docket-fault</RequestId>\
                 </ErrorResponse>"
            ),
            "text/xml",
        )
    } else {
        (
            serde_json::json!({ "__type": error_code, "message": message }).to_string(),
            if content_type.starts_with("application/x-amz-json") {
                content_type
            } else {
                "application/json"
            },
        )
    };
    let body_type = body_type.to_string();
    let mut response = HttpResponse::new(
        (*status).try_into().expect("validated 4xx/5xx status"),
        SdkBody::from(body),
    );
    let headers = response.headers_mut();
    headers.insert("content-type", body_type);
    headers.insert("x-amzn-errortype", error_code.clone());
    headers.insert("x-amzn-requestid", "docket-fault");
    headers.insert("x-amz-request-id", "docket-fault");
    response
}

/// The HTTP client a config would use by default (the SDK's default HTTPS client), to wrap when
/// the config names none.
fn default_http_client() -> Option<SharedHttpClient> {
    let plugin = aws_smithy_runtime::client::defaults::default_http_client_plugin_v2(
        BehaviorVersion::latest(),
    )?;
    let components = RuntimeComponentsBuilder::new("docket-faults");
    let components: Cow<'_, RuntimeComponentsBuilder> = plugin.runtime_components(&components);
    components.http_client()
}

/// SDK client config builders that faults can be installed on.
pub trait InstallFaults: Sized {
    /// Installs `faults` (interceptor + wrapped HTTP client); a no-op for [`Faults::none`].
    fn install_faults(self, faults: &Faults) -> Self;
}

macro_rules! install_faults_for {
    ($($sdk:ident),*) => {$(
        impl InstallFaults for $sdk::config::Builder {
            fn install_faults(self, faults: &Faults) -> Self {
                if faults.is_empty() {
                    return self;
                }
                let inner = self.clone().build().http_client().or_else(default_http_client);
                let builder = self.interceptor(faults.interceptor());
                match inner {
                    Some(inner) => builder.http_client(faults.http_client(inner)),
                    None => {
                        tracing::warn!("no HTTP client to wrap: fail_before_send is not injected");
                        builder
                    }
                }
            }
        }
    )*};
}

install_faults_for!(aws_sdk_s3, aws_sdk_dynamodb, aws_sdk_textract, aws_sdk_sfn);

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(json: &str) -> Result<Rule, Error> {
        Faults::from_json(&format!("[{json}]")).map(|f| f.rules()[0].clone())
    }

    #[test]
    fn parses_both_modes_and_both_triggers() {
        let faults = Faults::from_json(
            r#"{"seed": 3, "rules": [
                {"service": "s3", "operation": "PutObject", "mode": "fail_before_send",
                 "error_code": "SlowDown", "probability": 0.25},
                {"service": "DynamoDB", "operation": "TransactWriteItems", "mode": "lose_response",
                 "nth": 2, "surface": "timeout"},
                {"service": "sfn", "mode": "fail_before_send", "nth": 1, "limit": 1}
            ]}"#,
        )
        .unwrap();
        assert_eq!(
            faults.rules(),
            &[
                Rule::fail_before_send("s3", "PutObject", "SlowDown").probability(0.25),
                Rule::lose_response("dynamodb", "TransactWriteItems")
                    .surface(Surface::Timeout)
                    .nth(2),
                Rule::fail_before_send("sfn", "*", "ServiceUnavailable")
                    .nth(1)
                    .limit(1),
            ]
        );
        assert_eq!(
            faults.rules()[0].action,
            Action::FailBeforeSend {
                error_code: "SlowDown".into(),
                status: 503
            }
        );
    }

    #[test]
    fn default_codes_and_statuses() {
        let r =
            rule(r#"{"service":"s3","operation":"PutObject","mode":"fail_before_send","nth":1}"#)
                .unwrap();
        assert_eq!(
            r.action,
            Action::FailBeforeSend {
                error_code: "ServiceUnavailable".into(),
                status: 503
            }
        );
        let r = rule(r#"{"service":"dynamodb","mode":"fail_before_send","error_code":"ThrottlingException","nth":1}"#).unwrap();
        assert!(matches!(
            r.action,
            Action::FailBeforeSend { status: 400, .. }
        ));
        let r = rule(r#"{"service":"textract","mode":"fail_before_send","error_code":"InternalServerError","status":502,"nth":1}"#).unwrap();
        assert!(matches!(
            r.action,
            Action::FailBeforeSend { status: 502, .. }
        ));
        let r = rule(r#"{"service":"sfn","mode":"lose_response","nth":1}"#).unwrap();
        assert_eq!(
            r.action,
            Action::LoseResponse {
                surface: Surface::ResponseError
            }
        );
    }

    #[test]
    fn rejects_bad_rules() {
        for bad in [
            // no trigger, two triggers
            r#"{"service":"s3","mode":"lose_response"}"#,
            r#"{"service":"s3","mode":"lose_response","nth":1,"probability":0.5}"#,
            // out of range
            r#"{"service":"s3","mode":"lose_response","probability":1.5}"#,
            r#"{"service":"s3","mode":"lose_response","nth":0}"#,
            r#"{"service":"s3","mode":"fail_before_send","status":200,"nth":1}"#,
            // fields of the other mode, unknown fields and modes
            r#"{"service":"s3","mode":"lose_response","error_code":"X","nth":1}"#,
            r#"{"service":"s3","mode":"fail_before_send","surface":"timeout","nth":1}"#,
            r#"{"service":"s3","mode":"lose_response","nth":1,"typo":1}"#,
            r#"{"service":"s3","mode":"explode","nth":1}"#,
            r#"{"service":"","mode":"lose_response","nth":1}"#,
        ] {
            assert!(rule(bad).is_err(), "accepted {bad}");
        }
        assert!(Faults::from_json("not json").is_err());
    }

    #[test]
    fn nth_fires_exactly_once_on_the_nth_matching_attempt() {
        let faults = Faults::builder()
            .rule(Rule::lose_response("s3", "PutObject").nth(3))
            .build();
        let fired: Vec<bool> = (0..6)
            .map(|_| {
                // Other operations and services are not counted.
                assert_eq!(faults.decide("S3", "GetObject"), None);
                assert_eq!(faults.decide("DynamoDB", "PutObject"), None);
                faults.decide("S3", "PutObject").is_some()
            })
            .collect();
        assert_eq!(fired, [false, false, true, false, false, false]);
        assert_eq!(faults.seen_by(0), 6);
    }

    #[test]
    fn nth_counts_are_shared_by_clones() {
        let a = Faults::builder()
            .rule(Rule::fail_before_send("sfn", "StartExecution", "ServiceUnavailable").nth(2))
            .build();
        let b = a.clone();
        assert_eq!(a.decide("SFN", "StartExecution"), None);
        assert_eq!(b.decide("SFN", "StartExecution"), Some(0));
        assert_eq!(a.seen_by(0), 2);
    }

    #[test]
    fn probability_is_deterministic_for_a_seed_and_close_to_p() {
        let run = |seed| {
            let f = Faults::builder()
                .seed(seed)
                .rule(
                    Rule::fail_before_send("dynamodb", "*", "ThrottlingException").probability(0.3),
                )
                .build();
            (0..10_000)
                .map(|_| f.decide("DynamoDB", "PutItem").is_some())
                .collect::<Vec<_>>()
        };
        let a = run(42);
        assert_eq!(a, run(42));
        assert_ne!(a, run(43));
        let hits = a.iter().filter(|&&x| x).count();
        assert!(
            (2_700..3_300).contains(&hits),
            "{hits} hits of 10000 at p=0.3"
        );
        let never = Faults::builder()
            .rule(Rule::lose_response("s3", "*").probability(0.0))
            .build();
        assert!((0..100).all(|_| never.decide("S3", "PutObject").is_none()));
    }

    #[test]
    fn first_firing_rule_wins_and_every_matching_rule_counts() {
        let faults = Faults::builder()
            .rule(Rule::fail_before_send("s3", "PutObject", "SlowDown").nth(1))
            .rule(Rule::lose_response("s3", "*").nth(1))
            .rule(Rule::lose_response("s3", "*").nth(2))
            .build();
        assert_eq!(faults.decide("S3", "PutObject"), Some(0));
        assert_eq!(faults.decide("S3", "HeadObject"), Some(2));
        assert_eq!(
            faults.counts().iter().map(|c| c.seen).collect::<Vec<_>>(),
            [1, 2, 2]
        );
    }

    #[test]
    fn limit_caps_injections() {
        let faults = Faults::builder()
            .rule(Rule::lose_response("s3", "PutObject").limit(2))
            .build();
        let armed = |rule| Armed {
            rule,
            service: "S3".into(),
            operation: "PutObject".into(),
            action: Action::LoseResponse {
                surface: Surface::ResponseError,
            },
        };
        for _ in 0..2 {
            let rule = faults.decide("S3", "PutObject").expect("fires");
            faults.record(&armed(rule));
        }
        assert_eq!(faults.decide("S3", "PutObject"), None);
        assert_eq!(faults.injected(), 2);
    }

    #[test]
    fn none_is_empty_and_installs_nothing() {
        let faults = Faults::none();
        assert!(faults.is_empty());
        assert_eq!(faults.decide("S3", "PutObject"), None);
        let conf = aws_sdk_s3::config::Builder::new()
            .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
            .install_faults(&faults)
            .build();
        assert_eq!(conf.interceptors().count(), 0);
        assert!(conf.http_client().is_none());
    }

    #[test]
    fn installs_an_interceptor_and_a_wrapped_default_client() {
        let faults = Faults::builder()
            .rule(Rule::lose_response("s3", "PutObject").nth(1))
            .build();
        let conf = aws_sdk_s3::config::Builder::new()
            .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
            .install_faults(&faults)
            .build();
        assert_eq!(conf.interceptors().count(), 1);
        assert!(format!("{:?}", conf.http_client().expect("wrapped")).contains("FaultHttpClient"));
    }

    #[test]
    fn from_env_is_off_unless_enabled() {
        // Only checks the disabled path: tests share the process environment.
        if std::env::var(ENABLE_VAR).as_deref() != Ok("1") {
            assert!(Faults::from_env().unwrap().is_none());
        }
    }
}
