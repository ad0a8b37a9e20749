//! The synthetic part of the evaluation set (`tests/fixtures/invoices/synthetic/`): invoices
//! rendered from varied layouts and languages with known expected fields, reproducible from a
//! seed (`cargo run -p docket-e2e --example render_invoices`).
//!
//! An invoice is drawn in three steps: its content ([`doc`]: a made-up issuer and customer
//! from [`locales`], numbers, dates, lines, taxes and totals, and the label words, drawn from
//! the language's real invoice vocabulary); its pages ([`layouts`], drawing on
//! [`crate::render`]); and what a careful reader finds on it ([`Fields`], in docket's
//! normalized forms). Each invoice has its own stream of the seed ([`rng::Rng::fork`]), so
//! invoice 7 is the same whether 10 or 48 are drawn. Which locale and layout invoice `i` has
//! is fixed ([`plan`]), so that every seed spreads the same way; the seed varies the rest.
//!
//! Nothing is tuned to docket's extractor (`config/pipeline.json`): the vocabulary is what
//! invoices in each country print, with distractors near each field (due, order and delivery
//! dates near the invoice date; subtotal, taxes and withholding near the total; customer and
//! order numbers near the invoice number; the customer's company in an address block).

pub mod date;
pub mod doc;
pub mod format;
pub mod labels;
pub mod layouts;
pub mod locales;
pub mod parties;
pub mod rng;
#[cfg(test)]
mod tests;

use serde::Serialize;

use crate::render::{document, Page};
use doc::Doc;
pub use layouts::Layout;
pub use locales::Locale;
use rng::Rng;

/// The seed of the committed set.
pub const SEED: u64 = 1;

/// The size of the committed set.
pub const COUNT: usize = 48;

/// One rendered invoice and what is expected of it.
#[derive(Clone, Debug)]
pub struct Invoice {
    /// `syn-007-nl-footer`: position (from 1), locale, layout.
    pub id: String,
    pub seed: u64,
    pub locale: &'static Locale,
    pub layout: Layout,
    pub pages: Vec<Page>,
    /// The expected fields, normalized.
    pub fields: Fields,
    /// Other spellings of the issuer a reader accepts: the name without its legal form.
    pub issuer_also: Vec<String>,
    /// The fields as printed, to find them in the document's text.
    pub shown: Fields,
}

/// The five fields of an invoice; `currency` is `None` in [`Invoice::shown`] when the
/// document only implies it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fields {
    pub issuer: String,
    pub invoice_number: String,
    pub invoice_date: String,
    pub total_amount: String,
    pub currency: Option<String>,
}

impl Invoice {
    /// The invoice as a PDF.
    pub fn pdf(&self) -> Vec<u8> {
        document(&self.pages)
    }

    /// `expected.json`, as tests/fixtures/invoices/README.md defines it (in its key order).
    pub fn expected(&self) -> Expected<'_> {
        Expected {
            source: format!("rendered by tests/invoices (seed {})", self.seed),
            licence: "Apache-2.0",
            language: self.locale.language,
            country: self.locale.country,
            layout: self.layout.name(),
            fields: &self.fields,
            issuer_also: &self.issuer_also,
        }
    }
}

/// An invoice's `expected.json`.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub struct Expected<'a> {
    pub source: String,
    pub licence: &'static str,
    pub language: &'static str,
    pub country: &'static str,
    pub layout: &'static str,
    pub fields: &'a Fields,
    pub issuer_also: &'a [String],
}

/// The locale and layout of invoice `index`, and whether it runs over two pages: locales and
/// layouts cycle (8 and 9, coprime, so pairs vary), and every tenth invoice from the fifth
/// runs over unless it is a receipt.
pub fn plan(index: usize) -> (&'static Locale, Layout, bool) {
    let locale = locales::ALL[index % locales::ALL.len()];
    let layout = Layout::ALL[index % Layout::ALL.len()];
    (locale, layout, index % 10 == 4 && layout.can_run_over())
}

/// The first `count` invoices of `seed`.
pub fn generate(seed: u64, count: usize) -> Vec<Invoice> {
    (0..count).map(|i| invoice(seed, i)).collect()
}

/// Invoice `index` of `seed`.
pub fn invoice(seed: u64, index: usize) -> Invoice {
    let (locale, layout, long) = plan(index);
    let mut rng = Rng::fork(seed, index as u64);
    let items = layout.items(&mut rng, long);
    let doc = Doc::draw(&mut rng, locale, items);
    let pages = layout.render(&doc, &mut rng);
    let total = doc.total();
    let issuer = &doc.issuer;
    Invoice {
        id: format!("syn-{:03}-{}-{}", index + 1, locale.key, layout.name()),
        seed,
        locale,
        layout,
        pages,
        fields: Fields {
            issuer: issuer.name.clone(),
            invoice_number: doc.number.clone(),
            invoice_date: doc.date.iso(),
            total_amount: format!("{}.{:02}", total / 100, total % 100),
            currency: Some(locale.currency.to_string()),
        },
        issuer_also: (issuer.short != issuer.name)
            .then(|| issuer.short.clone())
            .into_iter()
            .collect(),
        shown: Fields {
            issuer: issuer.name.clone(),
            invoice_number: doc.number.clone(),
            invoice_date: doc.date(doc.date),
            total_amount: doc.money(total),
            currency: doc.currency_shown(),
        },
    }
}
