//! The versioned pipeline configuration: size limits, extraction label synonyms and validation
//! thresholds. One JSON document (`config/pipeline.json`) compiled into the binaries; its
//! [`PipelineConfig::fingerprint`] feeds the document run id, so a config change makes new runs.

use std::collections::BTreeMap;

use crate::ids::{canonical_json, sha256_hex};
use crate::model::fields::{is_currency_code, parse_amount_cents, FieldName};
use serde::{Deserialize, Serialize};

/// The whole pipeline configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    /// Human-readable version, e.g. `2026-11-30.1`; bump it with every change.
    pub version: String,
    /// Input limits.
    pub limits: Limits,
    /// How fields are found in the OCR text.
    pub extraction: ExtractionRules,
    /// When an extraction is approved, reviewed or rejected.
    pub validation: ValidationRules,
    /// How the operation ledger holds and gives up operations.
    pub ledger: LedgerRules,
}

/// How the operation ledger holds and gives up operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerRules {
    /// How long a claim is live without progress; after it, a retry takes the operation over
    /// (with a higher fence). Longer than one attempt of a step, shorter than the state
    /// machine's `Transient.InProgress` retry span.
    pub lease_seconds: i64,
    /// How long operation records are kept (the table's TTL); an attempt after it is an
    /// operator's decision (`Conflict.RetentionExpired`).
    pub retention_days: i64,
    /// After this many attempts that could not learn a provider's outcome, the operation is
    /// unresolved and handed to `unresolved_owner`. At most the state machine's
    /// `Ambiguous.OutcomeUnknown` MaxAttempts + 1 (the ASL lint checks it).
    pub max_ambiguous_attempts: usize,
    /// Who owns unresolved operations (a team or on-call rota name).
    pub unresolved_owner: String,
}

impl LedgerRules {
    /// The lease and retention of a claim.
    pub fn lease_rules(&self) -> crate::ledger::LeaseRules {
        crate::ledger::LeaseRules {
            lease_seconds: self.lease_seconds,
            retention_seconds: self.retention_days * 24 * 3600,
        }
    }
}

/// Input limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Larger uploads are rejected before OCR.
    pub max_document_bytes: u64,
    /// Documents with more pages are refused (`Business.TooManyPages`): at ingest when the
    /// bytes tell the count (`crate::pages`), else by the OCR step at the job's first answer,
    /// before any text is fetched. It bounds what the OCR and validate functions hold, and so
    /// their memory: at most [`MAX_PAGES_CEILING`], Textract's own limit for a job.
    pub max_pages: u32,
}

/// The most pages Amazon Textract's asynchronous text detection reads in one document (PDF
/// and TIFF; "Quotas in Amazon Textract", hard limits).
pub const MAX_PAGES_CEILING: u32 = 3_000;

/// How a date like `03/04/2026`, readable both ways, is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DateOrder {
    /// Day first: `03/04/2026` is 3 April.
    Dmy,
    /// Month first: `03/04/2026` is 4 March.
    Mdy,
}

/// The phrases that introduce one field's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelSet {
    /// Label synonyms, most preferred first (case-insensitive, whole words, flexible spacing).
    pub labels: Vec<String>,
    /// Phrases that disqualify a label when they overlap the label or sit between it and the
    /// value, e.g. `Due Date` for the `Date` label or `Sub Total` for `Total`.
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// Label sets per field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldLabels {
    /// Explicit issuer labels (`From:`, `Seller:`); only honoured at the start of a line.
    pub issuer: LabelSet,
    /// Invoice number labels.
    pub invoice_number: LabelSet,
    /// Invoice date labels.
    pub invoice_date: LabelSet,
    /// Total amount labels.
    pub total_amount: LabelSet,
    /// Explicit currency labels (`Currency:`).
    pub currency: LabelSet,
}

