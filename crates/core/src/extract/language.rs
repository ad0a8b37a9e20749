//! The document's language, from the words it prints (`languages` in the config), and the
//! order its locale reads a numeric date in (`03/04/2026`).

use std::collections::BTreeMap;

use super::currency::mention_counts;
use super::issuer::norm_words;
use super::line::Ctx;
use super::Extractor;
use crate::config::DateOrder;

/// How many of a language's words a document prints, at least, to be taken as written in it.
const MIN_WORDS: usize = 3;
/// How many times as many words as the runner-up language's the language needs: mixed
/// documents (an English invoice quoting a German address) stay the language they print most.
const MARGIN: f64 = 1.5;

impl<'r> Extractor<'r> {
    /// The language whose words the document prints clearly most often, if any: each word of
    /// the text counts for every language that has it.
    pub(super) fn detect_language(&self, pages: &[Vec<Ctx>]) -> Option<&'r str> {
        let mut counts: BTreeMap<&'r str, usize> = BTreeMap::new();
        for word in pages
            .iter()
            .flatten()
            .flat_map(|ctx| norm_words(ctx.text()))
        {
            for (code, words) in &self.languages {
                if words.contains(&word) {
                    *counts.entry(*code).or_default() += 1;
                }
            }
        }
        let mut ranked: Vec<(&'r str, usize)> = counts.into_iter().collect();
        ranked.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        let (best, n) = *ranked.first()?;
        let runner_up = ranked.get(1).map_or(0, |r| r.1);
        (n >= MIN_WORDS && n as f64 >= MARGIN * runner_up as f64).then_some(best)
    }

    /// How the document's locale reads a date readable both ways: its language's order, or
    /// for a language whose locales disagree, the order of the one currency the document's
    /// amounts name (English in dollars: month first).
    pub(super) fn locale_order(&self, pages: &[Vec<Ctx>], language: &str) -> Option<DateOrder> {
        let rules = self.rules.languages.get(language)?;
        if rules.date_order.is_some() {
            return rules.date_order;
        }
        let mentions = self.currency_mentions(pages);
        let counts = mention_counts(&mentions);
        match counts.keys().collect::<Vec<_>>().as_slice() {
            [one] => rules.date_order_by_currency.get(**one).copied(),
            _ => None,
        }
    }
}
