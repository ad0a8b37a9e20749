//! Invoice field extraction from the normalized OCR: generic and label-driven, no per-issuer
//! templates. A field's value follows one of its configured labels on the same line, or fills
//! the next line on its own; labels match without case or accents. Without a label: the issuer
//! from the evidence on the first page (`letterhead.rs`: sender lines, legal forms, second
//! mentions, domains; never the addressee block), the number after the document's title, the
//! currency from the total line or the document.
//!
//! Every field carries a confidence: the lowest OCR confidence of the words its value came from,
//! times a match-quality factor below 1 when the value was found by a heuristic, read from an
//! ambiguous date, or repaired from OCR look-alikes (`2O26` → `2026`). Validation turns low
//! confidence into a human review, so the factors decide what a person has to look at.

mod amounts;
mod blocks;
mod confirm;
mod currency;
mod dates;
mod domains;
mod embedded;
mod in_words;
mod issuer;
mod labels;
mod language;
mod layout;
mod letterhead;
mod line;
mod mentions;
mod number;

use std::collections::{BTreeMap, HashSet};

use regex::Regex;

use crate::config::{DateOrder, ExtractionRules};
use crate::model::fields::{Extraction, FieldName};
use crate::ocr::OcrDocument;
use issuer::norm_words;
use labels::Labels;

pub use embedded::{with_embedded, DISPUTED, EMBEDDED_NOT_ON_PAGE, EMBEDDED_ON_PAGE};

/// Extracts the invoice fields of `doc` following `rules`.
pub fn extract(doc: &OcrDocument, rules: &ExtractionRules) -> Extraction {
    let (extractor, pages) = prepared(doc, rules);
    extractor.run(&pages)
}

/// The extractor for `doc` (its dates' order and its language read from its lines) and its
/// lines, prepared for matching.
fn prepared<'r, 'd>(
    doc: &'d OcrDocument,
    rules: &'r ExtractionRules,
) -> (Extractor<'r>, Vec<Vec<line::Ctx<'d>>>) {
    let mut extractor = Extractor::new(rules);
    let pages = line::pages(doc);
    extractor.seen_order = extractor.date_order_seen(&pages);
    extractor.language = extractor.detect_language(&pages);
    extractor.locale_order = extractor
        .language
        .and_then(|language| extractor.locale_order(&pages, language));
    (extractor, pages)
}