impl FieldLabels {
    /// The label set of one field.
    pub fn get(&self, field: FieldName) -> &LabelSet {
        match field {
            FieldName::Issuer => &self.issuer,
            FieldName::InvoiceNumber => &self.invoice_number,
            FieldName::InvoiceDate => &self.invoice_date,
            FieldName::TotalAmount => &self.total_amount,
            FieldName::Currency => &self.currency,
        }
    }
}

/// How fields are found in the OCR text. Generic and label-driven: no per-issuer templates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractionRules {
    /// Label synonyms per field.
    pub labels: FieldLabels,
    /// Currency symbols and their ISO 4217 codes (`"€": "EUR"`).
    pub currency_symbols: BTreeMap<String, String>,
    /// What names the issuer's country, by the currency it pays in: country names, phone
    /// prefixes, tax-number labels (`"INR": ["India", "+91", "GSTIN"]`). The currency of a
    /// document that prints none comes from these, less confidently.
    pub country_currencies: BTreeMap<String, Vec<String>>,
    /// What names a country by its shape, by the currency the country pays in: VAT
    /// identification numbers (`"EUR": ["ATU[0-9]{8}", "DE[0-9]{9}"]`), a US state and ZIP code
    /// (`WA 98109`); regular expressions matched against whole words. A page that prints one
    /// names its country as `country_currencies` does.
    pub country_patterns: BTreeMap<String, Vec<String>>,
    /// ISO 4217 codes recognised when printed in upper case (`EUR`, `CHF`). Wider than the
    /// allowed list on purpose: a recognised but disallowed currency is a review reason, an
    /// unrecognised one would look like a missing currency.
    pub currency_codes: Vec<String>,
    /// Legal-form suffixes (`Ltd`, `GmbH`); compared without dots and case.
    pub company_suffixes: Vec<String>,
    /// Document titles that are never the issuer (`INVOICE`, `Rechnung`).
    pub document_titles: Vec<String>,
    /// Labels of a payment already made (`Deposit`, `Anzahlung`, `Acompte`): with one beside an
    /// amount, the amount left to pay is not the grand total, and a total found under a grand
    /// total's label is left for a person.
    pub payment_labels: Vec<String>,
    /// Labels of a company's capital in its legal statement (`au capital de`, `Stammkapital`):
    /// the words before one in its part of the line name the company (`EDF-SA au capital de
    /// 1 549 961 789,50 €`), as surely as a legal form.
    pub capital_labels: Vec<String>,
    /// Labels of the payee of the bank details (`Account Name`, `Kontoinhaber`, `Titulaire du
    /// compte`): the company named behind one is paid, most likely the seller; a person (`Mr`
    /// first) is not counted.
    pub payee_labels: Vec<String>,
    /// Labels of the recipient block (`Bill To`); that line and the next are never the issuer.
    pub recipient_labels: Vec<String>,
    /// Month names and abbreviations (lower case) and their numbers, for dates like `14 March
    /// 2026`.
    pub month_names: BTreeMap<String, u8>,
    /// How ambiguous numeric dates are read when neither the document's other dates nor its
    /// language's locale tell.
    pub date_order: DateOrder,
    /// The languages a document is recognised in (ISO 639-1 code → its marker words).
    pub languages: BTreeMap<String, Language>,
}

/// What marks a document as written in one language, and how its locale writes dates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Language {
    /// Common words of the language (function words, invoice vocabulary), lower case; a
    /// document is in the language whose words it prints most.
    pub words: Vec<String>,
    /// How every locale of the language reads `03/04/2026`, if they agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_order: Option<DateOrder>,
    /// Where the language's locales disagree (English: month first in the US, day first in the
    /// UK and India): the order by the currency the document's amounts are in.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub date_order_by_currency: BTreeMap<String, DateOrder>,
}

