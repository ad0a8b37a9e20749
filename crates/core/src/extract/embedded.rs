//! The page and its embedded e-invoice together ([`with_embedded`]): a value the attachment
//! states counts only where the page confirms it, since a PDF's attachment can say something
//! else than the page a person reads (by mistake, or to have a payment made that nobody saw).
//!
//! For each field the attachment states:
//! - extraction read the same value from the page: the attachment's value, at
//!   [`EMBEDDED_ON_PAGE`] (two readings agree, one exact);
//! - extraction read another value at or above the review threshold: the page's value stays
//!   (but of two invoice numbers the page reads, the one the attachment states), its confidence
//!   down to [`DISPUTED`], and validation names the field `embedded_mismatch` for a person;
//! - extraction read another value in doubt: the attachment's value, at
//!   [`EMBEDDED_NOT_ON_PAGE`], below the threshold, for a person to confirm (but an issuer's name
//!   over two lines, the page reading one of them, is one name with the attachment's). That the
//!   page prints the attachment's value somewhere else is no evidence against the page's own
//!   reading of the field (an attachment naming the buyer printed in the address block, or a
//!   line's amount as the total);
//! - extraction found nothing: the attachment's value, at [`EMBEDDED_ON_PAGE`] when a line of
//!   the page prints it, else at [`EMBEDDED_NOT_ON_PAGE`].
//!
//! "Printed on the page" is the extractor's own reading of a line: a date or an amount it reads
//! there (a date also in ISO order without separators, `20260815`), a currency's code or
//! symbol, an invoice number as a line's whole words, an issuer's name within a line (letters
//! and digits, without case or accents).

use super::line::Ctx;
use super::{prepared, Extractor};
use crate::config::ExtractionRules;
use crate::model::embedded::{letters_and_digits, same, EmbeddedInvoice};
use crate::model::fields::{Extraction, Field, FieldName};
use crate::ocr::OcrDocument;
use unicode_normalization::UnicodeNormalization;

/// A value the attachment states and the page shows: read exactly, and confirmed.
pub const EMBEDDED_ON_PAGE: f64 = 0.99;
/// A value the attachment states that the page does not show: a person looks.
pub const EMBEDDED_NOT_ON_PAGE: f64 = 0.6;
/// The most a reading of the page keeps when the attachment states another value: a confident
/// reading that an exact statement contradicts is as likely wrong as a doubtful one (on the
/// labelled invoices most were the page's misreadings).
pub const DISPUTED: f64 = 0.6;
/// The shortest issuer name or invoice number (its letters and digits) searched for on the
/// page: a shorter one is printed in too many other places.
const MIN_KEY: usize = 3;

/// Extracts `doc`'s fields as [`super::extract`] does (one extractor and one preparation of the
/// lines for both), then takes each field an embedded `invoice` states where the page confirms it
/// (the module's rules); `min_confidence` is the review threshold. Without an embedded invoice:
/// [`super::extract`]'s fields.
pub fn with_embedded(
    doc: &OcrDocument,
    rules: &ExtractionRules,
    invoice: Option<&EmbeddedInvoice>,
    min_confidence: f64,
) -> Extraction {
    let (extractor, pages) = prepared(doc, rules);
    let mut extraction = extractor.run(&pages);
    let Some(invoice) = invoice else {
        return extraction;
    };
    for (&name, stated) in &invoice.fields {
        let read = extraction.fields.get(&name).cloned();
        let field = match read {
            Some(read) if agree(rules, name, &read.value, stated) => Field {
                value: spelling(name, &read.value, stated),
                confidence: read.confidence.max(EMBEDDED_ON_PAGE),
                ..read
            },
            Some(read) if read.confidence >= min_confidence => {
                extraction.disputed.insert(name);
                let read = extractor.reading_of(&pages, name, stated).unwrap_or(read);
                Field {
                    confidence: read.confidence.min(DISPUTED),
                    ..read
                }
            }
            Some(read) if name == FieldName::Issuer && extractor.spans(&pages, &read, stated) => {
                Field {
                    value: stated.clone(),
                    confidence: read.confidence.max(EMBEDDED_ON_PAGE),
                    ..read
                }
            }
            Some(read) => Field {
                value: stated.clone(),
                confidence: EMBEDDED_NOT_ON_PAGE,
                ..read
            },
            None => match extractor.shown(&pages, name, stated) {
                Some((page, line)) => Field {
                    value: stated.clone(),
                    confidence: EMBEDDED_ON_PAGE,
                    page,
                    line,
                },
                None => Field {
                    value: stated.clone(),
                    confidence: EMBEDDED_NOT_ON_PAGE,
                    page: 0,
                    line: 0,
                },
            },
        };
        extraction.fields.insert(name, field);
    }
    extraction.embedded = Some(invoice.clone());
    extraction
}