// Match-quality factors. A field at OCR confidence ~0.99 stays above the default review threshold
// (0.80) only with a factor above ~0.81: the factors below that line mean "a person should look".
/// The value sits alone on the line after its label: a normal layout, slightly less certain.
const NEXT_LINE: f64 = 0.95;
/// The value stands beside its label on the same row, in a line of its own (a column of values).
const BESIDE_LABEL: f64 = 0.95;
/// The value stands below its label in the label's column (a table's header over its row).
const BELOW_LABEL: f64 = 0.9;
/// Several rows under a label show different values and none sums the others: the first one.
const ROWS_UNDER_LABEL: f64 = 0.75;
/// Numeric date readable both ways (`03/04/2026`), read with the configured order.
const AMBIGUOUS_DATE: f64 = 0.7;
/// Numeric date readable both ways, read in the order the document's other dates show
/// (`25/03/2026` elsewhere: day first).
const ORDER_SEEN: f64 = 0.95;
/// Two-digit year (`14.03.26`), read as 20yy.
const TWO_DIGIT_YEAR: f64 = 0.9;
/// A month's name misspelt by one letter (`Januray`), with the date's full year.
const MISSPELT_MONTH: f64 = 0.7;
/// Digits repaired from OCR look-alikes (`O`→`0`, `l`/`I`→`1`).
const OCR_REPAIRED: f64 = 0.6;
/// A word of the value shares its room on the page with the word beside it: the OCR split one
/// printed token in two or read its glyphs twice, and the value may lack part of it.
const OVERLAPPING_WORDS: f64 = 0.6;
/// Currency from a symbol that names several currencies (`$`: also the end of `C$` and `A$`):
/// the one the document names elsewhere (`US dollars`), or the one the country the page names
/// pays in (`WA 98109`, `New Zealand`).
const CURRENCY_SYMBOL: f64 = 0.95;
/// A symbol that names several currencies (`$`) in a document that names no country: the
/// config's pick is a guess (on real invoices of several countries a lone `$` was the US
/// dollar about half the time).
const SYMBOL_ALONE: f64 = 0.7;
/// A symbol that names several currencies (`$`) in a document that names a country paying in
/// none of them (`Schweiz`): the config's pick is a guess.
const SYMBOL_OF_ANOTHER_COUNTRY: f64 = 0.5;
/// Currency found elsewhere in the document, not on the total line; its one mention.
const CURRENCY_ELSEWHERE: f64 = 0.85;
/// Currency found elsewhere in the document, not on the total line; several mentions, all agree,
/// or its one mention is the currency of the country the page names (`€` and `Wien`).
const CURRENCY_AGREED: f64 = 0.95;
/// No currency printed: the one of the only country page 1 names (`Deutschland`, `+44`).
const CURRENCY_OF_COUNTRY: f64 = 0.85;
/// An invoice number behind a generic label (`Number`, `Nummer`) rather than an invoice's.
const GENERIC_NUMBER: f64 = 0.8;
/// Invoice numbers behind specific labels disagree: the first of the most preferred label.
const NUMBER_CONTESTED: f64 = 0.6;
/// Currency found elsewhere and the mentions disagree: the most frequent one.
const CURRENCY_CONFLICT: f64 = 0.5;
/// Issuer taken from the letterhead, with a legal-form suffix (`Ltd`, `GmbH`).
const ISSUER_WITH_SUFFIX: f64 = 0.9;
/// A legal form's word in an issuer's name that the config lists (`B.V.`, `GmbH`): its word
/// counts as read at least this well.
const LEGAL_FORM_READING: f64 = 0.95;
/// Issuer taken from the letterhead without a legal-form suffix.
const ISSUER_GUESSED: f64 = 0.6;
/// Issuer found without a label whose evidence does not clearly beat another name's.
const ISSUER_CONTESTED: f64 = 0.6;
/// Several amounts after the total's label that do not add up: the last one is taken.
const AMOUNT_IN_ROW: f64 = 0.75;
/// Invoice number after the document's title rather than a label (`Invoice 103767`).
const TITLE_NUMBER: f64 = 0.9;
/// Invoice number below a table's column that a document title names alone (`Factuur`), a
/// factor on the title number's.
const TITLE_COLUMN: f64 = 0.85;
/// Invoice number of capital letters alone behind its label (`Rechnungsnummer: NFCZMQ`).
const LETTERS_ONLY: f64 = 0.7;
/// Invoice number on a line of its own behind a number marker only (`N° 2023-6013`).
const MARKER_NUMBER: f64 = 0.75;
/// Invoice date behind a generic label (`Date`) while page 1 shows another date.
const DATE_CONTESTED: f64 = 0.7;
/// Invoice date without a label, on the invoice number's line (`Rechnung Nr. 4711 vom 19.05.2014`).
const DATE_WITH_NUMBER: f64 = 0.9;
/// A total with a payment printed after it (a deposit, an advance): the amount left to pay
/// may be another.
const PAID_AFTER_TOTAL: f64 = 0.7;
/// Rows of one page behind the same total label name different amounts (the items' `Total`
/// and a tax table's): the last one.
const TOTAL_CONTESTED: f64 = 0.6;
/// A total that the document's other numbers confirm (its net at a printed tax rate, or the
/// amount in words): its words count as read at least this well.
const CONFIRMED_READING: f64 = 0.95;
/// A total below zero: a credit note's, or a payment's sign (`-2,375.80`) read with the amount.
const NEGATIVE_TOTAL: f64 = 0.5;
/// Invoice date without a label, from a letter's dateline (`Berlin, 19.05.2014`).
const DATELINE: f64 = 0.9;
/// Invoice date taken from an unlabelled date on page 1.
const DATE_UNLABELLED: f64 = 0.6;

