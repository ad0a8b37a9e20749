//! Validation decisions: from whole extracted invoices and from one field changed at a time.

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
    assert_eq!(report.config_version, PipelineConfig::builtin().version);
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
