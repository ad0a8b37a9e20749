//! The invoice number: the first token with a digit after its label.

use super::labels::first_preferred;
use super::line::{Ctx, Found};
use super::Extractor;
use crate::model::fields::Field;

impl Extractor<'_> {
    pub(super) fn invoice_number(&self, pages: &[Vec<Ctx>]) -> Option<Field> {
        fn token(text: &str, from: usize) -> Option<Found> {
            let rest = &text[from..];
            let word = rest.split_whitespace().next()?;
            let start = from + rest.find(word)?;
            let word = word.trim_end_matches(['.', ',', ';', ':', ')']);
            word.chars().any(|c| c.is_ascii_digit()).then(|| Found {
                value: word.to_string(),
                start,
                end: start + word.len(),
                quality: 1.0,
                normalized: true,
            })
        }
        let same = |ctx: &Ctx, from: usize| token(ctx.text(), from);
        let next = |ctx: &Ctx| {
            let text = ctx.text();
            (text.split_whitespace().count() == 1)
                .then(|| token(text, 0))
                .flatten()
        };
        first_preferred(self.labelled(pages, &self.number, false, same, next))
    }
}
