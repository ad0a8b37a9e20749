//! Validation rules: turn an [`Extraction`] into a decision.
//!
//! - a missing field needed for processing, or a present but malformed value →
//!   [`Decision::Invalid`];
//! - a missing required field, a value outside its sanity range, a disallowed currency, a
//!   required field below the confidence threshold, or a field the page reads confidently as
//!   another value than the document's embedded e-invoice states → [`Decision::NeedsReview`] (a
//!   person can still approve);
//! - otherwise → [`Decision::AutoApprove`].
//!
//! `Invalid` carries every reason found, not only the invalidating ones, so the person fixing the
//! document sees the whole picture at once. Reasons are sorted by field, then code, then detail.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use time::{macros::format_description, Date, Duration};

use crate::config::ValidationRules;
use crate::model::fields::{is_currency_code, parse_amount_cents, Extraction, FieldName};

/// A required field was not found.
pub const MISSING_FIELD: &str = "missing_field";
/// A required field's confidence is below the threshold.
pub const LOW_CONFIDENCE: &str = "low_confidence";
/// A value is present but not in its normalized format.
pub const BAD_FORMAT: &str = "bad_format";
/// The total is not above zero or above the configured maximum.
pub const AMOUNT_OUT_OF_RANGE: &str = "amount_out_of_range";
/// The invoice date is further in the future than allowed.
pub const DATE_IN_FUTURE: &str = "date_in_future";
/// The invoice date is older than allowed.
pub const DATE_TOO_OLD: &str = "date_too_old";
/// The currency is recognised but not accepted without review.
pub const CURRENCY_NOT_ALLOWED: &str = "currency_not_allowed";
/// The page reads a field differently from the document's embedded e-invoice.
pub const EMBEDDED_MISMATCH: &str = "embedded_mismatch";
/// Every reason code (the review page names each one: `tests/lint`).
pub const REASON_CODES: [&str; 8] = [
    MISSING_FIELD,
    LOW_CONFIDENCE,
    BAD_FORMAT,
    AMOUNT_OUT_OF_RANGE,
    DATE_IN_FUTURE,
    DATE_TOO_OLD,
    CURRENCY_NOT_ALLOWED,
    EMBEDDED_MISMATCH,
];

/// Why a document is not auto-approved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    /// Stable snake_case code, one of the constants of this module.
    pub code: String,
    /// The field concerned, if any.
    pub field: Option<FieldName>,
    /// A sentence for the reviewer.
    pub detail: String,
}

impl Reason {
    fn new(code: &str, field: FieldName, detail: impl Into<String>) -> Self {
        Reason {
            code: code.to_string(),
            field: Some(field),
            detail: detail.into(),
        }
    }
}

/// What happens to the document next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Everything present, well-formed, in range and confident.
    AutoApprove,
    /// A person has to look; they can still approve.
    NeedsReview {
        /// Why, sorted.
        reasons: Vec<Reason>,
    },
    /// Cannot be processed as extracted.
    Invalid {
        /// Why (every reason found), sorted.
        reasons: Vec<Reason>,
    },
}

/// The outcome of validation, stored as evidence next to the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationReport {
    /// The version of the config whose rules decided.
    pub config_version: String,
    /// What was extracted.
    pub extraction: Extraction,
    /// The decision.
    pub decision: Decision,
}

fn parse_iso_date(s: &str) -> Option<Date> {
    Date::parse(s, format_description!("[year]-[month]-[day]")).ok()
}