/// When an extraction is approved, reviewed or rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidationRules {
    /// The config version these rules belong to, copied into every report. Not part of the JSON
    /// (the top-level `version` is): [`PipelineConfig::from_json`] fills it in.
    #[serde(skip)]
    pub config_version: String,
    /// Fields that must be present and confident for auto-approval; missing means review.
    pub required: Vec<FieldName>,
    /// Fields without which the document cannot be processed at all; missing means invalid.
    pub required_for_processing: Vec<FieldName>,
    /// A required field below this confidence (0..=1) needs review.
    pub min_confidence: f64,
    /// Largest total accepted without review, a decimal with two decimals (`"1000000.00"`).
    pub max_amount: String,
    /// How far in the future an invoice date may be without review.
    pub max_future_days: i64,
    /// How old an invoice date may be without review.
    pub max_age_days: i64,
    /// ISO 4217 codes accepted without review.
    pub allowed_currencies: Vec<String>,
}

/// Why a pipeline config was rejected.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Not JSON, a missing or unknown key, or a value of the wrong type.
    #[error("pipeline config does not match the schema: {0}")]
    Schema(#[from] serde_json::Error),
    /// Well-formed, but a value is out of range.
    #[error("pipeline config `{field}` is invalid: {problem}")]
    Invalid {
        /// Dotted path of the offending key, e.g. `validation.min_confidence`.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
}

const BUILTIN: &str = include_str!("../../../../config/pipeline.json");

impl PipelineConfig {
    /// The configuration committed in `config/pipeline.json`.
    ///
    /// # Panics
    /// Only if the committed file is broken, which a unit test rules out.
    pub fn builtin() -> Self {
        match Self::from_json(BUILTIN) {
            Ok(config) => config,
            Err(e) => panic!("config/pipeline.json is broken: {e}"),
        }
    }

    /// Parses and checks a configuration. Unknown keys are rejected so a typo cannot silently
    /// fall back to a default.
    pub fn from_json(s: &str) -> Result<Self, ConfigError> {
        let mut config: PipelineConfig = serde_json::from_str(s)?;
        config.check()?;
        config.validation.config_version = config.version.clone();
        Ok(config)
    }

    /// `cfg-` and the first 16 hex digits of the SHA-256 of the canonical JSON (keys sorted,
    /// no whitespace) of the whole configuration. Any change, even of one threshold, changes it.
    pub fn fingerprint(&self) -> String {
        let value = serde_json::to_value(self).expect("a config always serializes to JSON");
        format!(
            "cfg-{}",
            &sha256_hex(canonical_json(&value).as_bytes())[..16]
        )
    }

    fn check(&self) -> Result<(), ConfigError> {
        fn invalid(field: &str, problem: impl Into<String>) -> ConfigError {
            ConfigError::Invalid {
                field: field.to_string(),
                problem: problem.into(),
            }
        }
        fn all_codes(field: &str, codes: &[String]) -> Result<(), ConfigError> {
            match codes.iter().find(|c| !is_currency_code(c)) {
                Some(bad) => Err(invalid(
                    field,
                    format!("{bad:?} is not a three-letter upper-case code"),
                )),
                None => Ok(()),
            }
        }

        if self.version.trim().is_empty() {
            return Err(invalid("version", "must not be empty"));
        }
        if self.limits.max_document_bytes == 0 {
            return Err(invalid("limits.max_document_bytes", "must be above zero"));
        }
        if !(1..=MAX_PAGES_CEILING).contains(&self.limits.max_pages) {
            let why = format!("must be from 1 to {MAX_PAGES_CEILING} (Textract's limit)");
            return Err(invalid("limits.max_pages", why));
        }
        let l = &self.ledger;
        if l.lease_seconds <= 0 {
            return Err(invalid("ledger.lease_seconds", "must be above zero"));
        }
        if l.retention_days <= 0 {
            return Err(invalid("ledger.retention_days", "must be above zero"));
        }
        if l.max_ambiguous_attempts == 0 {
            return Err(invalid(
                "ledger.max_ambiguous_attempts",
                "must be above zero",
            ));
        }
        if l.unresolved_owner.trim().is_empty() {
            return Err(invalid("ledger.unresolved_owner", "must name an owner"));
        }

        let x = &self.extraction;
        for field in FieldName::ALL {
            let set = x.labels.get(field);
            let path = format!("extraction.labels.{field}");
            if set.labels.is_empty() {
                return Err(invalid(&path, "needs at least one label"));
            }
            if set
                .labels
                .iter()
                .chain(&set.exclude)
                .any(|l| l.trim().is_empty())
            {
                return Err(invalid(&path, "labels must not be blank"));
            }
        }
        for (symbol, code) in &x.currency_symbols {
            if symbol.trim().is_empty() || !is_currency_code(code) {
                return Err(invalid(
                    "extraction.currency_symbols",
                    format!("{symbol:?} → {code:?} is not a symbol and an ISO 4217 code"),
                ));
            }
        }
        for (code, hints) in &x.country_currencies {
            if !is_currency_code(code) || hints.iter().any(|h| h.trim().is_empty()) {
                return Err(invalid(
                    "extraction.country_currencies",
                    format!("{code:?} must be an ISO 4217 code with non-blank hints"),
                ));
            }
        }
        for (code, patterns) in &x.country_patterns {
            let bad = patterns
                .iter()
                .find(|p| p.trim().is_empty() || regex::Regex::new(p).is_err());
            if !is_currency_code(code) || bad.is_some() {
                return Err(invalid(
                    "extraction.country_patterns",
                    format!("{code:?} must be an ISO 4217 code with valid patterns ({bad:?})"),
                ));
            }
        }
        all_codes("extraction.currency_codes", &x.currency_codes)?;
        if let Some((name, n)) = x.month_names.iter().find(|(_, n)| !(1..=12).contains(*n)) {
            return Err(invalid(
                "extraction.month_names",
                format!("{name:?} maps to {n}, not 1..=12"),
            ));
        }
        if let Some(name) = x.month_names.keys().find(|k| k.to_lowercase() != **k) {
            return Err(invalid(
                "extraction.month_names",
                format!("{name:?} must be lower case"),
            ));
        }

        for (code, language) in &x.languages {
            let two_letters = code.len() == 2 && code.chars().all(|c| c.is_ascii_lowercase());
            if !two_letters
                || language.words.is_empty()
                || language
                    .words
                    .iter()
                    .any(|w| w.trim().is_empty() || w.to_lowercase() != *w)
                || !language
                    .date_order_by_currency
                    .keys()
                    .all(|c| is_currency_code(c))
            {
                return Err(invalid(
                    "extraction.languages",
                    format!(
                        "{code:?} must be an ISO 639-1 code with lower-case words \
                         and ISO 4217 codes"
                    ),
                ));
            }
        }

        let v = &self.validation;
        if !(0.0..=1.0).contains(&v.min_confidence) {
            return Err(invalid(
                "validation.min_confidence",
                format!("{} is not within 0..=1", v.min_confidence),
            ));
        }
        match parse_amount_cents(&v.max_amount) {
            Some(cents) if cents > 0 => {}
            _ => {
                return Err(invalid(
                    "validation.max_amount",
                    format!(
                        "{:?} is not a positive decimal with two decimals",
                        v.max_amount
                    ),
                ))
            }
        }
        if v.max_future_days < 0 {
            return Err(invalid(
                "validation.max_future_days",
                "must not be negative",
            ));
        }
        if v.max_age_days <= 0 {
            return Err(invalid("validation.max_age_days", "must be above zero"));
        }
        if v.allowed_currencies.is_empty() {
            return Err(invalid(
                "validation.allowed_currencies",
                "needs at least one code",
            ));
        }
        all_codes("validation.allowed_currencies", &v.allowed_currencies)?;
        if let Some(f) = v
            .required_for_processing
            .iter()
            .find(|f| !v.required.contains(f))
        {
            return Err(invalid(
                "validation.required_for_processing",
                format!("{f} is not listed in validation.required"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
