//! One invoice through extraction and validation, each field compared with what a reader finds.

use docket_core::config::PipelineConfig;
use docket_core::einvoice::Syntax;
use docket_core::extract::with_embedded;
use docket_core::model::embedded::letters_and_digits;
use docket_core::model::fields::FieldName;
use docket_core::validate::{validate, Decision};
use serde::Serialize;
use time::{macros::format_description, Date, Duration};

use crate::set::Invoice;

/// How long after its date an invoice is validated: the age and future-date rules then pass
/// for a right date, whatever year the invoice was issued in (the set holds invoices from
/// 2014 on, and the measure is extraction, not the calendar).
const RECEIVED_AFTER_DAYS: i64 = 7;

/// The day invoices without an expected date are validated on.
const FALLBACK_TODAY: Date = time::macros::date!(2026 - 12 - 01);

/// One field of one invoice.
#[derive(Debug, Clone, Serialize)]
pub struct FieldScore {
    /// Which field.
    pub field: FieldName,
    /// What a reader finds (`None`: the invoice does not show it).
    pub expected: Option<String>,
    /// What extraction found.
    pub extracted: Option<String>,
    /// Extraction's confidence in it.
    pub confidence: Option<f64>,
    /// Whether the extracted value is the expected one (no value when none is expected).
    pub right: bool,
}

/// What became of one invoice.
#[derive(Debug, Clone, Serialize)]
pub struct InvoiceScore {
    /// `<set>/<id>`.
    pub id: String,
    /// Its set.
    pub set: String,
    /// Its language.
    pub language: String,
    /// The language extraction detected, if it could tell.
    pub detected_language: Option<String>,
    /// `auto_approve`, `needs_review` or `invalid`.
    pub decision: &'static str,
    /// Every field, in [`FieldName::ALL`]'s order.
    pub fields: Vec<FieldScore>,
    /// Auto-approved with a wrong field: the error nobody would look at.
    pub silent_error: bool,
    /// The syntax of the e-invoice its PDF carries, if it carries one.
    pub embedded: Option<Syntax>,
    /// The fields the page reads confidently otherwise than the e-invoice states.
    pub disputed: Vec<FieldName>,
}

/// Extracts and validates `invoice` under `config` and compares the fields.
pub fn score(invoice: &Invoice, config: &PipelineConfig) -> InvoiceScore {
    let extraction = with_embedded(
        &invoice.ocr,
        &config.extraction,
        invoice.embedded.as_ref(),
        config.validation.min_confidence,
    );
    let today = received(invoice);
    let report = validate(&extraction, &config.validation, today);
    let fields: Vec<FieldScore> = FieldName::ALL
        .iter()
        .map(|&field| {
            let expected = invoice.expected.fields.get(&field).cloned().flatten();
            let found = extraction.fields.get(&field);
            let extracted = found.map(|f| f.value.clone());
            let right = match (&expected, &extracted) {
                (None, None) => true,
                (Some(want), Some(got)) => same(field, want, got, &invoice.expected.issuer_also),
                _ => false,
            };
            FieldScore {
                field,
                expected,
                extracted,
                confidence: found.map(|f| f.confidence),
                right,
            }
        })
        .collect();
    let decision = match report.decision {
        Decision::AutoApprove => "auto_approve",
        Decision::NeedsReview { .. } => "needs_review",
        Decision::Invalid { .. } => "invalid",
    };
    InvoiceScore {
        id: invoice.id.clone(),
        set: invoice.set.clone(),
        language: invoice.expected.language.clone(),
        detected_language: extraction.language.clone(),
        decision,
        silent_error: decision == "auto_approve" && fields.iter().any(|f| !f.right),
        fields,
        embedded: invoice.embedded.as_ref().map(|e| e.syntax),
        disputed: extraction.disputed.iter().copied().collect(),
    }
}

fn received(invoice: &Invoice) -> Date {
    invoice
        .expected
        .fields
        .get(&FieldName::InvoiceDate)
        .cloned()
        .flatten()
        .and_then(|d| Date::parse(&d, format_description!("[year]-[month]-[day]")).ok())
        .map_or(FALLBACK_TODAY, |d| d + Duration::days(RECEIVED_AFTER_DAYS))
}

/// Whether `got` is `want`: issuers (or one of their other spellings) compared on their
/// lower-case letters and digits without accents, invoice numbers without spaces and case, the rest
/// exactly.
pub fn same(field: FieldName, want: &str, got: &str, issuer_also: &[String]) -> bool {
    match field {
        FieldName::Issuer => {
            let got = letters_and_digits(got);
            std::iter::once(want)
                .chain(issuer_also.iter().map(String::as_str))
                .any(|w| letters_and_digits(w) == got)
        }
        FieldName::InvoiceNumber => {
            let squeeze = |s: &str| {
                s.chars()
                    .filter(|c| !c.is_whitespace())
                    .flat_map(char::to_lowercase)
                    .collect::<String>()
            };
            squeeze(want) == squeeze(got)
        }
        _ => want == got,
    }
}

/// Lower-case letters and digits without accents: `Grünwerder` read as `Grunwerder` by OCR
/// is the same issuer to a reader (and to any matching against a supplier list).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issuers_compare_on_letters_and_digits_and_accept_other_spellings() {
        assert!(same(
            FieldName::Issuer,
            "Grünwerder AG",
            "Grunwerder AG",
            &[]
        ));
        let also = vec!["Coolblue".to_string()];
        assert!(same(
            FieldName::Issuer,
            "Coolblue B.V.",
            "COOLBLUE BV",
            &also
        ));
        assert!(same(FieldName::Issuer, "Coolblue B.V.", "Coolblue", &also));
        assert!(!same(
            FieldName::Issuer,
            "Coolblue B.V.",
            "Coolblue Zakelijk",
            &also
        ));
        assert!(!same(FieldName::Issuer, "Coolblue B.V.", "Bill To", &[]));
    }

    #[test]
    fn invoice_numbers_ignore_spaces_and_case_but_not_digits() {
        assert!(same(
            FieldName::InvoiceNumber,
            "INV-2026 0042",
            "inv-20260042",
            &[]
        ));
        assert!(!same(FieldName::InvoiceNumber, "INV-0042", "INV-0043", &[]));
    }

    #[test]
    fn amounts_dates_and_currencies_compare_exactly() {
        assert!(same(FieldName::TotalAmount, "1234.50", "1234.50", &[]));
        assert!(!same(FieldName::TotalAmount, "1234.50", "1234.05", &[]));
        assert!(!same(
            FieldName::InvoiceDate,
            "2026-03-04",
            "2026-04-03",
            &[]
        ));
    }
}
