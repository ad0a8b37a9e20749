//! The currency: ISO codes and configured symbols in the text; the field from its label, else
//! the total's line, else the mentions elsewhere in the document (surer when several agree, or
//! one agrees with the issuer's country; the country's among them when they disagree), else the
//! issuer's country's. A symbol of several currencies (`$`) is the one the document names
//! elsewhere, else the country's, else the config's pick.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};

use super::labels::first_preferred;
use super::line::{letter_touches, Ctx, Found};
use super::{
    Extractor, CURRENCY_AGREED, CURRENCY_CONFLICT, CURRENCY_ELSEWHERE, CURRENCY_OF_COUNTRY,
    CURRENCY_SYMBOL, SYMBOL_ALONE, SYMBOL_OF_ANOTHER_COUNTRY,
};
use crate::model::fields::{is_currency_code, Field};

/// A currency code or symbol in a line, as its ISO code.
pub(super) struct CurrencyMatch<'r> {
    pub(super) code: String,
    pub(super) start: usize,
    pub(super) end: usize,
    /// Found as a symbol that names several currencies (`$` of `C$`, `A$`, `NZ$`), the config
    /// picking one: the others it may name; empty for one that names one (`€`).
    others: Vec<&'r str>,
}

impl CurrencyMatch<'_> {
    fn ambiguous(&self) -> bool {
        !self.others.is_empty()
    }

    /// Every currency the match may name: the config's pick, then the others.
    fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.code.as_str()).chain(self.others.iter().copied())
    }
}

