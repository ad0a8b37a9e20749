//! What a document's fields are called and hold: [`FieldName`], one extracted [`Field`], a whole
//! [`Extraction`], and the normalized form of an amount. Plain data: extraction produces it,
//! validation and review read it, the config names fields with it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

/// The fields extracted from an invoice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldName {
    /// The company that issued the invoice, as printed.
    Issuer,
    /// The invoice number, as printed (`INV-2026-0042`).
    InvoiceNumber,
    /// The invoice date, ISO `YYYY-MM-DD`.
    InvoiceDate,
    /// The total to pay, a plain decimal with two decimals (`1234.50`).
    TotalAmount,
    /// The ISO 4217 currency code (`EUR`).
    Currency,
}

impl FieldName {
    /// Every field, in a fixed order.
    pub const ALL: [FieldName; 5] = [
        FieldName::Issuer,
        FieldName::InvoiceNumber,
        FieldName::InvoiceDate,
        FieldName::TotalAmount,
        FieldName::Currency,
    ];

    /// The snake_case name used in JSON and reasons.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldName::Issuer => "issuer",
            FieldName::InvoiceNumber => "invoice_number",
            FieldName::InvoiceDate => "invoice_date",
            FieldName::TotalAmount => "total_amount",
            FieldName::Currency => "currency",
        }
    }
}

impl fmt::Display for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One extracted value and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// The normalized value; the raw text when it could not be normalized (validation then
    /// reports it as `bad_format`).
    pub value: String,
    /// 0.0..=1.0: OCR confidence of the value's words times the match quality.
    pub confidence: f64,
    /// 1-based page number.
    pub page: u32,
    /// Index of the line within its page.
    pub line: usize,
}

/// The fields found in a document; an absent field was not found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    /// Found fields by name.
    pub fields: BTreeMap<FieldName, Field>,
    /// The language the document is written in (ISO 639-1), when its words tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// What the e-invoice embedded in the document states, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded: Option<super::embedded::EmbeddedInvoice>,
    /// The fields the page reads confidently as another value than the embedded e-invoice
    /// states (`embedded_mismatch`): the page's value is kept, for a person to decide.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub disputed: BTreeSet<FieldName>,
}

impl Extraction {
    /// The value of a field, if found.
    pub fn value(&self, name: FieldName) -> Option<&str> {
        self.fields.get(&name).map(|f| f.value.as_str())
    }
}

/// Parses a normalized amount (`-?digits.dd`, at most 15 integer digits) into cents: the form
/// extraction writes a total in, and the config writes its maximum in.
pub(crate) fn parse_amount_cents(s: &str) -> Option<i128> {
    let (negative, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (int, frac) = body.split_once('.')?;
    if int.is_empty()
        || int.len() > 15
        || frac.len() != 2
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let cents = int.parse::<i128>().ok()? * 100 + frac.parse::<i128>().ok()?;
    Some(if negative { -cents } else { cents })
}

/// An ISO 4217 code as the pipeline writes one: three upper-case ASCII letters (`EUR`).
pub(crate) fn is_currency_code(s: &str) -> bool {
    s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_serialize_as_snake_case() {
        assert_eq!(
            serde_json::to_string(&FieldName::TotalAmount).unwrap(),
            "\"total_amount\""
        );
        for f in FieldName::ALL {
            assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{f}\""));
        }
    }

    #[test]
    fn parse_amount_cents_accepts_only_the_normalized_form() {
        assert_eq!(parse_amount_cents("1234.50"), Some(123_450));
        assert_eq!(parse_amount_cents("-0.05"), Some(-5));
        for bad in ["1234.5", "1,234.50", "", ".50", "12.", "1e3.00", "+1.00"] {
            assert_eq!(parse_amount_cents(bad), None, "{bad}");
        }
    }
}