/// Whether the page's `read` and the attachment's `stated` are one value: [`same`], or for an
/// issuer also one name with a legal form the config lists and one without it (`Au bon moulin
/// SARL`, `Au bon moulin`; `SA IFR QUALIAC`, `IFR QUALIAC`).
fn agree(rules: &ExtractionRules, field: FieldName, read: &str, stated: &str) -> bool {
    if same(field, read, stated) {
        return true;
    }
    if field != FieldName::Issuer {
        return false;
    }
    let (a, b) = (letters_and_digits(read), letters_and_digits(stated));
    let (long, short) = if a.len() > b.len() { (a, b) } else { (b, a) };
    !short.is_empty()
        && rules.company_suffixes.iter().any(|form| {
            let form = letters_and_digits(form);
            !form.is_empty()
                && (long == format!("{short}{form}") || long == format!("{form}{short}"))
        })
}

/// The spelling kept of two agreeing values: the attachment's, read exactly, but for an issuer
/// the longer one (the name with its legal form, as a reader finds it on the page).
fn spelling(field: FieldName, read: &str, stated: &str) -> String {
    let longer = letters_and_digits(read).len() > letters_and_digits(stated).len();
    if field == FieldName::Issuer && longer {
        read.to_string()
    } else {
        stated.to_string()
    }
}

impl Extractor<'_> {
    /// The page and line that print `value` of `field`; an issuer's name may run over two
    /// lines (`MVM Musterhafter Versicherungsverein` over `Musterstadt a.G.`): the first's.
    fn shown(&self, pages: &[Vec<Ctx>], field: FieldName, value: &str) -> Option<(u32, usize)> {
        pages.iter().find_map(|page| {
            page.iter().enumerate().find_map(|(i, at)| {
                let two = page
                    .get(i + 1)
                    .filter(|_| field == FieldName::Issuer)
                    .is_some_and(|next| spells(&format!("{} {}", at.text(), next.text()), value));
                (self.shows(at, field, value) || two).then(|| (at.page(), at.index))
            })
        })
    }

    /// Whether the name `stated` is the page's reading `read` of the issuer and the line before
    /// or after it (a name over two lines, the page reading one of them: `Musterstadt a.G.`
    /// under `MVM Musterhafter Versicherungsverein`).
    fn spans(&self, pages: &[Vec<Ctx>], read: &Field, stated: &str) -> bool {
        let Some(page) = pages
            .iter()
            .find(|p| p.first().is_some_and(|c| c.page() == read.page))
        else {
            return false;
        };
        let Some(at) = page.iter().position(|c| c.index == read.line) else {
            return false;
        };
        let within = letters_and_digits(stated).contains(&letters_and_digits(&read.value));
        let joined = |a: &Ctx, b: &Ctx| spells(&format!("{} {}", a.text(), b.text()), stated);
        within
            && (page.get(at + 1).is_some_and(|next| joined(&page[at], next))
                || at
                    .checked_sub(1)
                    .is_some_and(|before| joined(&page[before], &page[at])))
    }

    /// The page's other reading of an invoice number as `stated` when the page reads two
    /// (after its title, and behind a note's label): the attachment sides with that one.
    fn reading_of(&self, pages: &[Vec<Ctx>], field: FieldName, stated: &str) -> Option<Field> {
        if field != FieldName::InvoiceNumber {
            return None;
        }
        self.number_readings(pages)
            .into_iter()
            .find(|read| same(field, &read.value, stated))
    }

    /// Whether the line prints `value` of `field`.
    fn shows(&self, at: &Ctx, field: FieldName, value: &str) -> bool {
        let text = at.repaired.as_str();
        match field {
            // Also in ISO order without separators (`20260815`, as a tool prints what the
            // attachment holds), which the page's reading of dates leaves alone.
            FieldName::InvoiceDate => {
                self.dates(text)
                    .iter()
                    .any(|d| d.iso().is_some_and(|iso| iso == value))
                    || spells(text, value)
            }
            FieldName::TotalAmount => self
                .amounts(text)
                .iter()
                .any(|a| a.normalized.as_deref() == Some(value)),
            FieldName::Currency => self.currencies(at.text()).iter().any(|c| c.code == value),
            FieldName::InvoiceNumber | FieldName::Issuer => spells(at.text(), value),
        }
    }
}

/// Whether `text` spells `value` as whole words: its letters and digits in order, without case
/// or accents, with only spaces and punctuation between them (`RE 2014/03` spells `RE-2014-03`,
/// `Nr.2014-03` spells `2014-03`, `12014-03` does not).
pub(super) fn spells(text: &str, value: &str) -> bool {
    let key: Vec<char> = letters_and_digits(value).chars().collect();
    if key.len() < MIN_KEY {
        return false;
    }
    let chars: Vec<char> = text
        .nfd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect();
    (0..chars.len()).any(|start| {
        if start > 0 && chars[start - 1].is_alphanumeric() {
            return false;
        }
        let mut matched = 0;
        for &c in &chars[start..] {
            if matched == key.len() {
                return !c.is_alphanumeric();
            }
            if c == key[matched] {
                matched += 1;
            } else if c.is_alphanumeric() || matched == 0 {
                return false;
            }
        }
        matched == key.len()
    })
}