impl Extractor<'_> {
    pub(super) fn currency_field(
        &self,
        pages: &[Vec<Ctx>],
        total: Option<&(Field, &Ctx)>,
    ) -> Option<Field> {
        // A symbol that names several currencies (`$`) is the one of them that the document
        // names unambiguously elsewhere (`All prices are in US dollars`), else the one the
        // country the page names pays in (`WA 98109`, `New Zealand`); else the config's pick,
        // for a person. The country's currency is worked out once, and only when a step needs
        // it.
        let of_country = OnceCell::new();
        let country = || of_country.get_or_init(|| self.currency_of_country(pages));
        let country_code = || country().as_ref().map(|f| f.value.as_str());
        // The currencies the document names so that only one is meant (`USD`, `US dollars`).
        let explicit = OnceCell::new();
        let explicit = || explicit.get_or_init(|| self.explicit_currencies(pages));
        let found = |c: &CurrencyMatch| {
            let mut named = c.names().filter(|code| explicit().contains(*code));
            let named = named.next().filter(|_| named.next().is_none());
            let (value, quality) = if !c.ambiguous() {
                (c.code.as_str(), 1.0)
            } else if let Some(code) = named {
                (code, CURRENCY_SYMBOL)
            } else {
                match country_code() {
                    None => (c.code.as_str(), SYMBOL_ALONE),
                    Some(code) if c.names().any(|n| n == code) => (code, CURRENCY_SYMBOL),
                    Some(_) => (c.code.as_str(), SYMBOL_OF_ANOTHER_COUNTRY),
                }
            };
            Found {
                value: value.to_string(),
                start: c.start,
                end: c.end,
                quality,
                normalized: true,
            }
        };
        // 1. An explicit `Currency:` label.
        let same = |ctx: &Ctx, from: usize| {
            let c = self
                .currencies(ctx.text())
                .into_iter()
                .find(|c| c.start >= from)?;
            Some(found(&c))
        };
        let next = |ctx: &Ctx| {
            let text = ctx.text();
            let [c] = self.currencies(text).try_into().ok()?;
            (text.trim().len() == c.end - c.start).then(|| found(&c))
        };
        let labelled = self.labelled(pages, &self.currency, false, same, next);
        if let Some(field) = first_preferred(labelled) {
            return Some(field);
        }

        // 2. A code or symbol on the total's line.
        if let Some((_, ctx)) = total {
            if let Some(c) = self.currencies(ctx.text()).first() {
                return Some(ctx.field(&found(c)));
            }
        }

        // 3. Anywhere: all mentions agreeing, or else the most frequent one, less confidently.
        let mentions = self.currency_mentions(pages);
        let counts = mention_counts(&mentions);
        let Some(top) = counts.values().copied().max() else {
            return country().clone();
        };
        // Mentions that disagree (`Rs -40.00` and a stray `$`): the issuer's country's
        // currency among them, else the most frequent.
        let among = match counts.len() {
            1 => None,
            _ => country_code().filter(|code| counts.contains_key(code)),
        };
        let (ctx, c) = mentions.iter().find(|(_, c)| match among {
            Some(code) => c.code == code,
            None => counts[c.code.as_str()] == top,
        })?;
        let mut f = found(c);
        // Two mentions, or one and the issuer's country's currency, agree.
        let agreed = top >= 2 || country_code() == Some(c.code.as_str());
        f.quality *= match counts.len() {
            1 if agreed => CURRENCY_AGREED,
            1 => CURRENCY_ELSEWHERE,
            _ => CURRENCY_CONFLICT,
        };
        Some(ctx.field(&f))
    }

    /// No currency printed: the one of the issuer's country (its name, phone prefix, tax
    /// number's label, VAT number or ZIP code on page 1), when only one country's currency is
    /// named.
    fn currency_of_country(&self, pages: &[Vec<Ctx>]) -> Option<Field> {
        let mut named: Vec<(&str, &Ctx, Found)> = vec![];
        for ctx in pages.first()? {
            let text = ctx.text();
            let hints = self.countries.iter().filter_map(|(code, hints)| {
                let hit = hints.hits(text).first().copied()?;
                Some((*code, hit.start, hit.end))
            });
            let country_ids = self.country_ids.iter().filter_map(|(code, pattern)| {
                let m = pattern.find(text)?;
                Some((*code, m.start(), m.end()))
            });
            for (code, start, end) in hints.chain(country_ids) {
                let found = Found {
                    value: code.to_string(),
                    start,
                    end,
                    quality: CURRENCY_OF_COUNTRY,
                    normalized: true,
                };
                named.push((code, ctx, found));
            }
        }
        let (code, ctx, found) = named.first()?;
        if named.iter().any(|(c, _, _)| c != code) {
            return None;
        }
        Some(ctx.field(found))
    }

    /// Whether `text` is nothing but a country's name or hint (`New Zealand`).
    pub(super) fn is_country(&self, text: &str) -> bool {
        let text = text.trim();
        self.countries.iter().any(|(_, hints)| {
            hints
                .hits(text)
                .iter()
                .any(|h| h.start == 0 && h.end == text.len())
        })
    }

    /// The currencies the document names by a code or a symbol that names one (`USD`,
    /// `US$`, `US dollars`).
    fn explicit_currencies(&self, pages: &[Vec<Ctx>]) -> BTreeSet<String> {
        self.currency_mentions(pages)
            .into_iter()
            .filter(|(_, c)| !c.ambiguous())
            .map(|(_, c)| c.code)
            .collect()
    }

    /// Every currency code and symbol the document prints, with its line, in reading order.
    pub(super) fn currency_mentions<'c, 'l>(
        &self,
        pages: &'c [Vec<Ctx<'l>>],
    ) -> Vec<(&'c Ctx<'l>, CurrencyMatch<'_>)> {
        let lines = pages.iter().flatten();
        lines
            .flat_map(|ctx| {
                self.currencies(ctx.text())
                    .into_iter()
                    .map(move |c| (ctx, c))
            })
            .collect()
    }

    /// Currency codes (upper case, whole) and symbols in `text`, left to right.
    pub(super) fn currencies(&self, text: &str) -> Vec<CurrencyMatch<'_>> {
        let mut out: Vec<CurrencyMatch> = vec![];
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if !bytes[i].is_ascii_alphabetic() {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            let word = &text[start..i];
            if !letter_touches(text, start, i)
                && is_currency_code(word)
                && self.rules.currency_codes.iter().any(|c| c == word)
            {
                out.push(CurrencyMatch {
                    code: word.to_string(),
                    start,
                    end: i,
                    others: vec![],
                });
            }
        }
        for (symbol, code) in &self.symbols {
            let has_letters = symbol.chars().any(char::is_alphabetic);
            let others: Vec<&str> = self
                .symbols
                .iter()
                .filter(|(other, c)| c != code && other.ends_with(symbol))
                .map(|(_, c)| *c)
                .collect();
            for (start, _) in text.match_indices(symbol) {
                let end = start + symbol.len();
                if has_letters && letter_touches(text, start, end) {
                    continue;
                }
                if out.iter().any(|c| c.start < end && c.end > start) {
                    continue;
                }
                out.push(CurrencyMatch {
                    code: code.to_string(),
                    start,
                    end,
                    others: others.clone(),
                });
            }
        }
        out.sort_by_key(|c| c.start);
        out
    }
}

/// How many times each currency is mentioned.
pub(super) fn mention_counts<'m>(
    mentions: &'m [(&Ctx, CurrencyMatch)],
) -> BTreeMap<&'m str, usize> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, c) in mentions {
        *counts.entry(c.code.as_str()).or_default() += 1;
    }
    counts
}
