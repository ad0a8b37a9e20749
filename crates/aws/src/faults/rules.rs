//! The rules: what a fault does ([`Action`]), when it fires ([`Trigger`]), which attempts it
//! matches ([`Rule`]), and their JSON form in `DOCKET_FAULTS` ([`parse`]).

use std::fmt;

use serde::Deserialize;

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
    /// `SdkError::DispatchFailure`: the connection fails with an I/O error after the request was
    /// sent, as when it is reset before the answer arrives; retried by the SDK's standard retry
    /// strategy like a real reset.
    DispatchFailure,
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

    pub(super) fn validate(&self) -> Result<(), String> {
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

    pub(super) fn matches(&self, service: &str, operation: &str) -> bool {
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
pub(super) fn normalize_service(s: &str) -> String {
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

/// Parses the JSON form of `DOCKET_FAULTS` (see the [`super`] module docs): the seed, if one is
/// given, and the rules in order.
pub(super) fn parse(json: &str) -> Result<(Option<u64>, Vec<Rule>), String> {
    let (seed, specs) = match serde_json::from_str::<Spec>(json).map_err(|e| e.to_string())? {
        Spec::Full { seed, rules } => (seed, rules),
        Spec::Rules(rules) => (None, rules),
    };
    let rules = specs
        .into_iter()
        .enumerate()
        .map(|(i, spec)| spec.into_rule().map_err(|e| format!("rule {i}: {e}")))
        .collect::<Result<_, _>>()?;
    Ok((seed, rules))
}