/// Validates `extraction` against `rules` as of `today` (the caller's clock, so tests and
/// replays are deterministic).
pub fn validate(extraction: &Extraction, rules: &ValidationRules, today: Date) -> ValidationReport {
    let for_processing: BTreeSet<FieldName> =
        rules.required_for_processing.iter().copied().collect();
    let required: BTreeSet<FieldName> = rules
        .required
        .iter()
        .copied()
        .chain(for_processing.iter().copied())
        .collect();

    let mut invalid = false;
    let mut reasons = vec![];
    for name in FieldName::ALL {
        let Some(field) = extraction.fields.get(&name) else {
            if required.contains(&name) {
                invalid |= for_processing.contains(&name);
                reasons.push(Reason::new(
                    MISSING_FIELD,
                    name,
                    format!("{name} was not found in the document"),
                ));
            }
            continue;
        };
        match check_value(name, &field.value, rules, today) {
            Err(problem) => {
                invalid = true;
                reasons.push(Reason::new(BAD_FORMAT, name, problem));
                continue;
            }
            Ok(Some(out_of_range)) => reasons.push(out_of_range),
            Ok(None) => {}
        }
        let low = field.confidence.is_nan() || field.confidence < rules.min_confidence;
        if required.contains(&name) && low {
            reasons.push(Reason::new(
                LOW_CONFIDENCE,
                name,
                format!(
                    "{name} confidence {:.2} is below the minimum {:.2}",
                    field.confidence, rules.min_confidence
                ),
            ));
        }
    }

    for &name in &extraction.disputed {
        let stated = extraction
            .embedded
            .as_ref()
            .and_then(|e| e.fields.get(&name));
        let read = extraction.value(name);
        reasons.push(Reason::new(
            EMBEDDED_MISMATCH,
            name,
            format!(
                "the page reads {}; the embedded e-invoice states {}",
                read.unwrap_or("nothing"),
                stated.map_or("nothing", String::as_str)
            ),
        ));
    }

    reasons.sort_by(|a, b| (a.field, &a.code, &a.detail).cmp(&(b.field, &b.code, &b.detail)));
    let decision = if invalid {
        Decision::Invalid { reasons }
    } else if reasons.is_empty() {
        Decision::AutoApprove
    } else {
        Decision::NeedsReview { reasons }
    };
    ValidationReport {
        config_version: rules.config_version.clone(),
        extraction: extraction.clone(),
        decision,
    }
}

/// `Err(detail)` when the value is malformed; `Ok(Some(reason))` when it is well-formed but
/// outside its sanity range.
fn check_value(
    name: FieldName,
    value: &str,
    rules: &ValidationRules,
    today: Date,
) -> Result<Option<Reason>, String> {
    match name {
        FieldName::Issuer => {
            let v = value.trim();
            if v.chars().filter(|c| c.is_alphabetic()).count() < 2 || v.chars().count() > 200 {
                return Err(format!("issuer {value:?} is not a company name"));
            }
            Ok(None)
        }
        FieldName::InvoiceNumber => {
            if value.is_empty()
                || value.chars().count() > 64
                || value.chars().any(char::is_whitespace)
                || !value.chars().any(|c| c.is_ascii_alphanumeric())
            {
                return Err(format!("invoice number {value:?} is not an identifier"));
            }
            Ok(None)
        }
        FieldName::InvoiceDate => {
            let date = parse_iso_date(value)
                .ok_or_else(|| format!("invoice date {value:?} is not a calendar date"))?;
            let age = (today - date).whole_days();
            if date > today + Duration::days(rules.max_future_days) {
                return Ok(Some(Reason::new(
                    DATE_IN_FUTURE,
                    name,
                    format!(
                        "invoice date {value} is {} days in the future (at most {} allowed)",
                        -age, rules.max_future_days
                    ),
                )));
            }
            if age > rules.max_age_days {
                return Ok(Some(Reason::new(
                    DATE_TOO_OLD,
                    name,
                    format!(
                        "invoice date {value} is {age} days old (at most {} allowed)",
                        rules.max_age_days
                    ),
                )));
            }
            Ok(None)
        }
        FieldName::TotalAmount => {
            let cents = parse_amount_cents(value)
                .ok_or_else(|| format!("total amount {value:?} is not a decimal amount"))?;
            // An unparseable maximum cannot happen after PipelineConfig::from_json; if rules are
            // built by hand, fail towards a person rather than towards auto-approval.
            let max = parse_amount_cents(&rules.max_amount);
            if cents <= 0 {
                return Ok(Some(Reason::new(
                    AMOUNT_OUT_OF_RANGE,
                    name,
                    format!("total amount {value} is not above zero"),
                )));
            }
            if max.is_none_or(|max| cents > max) {
                return Ok(Some(Reason::new(
                    AMOUNT_OUT_OF_RANGE,
                    name,
                    format!(
                        "total amount {value} is above the maximum {}",
                        rules.max_amount
                    ),
                )));
            }
            Ok(None)
        }
        FieldName::Currency => {
            if !is_currency_code(value) {
                return Err(format!("currency {value:?} is not an ISO 4217 code"));
            }
            if !rules.allowed_currencies.iter().any(|c| c == value) {
                return Ok(Some(Reason::new(
                    CURRENCY_NOT_ALLOWED,
                    name,
                    format!("currency {value} is not in the allowed list"),
                )));
            }
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests;
