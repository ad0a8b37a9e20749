//! Validation rules: turn an [`Extraction`] into a decision.
//!
//! - a missing field needed for processing, or a present but malformed value → [`Decision::Invalid`];
//! - a missing required field, a value outside its sanity range, a disallowed currency, or a
//!   required field below the confidence threshold → [`Decision::NeedsReview`] (a person can
//!   still approve);
//! - otherwise → [`Decision::AutoApprove`].
//!
//! `Invalid` carries every reason found, not only the invalidating ones, so the person fixing the
//! document sees the whole picture at once. Reasons are sorted by field, then code, then detail.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use time::{macros::format_description, Date, Duration};

use crate::config::ValidationRules;
use crate::model::fields::{parse_amount_cents, Extraction, FieldName};

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
            if value.len() != 3 || !value.bytes().all(|b| b.is_ascii_uppercase()) {
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
mod tests {
    use time::macros::date;

    use super::*;
    use crate::config::PipelineConfig;
    use crate::extract::extract;
    use crate::model::fields::Field;
    use crate::ocr::OcrDocument;

    const TODAY: Date = date!(2026 - 03 - 20);

    fn rules() -> ValidationRules {
        PipelineConfig::builtin().validation
    }

    fn check(lines: &[&str], confidence: f64) -> ValidationReport {
        let config = PipelineConfig::builtin();
        let x = extract(
            &OcrDocument::from_lines(lines, confidence),
            &config.extraction,
        );
        validate(&x, &config.validation, TODAY)
    }

    fn field(value: &str) -> Field {
        Field {
            value: value.into(),
            confidence: 0.99,
            page: 1,
            line: 0,
        }
    }

    /// A complete, confident extraction.
    fn good() -> Extraction {
        let mut x = Extraction::default();
        for (name, value) in [
            (FieldName::Issuer, "Acme Widgets Ltd"),
            (FieldName::InvoiceNumber, "INV-2026-0042"),
            (FieldName::InvoiceDate, "2026-03-14"),
            (FieldName::TotalAmount, "1234.50"),
            (FieldName::Currency, "EUR"),
        ] {
            x.fields.insert(name, field(value));
        }
        x
    }

    fn with(name: FieldName, value: &str) -> Extraction {
        let mut x = good();
        x.fields.insert(name, field(value));
        x
    }

    fn codes(decision: &Decision) -> Vec<(String, Option<FieldName>)> {
        match decision {
            Decision::AutoApprove => vec![],
            Decision::NeedsReview { reasons } | Decision::Invalid { reasons } => {
                reasons.iter().map(|r| (r.code.clone(), r.field)).collect()
            }
        }
    }

    fn review(pairs: &[(&str, FieldName)]) -> Vec<(String, Option<FieldName>)> {
        pairs
            .iter()
            .map(|(c, f)| (c.to_string(), Some(*f)))
            .collect()
    }

    const CLEAN: &[&str] = &[
        "Brightline Consulting Ltd",
        "Unit 4, 22 Canal Street",
        "Invoice No. BL-0911",
        "Date: 14/03/2026",
        "Total £3,000.00",
    ];

    #[test]
    fn a_clean_confident_invoice_is_auto_approved_under_the_config_version() {
        let report = check(CLEAN, 0.99);
        assert_eq!(report.decision, Decision::AutoApprove);
        assert_eq!(report.config_version, "2026-11-30.2");
        assert_eq!(
            report.extraction.value(FieldName::TotalAmount),
            Some("3000.00")
        );
    }

    #[test]
    fn a_low_confidence_scan_needs_review_with_a_low_confidence_reason_per_field() {
        // given the same invoice scanned badly
        let report = check(CLEAN, 0.55);
        // then every required field is flagged, in field order
        match &report.decision {
            Decision::NeedsReview { reasons } => {
                assert_eq!(
                    reasons.iter().map(|r| r.field).collect::<Vec<_>>(),
                    FieldName::ALL.map(Some).to_vec()
                );
                assert!(reasons.iter().all(|r| r.code == LOW_CONFIDENCE));
                assert_eq!(
                    reasons[3].detail,
                    "total_amount confidence 0.55 is below the minimum 0.80"
                );
            }
            other => panic!("expected NeedsReview, got {other:?}"),
        }
    }

    #[test]
    fn a_missing_total_makes_the_document_invalid() {
        let mut x = good();
        x.fields.remove(&FieldName::TotalAmount);
        let report = validate(&x, &rules(), TODAY);
        assert_eq!(
            report.decision,
            Decision::Invalid {
                reasons: vec![Reason::new(
                    MISSING_FIELD,
                    FieldName::TotalAmount,
                    "total_amount was not found in the document"
                )]
            }
        );
    }

    #[test]
    fn a_missing_field_not_needed_for_processing_needs_review() {
        let mut x = good();
        x.fields.remove(&FieldName::InvoiceNumber);
        x.fields.remove(&FieldName::Currency);
        let report = validate(&x, &rules(), TODAY);
        assert!(matches!(report.decision, Decision::NeedsReview { .. }));
        assert_eq!(
            codes(&report.decision),
            review(&[
                (MISSING_FIELD, FieldName::InvoiceNumber),
                (MISSING_FIELD, FieldName::Currency)
            ])
        );
    }

    #[test]
    fn a_document_with_no_fields_is_invalid_and_lists_every_missing_field() {
        let report = check(&["Thank you for your business!"], 0.99);
        assert!(matches!(report.decision, Decision::Invalid { .. }));
        let expected: Vec<_> = FieldName::ALL.map(|f| (MISSING_FIELD, f)).to_vec();
        assert_eq!(codes(&report.decision), review(&expected));
    }

    #[test]
    fn a_malformed_amount_makes_the_document_invalid() {
        // given a total printed with broken grouping
        let report = check(
            &[
                "Brightline Consulting Ltd",
                "Invoice No. BL-0911",
                "Date: 14/03/2026",
                "Total Due: 1.234.5 GBP",
            ],
            0.99,
        );
        match &report.decision {
            Decision::Invalid { reasons } => {
                assert_eq!(
                    reasons,
                    &vec![Reason::new(
                        BAD_FORMAT,
                        FieldName::TotalAmount,
                        "total amount \"1.234.5\" is not a decimal amount"
                    )]
                );
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn malformed_values_of_every_field_are_invalid() {
        for (name, value) in [
            (FieldName::InvoiceDate, "31/02/2026"),
            (FieldName::InvoiceDate, "2026-02-31"),
            (FieldName::TotalAmount, "12.5"),
            (FieldName::TotalAmount, "1,234.50"),
            (FieldName::Currency, "eur"),
            (FieldName::Currency, "€"),
            (FieldName::InvoiceNumber, "INV 42"),
            (FieldName::Issuer, "1"),
        ] {
            let report = validate(&with(name, value), &rules(), TODAY);
            assert!(
                matches!(report.decision, Decision::Invalid { .. }),
                "{name}={value}: {:?}",
                report.decision
            );
            assert_eq!(codes(&report.decision), review(&[(BAD_FORMAT, name)]));
        }
    }

    #[test]
    fn an_amount_out_of_range_needs_review() {
        for value in ["0.00", "-50.00", "1000000.01"] {
            let report = validate(&with(FieldName::TotalAmount, value), &rules(), TODAY);
            assert_eq!(
                codes(&report.decision),
                review(&[(AMOUNT_OUT_OF_RANGE, FieldName::TotalAmount)]),
                "{value}"
            );
            assert!(matches!(report.decision, Decision::NeedsReview { .. }));
        }
        // the maximum itself is fine
        let at_max = validate(&with(FieldName::TotalAmount, "1000000.00"), &rules(), TODAY);
        assert_eq!(at_max.decision, Decision::AutoApprove);
    }

    #[test]
    fn a_date_in_the_future_needs_review() {
        // 31 days ahead with max_future_days 30
        let report = validate(&with(FieldName::InvoiceDate, "2026-04-20"), &rules(), TODAY);
        assert_eq!(
            report.decision,
            Decision::NeedsReview {
                reasons: vec![Reason::new(
                    DATE_IN_FUTURE,
                    FieldName::InvoiceDate,
                    "invoice date 2026-04-20 is 31 days in the future (at most 30 allowed)"
                )]
            }
        );
        // exactly 30 days ahead is accepted
        let edge = validate(&with(FieldName::InvoiceDate, "2026-04-19"), &rules(), TODAY);
        assert_eq!(edge.decision, Decision::AutoApprove);
    }

    #[test]
    fn a_date_older_than_the_maximum_age_needs_review() {
        let report = validate(&with(FieldName::InvoiceDate, "2016-03-01"), &rules(), TODAY);
        assert_eq!(
            codes(&report.decision),
            review(&[(DATE_TOO_OLD, FieldName::InvoiceDate)])
        );
    }

    #[test]
    fn a_currency_outside_the_allowed_list_needs_review() {
        let report = validate(&with(FieldName::Currency, "JPY"), &rules(), TODAY);
        assert_eq!(
            codes(&report.decision),
            review(&[(CURRENCY_NOT_ALLOWED, FieldName::Currency)])
        );
        assert!(matches!(report.decision, Decision::NeedsReview { .. }));
    }

    #[test]
    fn an_ambiguous_date_needs_review_for_low_confidence() {
        let report = check(
            &[
                "Brightline Consulting Ltd",
                "Invoice No. BL-0911",
                "Date: 03/04/2026",
                "Total £3,000.00",
            ],
            0.99,
        );
        assert_eq!(
            codes(&report.decision),
            review(&[(LOW_CONFIDENCE, FieldName::InvoiceDate)])
        );
        assert_eq!(
            report.extraction.value(FieldName::InvoiceDate),
            Some("2026-04-03")
        );
    }

    #[test]
    fn an_invalid_document_also_lists_its_review_reasons_sorted_by_field() {
        let mut x = with(FieldName::TotalAmount, "abc");
        x.fields.remove(&FieldName::Issuer);
        x.fields.get_mut(&FieldName::Currency).unwrap().confidence = 0.3;
        x.fields.insert(FieldName::InvoiceDate, field("2030-01-01"));
        let report = validate(&x, &rules(), TODAY);
        assert!(matches!(report.decision, Decision::Invalid { .. }));
        assert_eq!(
            codes(&report.decision),
            review(&[
                (MISSING_FIELD, FieldName::Issuer),
                (DATE_IN_FUTURE, FieldName::InvoiceDate),
                (BAD_FORMAT, FieldName::TotalAmount),
                (LOW_CONFIDENCE, FieldName::Currency),
            ])
        );
    }

    #[test]
    fn low_confidence_of_a_field_that_is_not_required_is_ignored() {
        let mut relaxed = rules();
        relaxed.required.retain(|f| *f != FieldName::Issuer);
        let mut x = good();
        x.fields.get_mut(&FieldName::Issuer).unwrap().confidence = 0.1;
        assert_eq!(
            validate(&x, &relaxed, TODAY).decision,
            Decision::AutoApprove
        );
        // but the same extraction under the builtin rules is reviewed
        assert_eq!(
            codes(&validate(&x, &rules(), TODAY).decision),
            review(&[(LOW_CONFIDENCE, FieldName::Issuer)])
        );
    }

    #[test]
    fn a_nan_confidence_counts_as_low() {
        let mut x = good();
        x.fields
            .get_mut(&FieldName::InvoiceNumber)
            .unwrap()
            .confidence = f64::NAN;
        assert_eq!(
            codes(&validate(&x, &rules(), TODAY).decision),
            review(&[(LOW_CONFIDENCE, FieldName::InvoiceNumber)])
        );
    }

    #[test]
    fn decision_serializes_with_a_decision_tag() {
        assert_eq!(
            serde_json::to_value(Decision::AutoApprove).unwrap(),
            serde_json::json!({"decision": "auto_approve"})
        );
        let d = Decision::NeedsReview {
            reasons: vec![Reason::new(LOW_CONFIDENCE, FieldName::Currency, "x")],
        };
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"decision": "needs_review", "reasons": [
                {"code": "low_confidence", "field": "currency", "detail": "x"}
            ]})
        );
        assert_eq!(serde_json::from_value::<Decision>(json).unwrap(), d);
    }
}
