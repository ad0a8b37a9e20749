//! A reviewer's corrections: field names and values checked against the forms validation
//! requires (never echoing a value: no document content in errors), applied over the extracted
//! fields, and diffed.

use std::collections::BTreeMap;

use super::{FieldChange, FieldSource, FieldValue, ReviewField, Reviewer};
use crate::config::PipelineConfig;
use crate::model::fields::{Extraction, Field, FieldName};
use crate::validate::{self, Decision, BAD_FORMAT};
use crate::Error;

/// The fields after `corrections` (field name → value as entered) by `reviewer`: every
/// corrected field is set to the trimmed value with confidence 1.0 and the reviewer as its
/// source; the others are kept. An unknown field name, an empty value or one that is not
/// well-formed (an amount is a decimal with two decimals, a date ISO `yyyy-mm-dd`, a currency a
/// code the config knows, issuer and invoice number as validation requires) is
/// `Fatal.BadInput` naming the field and the expected form (never the value: no document
/// content in errors).
pub fn apply_corrections(
    fields: &BTreeMap<FieldName, ReviewField>,
    corrections: &BTreeMap<String, String>,
    reviewer: &Reviewer,
    config: &PipelineConfig,
) -> Result<BTreeMap<FieldName, ReviewField>, Error> {
    let checked = check_corrections(corrections, config)?;
    Ok(overlay(fields, &checked, reviewer))
}

/// The corrected field that `error` refuses: the first correction, in name order, that is
/// refused on its own with that very error ([`apply_corrections`] checks them in that order and
/// stops at the first). `None` when the error is about something else (a decision's reason, say).
/// A page marks it beside the refusal (review-api answers it as `field`).
pub fn refused_field(
    corrections: &BTreeMap<String, String>,
    config: &PipelineConfig,
    error: &Error,
) -> Option<String> {
    let refusal = |name: &String, value: &String| {
        let alone = BTreeMap::from([(name.clone(), value.clone())]);
        check_corrections(&alone, config).err()
    };
    let (name, own) = corrections
        .iter()
        .find_map(|(name, value)| Some((name, refusal(name, value)?)))?;
    (own.to_string() == error.to_string()).then(|| name.clone())
}

/// The field-level diff from `before` to `after`: every field of `after` that is new or whose
/// value or confidence differs, in field order. (Corrections never remove a field, so removals
/// are not represented.)
pub fn diff(
    before: &BTreeMap<FieldName, ReviewField>,
    after: &BTreeMap<FieldName, ReviewField>,
) -> Vec<FieldChange> {
    after
        .iter()
        .filter_map(|(name, a)| {
            let b = before.get(name);
            let same = b.is_some_and(|b| b.value == a.value && b.confidence == a.confidence);
            (!same).then(|| FieldChange {
                field: *name,
                before: b.map(|b| FieldValue {
                    value: b.value.clone(),
                    confidence: b.confidence,
                }),
                after: FieldValue {
                    value: a.value.clone(),
                    confidence: a.confidence,
                },
            })
        })
        .collect()
}

/// Parses the reviewer's corrections: known field names, trimmed well-formed values.
pub(super) fn check_corrections(
    corrections: &BTreeMap<String, String>,
    config: &PipelineConfig,
) -> Result<BTreeMap<FieldName, String>, Error> {
    let mut checked = BTreeMap::new();
    for (name, value) in corrections {
        let field = FieldName::ALL
            .into_iter()
            .find(|f| f.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<_> = FieldName::ALL.iter().map(|f| f.as_str()).collect();
                Error::BadInput(format!(
                    "cannot correct unknown field {name:?}; fields are {}",
                    known.join(", ")
                ))
            })?;
        let value = value.trim();
        check_value(field, value, config)?;
        checked.insert(field, value.to_string());
    }
    Ok(checked)
}

/// The day validation is run at to check a value's form; range checks, which depend on it,
/// are ignored.
const FORM_CHECK_DAY: time::Date = time::macros::date!(2000 - 01 - 01);

fn check_value(field: FieldName, value: &str, config: &PipelineConfig) -> Result<(), Error> {
    let expected = match field {
        FieldName::Issuer => "a company name (2 or more letters, at most 200 characters)",
        FieldName::InvoiceNumber => "an invoice number (1 to 64 characters, no spaces)",
        FieldName::InvoiceDate => "an ISO date yyyy-mm-dd",
        FieldName::TotalAmount => "a decimal amount with two decimals, e.g. 1250.00",
        FieldName::Currency => "a three-letter ISO 4217 code the config knows",
    };
    let bad = || {
        Error::BadInput(format!(
            "correction of {field} must be {expected}; the value given is not"
        ))
    };
    if value.is_empty() || value.chars().any(char::is_control) {
        return Err(bad());
    }
    // One definition of well-formed: validation's. A probe extraction holding only this value
    // is validated, and only a `bad_format` reason on this field counts.
    let mut probe = Extraction::default();
    probe.fields.insert(
        field,
        Field {
            value: value.to_string(),
            confidence: 1.0,
            page: 1,
            line: 0,
        },
    );
    let report = validate::validate(&probe, &config.validation, FORM_CHECK_DAY);
    let malformed = match &report.decision {
        Decision::AutoApprove => false,
        Decision::NeedsReview { reasons } | Decision::Invalid { reasons } => reasons
            .iter()
            .any(|r| r.field == Some(field) && r.code == BAD_FORMAT),
    };
    // Any code the config recognises, not only the allowed ones: a recognised but disallowed
    // currency is exactly what a reviewer may approve.
    let unknown_currency = field == FieldName::Currency
        && !config
            .extraction
            .currency_codes
            .iter()
            .chain(&config.validation.allowed_currencies)
            .any(|c| c == value);
    if malformed || unknown_currency {
        return Err(bad());
    }
    Ok(())
}

/// `fields` with `corrections` set by `reviewer` (confidence 1.0).
pub(super) fn overlay(
    fields: &BTreeMap<FieldName, ReviewField>,
    corrections: &BTreeMap<FieldName, String>,
    reviewer: &Reviewer,
) -> BTreeMap<FieldName, ReviewField> {
    let mut out = fields.clone();
    for (name, value) in corrections {
        out.insert(
            *name,
            ReviewField {
                value: value.clone(),
                confidence: 1.0,
                source: FieldSource::Reviewer {
                    id: reviewer.id.clone(),
                },
            },
        );
    }
    out
}
