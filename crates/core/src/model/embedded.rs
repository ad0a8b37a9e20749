//! What an e-invoice embedded in a document states ([`EmbeddedInvoice`], read by `einvoice`),
//! and when two values of a field are the same ([`same`]), as extraction compares the page with
//! it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;

use super::fields::FieldName;

/// The syntax an embedded invoice is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Syntax {
    /// UN/CEFACT Cross Industry Invoice D16B (Factur-X, ZUGFeRD 2, XRechnung CII).
    Cii,
    /// ZUGFeRD 1's `CrossIndustryDocument` (and its release candidate's `Invoice`).
    Zugferd1,
    /// OASIS UBL 2 `Invoice` or `CreditNote`.
    Ubl,
}

/// What an embedded e-invoice states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedInvoice {
    /// Its syntax.
    pub syntax: Syntax,
    /// The SHA-256 of its XML, as attached.
    pub sha256: String,
    /// The fields it states, in the forms extraction writes them (`YYYY-MM-DD`, `1005.50`).
    pub fields: BTreeMap<FieldName, String>,
}

/// Whether two values of `field` are the same: an issuer or a number on its letters and digits
/// without case or accents (`Kraxi GmbH`, `KRAXI GMBH`; `RE-2014/03`, `RE 2014 03`), the
/// rest as written (both are in normalized form).
pub fn same(field: FieldName, a: &str, b: &str) -> bool {
    match field {
        FieldName::Issuer | FieldName::InvoiceNumber => {
            let key = letters_and_digits(a);
            !key.is_empty() && key == letters_and_digits(b)
        }
        FieldName::InvoiceDate | FieldName::TotalAmount | FieldName::Currency => a == b,
    }
}

/// `s`'s letters and digits, lower case, without accents.
pub fn letters_and_digits(s: &str) -> String {
    s.nfd()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}