/// The rules compiled once per document: label sets as phrases, symbols sorted, suffixes and
/// titles as normalized words. Each field's search is an `impl` block in the field's module.
struct Extractor<'r> {
    rules: &'r ExtractionRules,
    issuer: Labels,
    number: Labels,
    date: Labels,
    total: Labels,
    currency: Labels,
    recipients: Labels,
    /// Labels of the bank details' payee (`payee_labels`).
    payees: Labels,
    /// Labels of a company's capital (`capital_labels`).
    capitals: Labels,
    /// Labels of a payment already made (`payment_labels`).
    payments: Labels,
    /// Each currency's country hints (`country_currencies`).
    countries: Vec<(&'r str, Labels)>,
    /// Each currency's countries' VAT identification numbers, one whole-word pattern
    /// (`country_patterns`).
    country_ids: Vec<(&'r str, Regex)>,
    /// Currency symbols, longest first so `US$` wins over `$`.
    symbols: Vec<(&'r str, &'r str)>,
    suffixes: Vec<Vec<String>>,
    titles: Vec<Vec<String>>,
    /// Month names without case or accents (`marz` of an OCR's `Marz` is `märz`).
    months: BTreeMap<String, u32>,
    /// The day/month order the document's unambiguous numeric dates show, if they agree.
    seen_order: Option<DateOrder>,
    /// Each language's marker words, without case or accents (`languages`).
    languages: Vec<(&'r str, HashSet<String>)>,
    /// The language the document is written in, if its words tell.
    language: Option<&'r str>,
    /// The day/month order of the document's locale, if its language (and currency) tell.
    locale_order: Option<DateOrder>,
}

impl<'r> Extractor<'r> {
    fn new(rules: &'r ExtractionRules) -> Self {
        let mut symbols: Vec<(&str, &str)> = rules
            .currency_symbols
            .iter()
            .map(|(s, c)| (s.as_str(), c.as_str()))
            .collect();
        symbols.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        Extractor {
            rules,
            issuer: Labels::new(&rules.labels.issuer),
            number: Labels::new(&rules.labels.invoice_number),
            date: Labels::new(&rules.labels.invoice_date),
            total: Labels::new(&rules.labels.total_amount),
            currency: Labels::new(&rules.labels.currency),
            recipients: Labels::from_phrases(&rules.recipient_labels),
            payments: Labels::from_phrases(&rules.payment_labels),
            payees: Labels::from_phrases(&rules.payee_labels),
            capitals: Labels::from_phrases(&rules.capital_labels),
            countries: rules
                .country_currencies
                .iter()
                .map(|(code, hints)| (code.as_str(), Labels::from_phrases(hints)))
                .collect(),
            country_ids: rules
                .country_patterns
                .iter()
                .filter_map(|(code, patterns)| {
                    // Validated with the config: a pattern that does not compile is left out.
                    let one = format!(r"\b(?:{})\b", patterns.join("|"));
                    Some((code.as_str(), Regex::new(&one).ok()?))
                })
                .collect(),
            symbols,
            suffixes: rules
                .company_suffixes
                .iter()
                .map(|s| norm_words(s))
                .collect(),
            titles: rules
                .document_titles
                .iter()
                .map(|s| norm_words(s))
                .collect(),
            months: rules
                .month_names
                .iter()
                .map(|(name, m)| (norm_words(name).concat(), u32::from(*m)))
                .collect(),
            seen_order: None,
            languages: rules
                .languages
                .iter()
                .map(|(code, l)| {
                    let words = l.words.iter().map(|w| norm_words(w).concat()).collect();
                    (code.as_str(), words)
                })
                .collect(),
            language: None,
            locale_order: None,
        }
    }

    fn run(&self, pages: &[Vec<line::Ctx>]) -> Extraction {
        let mut fields = BTreeMap::new();
        if let Some(f) = self.issuer(pages) {
            fields.insert(FieldName::Issuer, f);
        }
        let number = self.invoice_number(pages);
        if let Some(f) = self.invoice_date(pages, number.as_ref()) {
            fields.insert(FieldName::InvoiceDate, f);
        }
        if let Some(f) = number {
            fields.insert(FieldName::InvoiceNumber, f);
        }
        let total = self.total(pages);
        if let Some(f) = self.currency_field(pages, total.as_ref()) {
            fields.insert(FieldName::Currency, f);
        }
        if let Some((f, _)) = total {
            fields.insert(FieldName::TotalAmount, f);
        }
        Extraction {
            fields,
            language: self.language.map(String::from),
            embedded: None,
            disputed: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests;
