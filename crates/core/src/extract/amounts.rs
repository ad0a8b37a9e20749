//! Amounts: printed numbers normalized to a plain decimal (`1.234,50` → `1234.50`), and the
//! total among them.

use std::sync::OnceLock;

use regex::Regex;

use super::labels::Candidate;
use super::line::{Ctx, Found};
use super::{
    Extractor, AMOUNT_IN_ROW, CONFIRMED_READING, NEGATIVE_TOTAL, PAID_AFTER_TOTAL, TOTAL_CONTESTED,
};
use crate::model::fields::{parse_amount_cents, Field};

/// A printed number in a line.
pub(super) struct AmountMatch {
    start: usize,
    end: usize,
    /// `None` when its grouping or decimals make no sense.
    pub(super) normalized: Option<String>,
    /// Money-shaped: normalized, with two decimals or a currency next to it.
    pub(super) likely: bool,
}

impl AmountMatch {
    /// Where the number ends in its text.
    pub(super) fn end(&self) -> usize {
        self.end
    }
}

fn amount_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // Indian lakh grouping first (`1,23,456.00`), then groups of three, then plain.
        Regex::new(r"[-−]?(?:[1-9][0-9]?(?:,[0-9]{2})+,[0-9]{3}(?:\.[0-9]{1,2})?|[1-9][0-9]{0,2}(?:[,.'’\x{a0}\x{202f} ][0-9]{3})+(?:[.,][0-9]+)?|[0-9]+(?:[.,][0-9]+)?)")
            .expect("static regex")
    })
}

/// Indian grouping: lakhs and crores in pairs of digits before the last three (`1,23,456.50`).
fn lakh_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^[1-9][0-9]?(?:,[0-9]{2})+,[0-9]{3}(?:\.[0-9]{1,2})?$").expect("static regex")
    })
}

/// Normalizes a printed amount to a plain decimal with two decimals: `1,234.50`, `1.234,50`,
/// `1'234.50`, `1 234,50`, `1234,5` → `1234.50`; lakhs `1,23,456.50` → `123456.50`. A single
/// separator followed by exactly three digits is a thousands separator (`1,234` → `1234.00`).
/// `None` when the grouping or decimals make no sense.
pub(super) fn normalize_amount(raw: &str) -> Option<String> {
    let (negative, body) = match raw.strip_prefix(['-', '−']) {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
    if lakh_regex().is_match(body) {
        let plain = body.replace(',', "");
        let sign = if negative { "-" } else { "" };
        return normalize_amount(&plain).map(|n| format!("{sign}{n}"));
    }
    let body: String = body
        .chars()
        .filter(|c| !matches!(c, '\'' | '’' | ' ' | '\u{a0}' | '\u{202f}'))
        .collect();
    let grouped = |s: &str, sep: char| {
        let mut parts = s.split(sep);
        let first = parts.next().unwrap_or("");
        let rest: Vec<&str> = parts.collect();
        (1..=3).contains(&first.len())
            && (rest.is_empty() || !first.starts_with('0'))
            && rest.iter().all(|p| p.len() == 3)
    };
    let (int, frac): (String, &str) = match body.rfind(['.', ',']) {
        None => (body.clone(), ""),
        Some(i) => {
            let sep = if body.as_bytes()[i] == b'.' { '.' } else { ',' };
            let other = if sep == '.' { ',' } else { '.' };
            let after = &body[i + 1..];
            let same = body.matches(sep).count();
            if body.contains(other) {
                // Both kinds: the last one is the decimal separator.
                let int = &body[..i];
                if same != 1 || !(1..=2).contains(&after.len()) || !grouped(int, other) {
                    return None;
                }
                (int.replace(other, ""), after)
            } else if same > 1 || after.len() == 3 {
                if !grouped(&body, sep) {
                    return None;
                }
                (body.replace(sep, ""), "")
            } else if (1..=2).contains(&after.len()) {
                (body[..i].to_string(), after)
            } else {
                return None;
            }
        }
    };
    if int.is_empty()
        || int.len() > 15
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let frac = format!("{frac:0<2}");
    let sign = if negative { "-" } else { "" };
    Some(format!("{sign}{int}.{frac}"))
}

/// Whether the amount sits inside parentheses (`(incl. 19.00 VAT)`): an aside, not the value.
fn parenthesized(text: &str, m: &AmountMatch) -> bool {
    let open = text[..m.start].rfind('(');
    let close = text[..m.start].rfind(')');
    open.is_some_and(|o| close.is_none_or(|c| c < o)) && text[m.end..].contains(')')
}

/// Whether the money amounts of a row name one value: all the same, or the last the sum of two
/// before it (net and tax, then gross).
fn adds_up(money: &[&AmountMatch]) -> bool {
    let cents: Vec<Option<i128>> = money
        .iter()
        .map(|m| m.normalized.as_deref().and_then(parse_amount_cents))
        .collect();
    let Some(Some(last)) = cents.last().copied() else {
        return false;
    };
    let before: Vec<i128> = cents[..cents.len() - 1].iter().flatten().copied().collect();
    before.iter().all(|c| *c == last)
        || before
            .iter()
            .enumerate()
            .any(|(i, a)| before[i + 1..].iter().any(|b| a + b == last))
}

/// Whether a total's candidate is one amount other than zero on its label's own line (not a
/// row that does not add up, not a value below or after the label).
fn names_one_amount(c: &Candidate, at: &Ctx) -> bool {
    at.order == c.order
        && c.quality > AMOUNT_IN_ROW
        && parse_amount_cents(&c.field.value).is_some_and(|cents| cents != 0)
}

impl Extractor<'_> {
    /// The total and the line it was found on (for the currency).
    pub(super) fn total<'p>(&self, pages: &'p [Vec<Ctx<'p>>]) -> Option<(Field, &'p Ctx<'p>)> {
        let found = |m: &AmountMatch, text: &str| Found {
            value: m
                .normalized
                .clone()
                .unwrap_or_else(|| text[m.start..m.end].to_string()),
            start: m.start,
            end: m.end,
            quality: 1.0,
            normalized: m.normalized.is_some(),
        };
        // Amounts the document's other numbers confirm as gross totals (`confirm.rs`).
        let confirmed = self.confirmed_totals(pages);
        let is_confirmed =
            |value: &str| parse_amount_cents(value).is_some_and(|c| confirmed.contains(&c));
        let same = |ctx: &Ctx, from: usize| {
            let text = &ctx.repaired;
            let amounts: Vec<AmountMatch> = self
                .amounts(text)
                .into_iter()
                .filter(|m| m.start >= from && !parenthesized(text, m))
                .collect();
            let money: Vec<&AmountMatch> = amounts.iter().filter(|m| m.likely).collect();
            if let Some(last) = money.last() {
                // A row of amounts (`Total 278.61 40.39 319.00`: net, tax, gross): the last
                // one, confidently when it adds up or is confirmed, else a person should look.
                let mut f = found(last, text);
                if !adds_up(&money) && !is_confirmed(&f.value) {
                    f.quality *= AMOUNT_IN_ROW;
                }
                return Some(f);
            }
            let best = amounts
                .iter()
                .find(|m| m.normalized.is_some())
                .or_else(|| amounts.first())?;
            Some(found(best, text))
        };
        let next = |ctx: &Ctx| {
            // Only a line that holds nothing but the amount and a currency.
            let amounts = self.amounts(&ctx.repaired);
            let [m] = amounts.as_slice() else {
                return None;
            };
            let mut rest = format!("{}{}", &ctx.repaired[..m.start], &ctx.repaired[m.end..]);
            for c in self.currencies(&rest).iter().rev() {
                rest.replace_range(c.start..c.end, "");
            }
            rest.chars()
                .all(|c| c.is_whitespace() || matches!(c, ':' | '(' | ')'))
                .then(|| found(m, &ctx.repaired))
        };
        // Parsed values first, then amounts other than zero (a settled invoice prints `Balance
        // 0.00`, and a breakdown `Total Other 0.00`, beside the amount it was for), then amounts
        // above zero (a statement's `Totaal jouw opbrengsten -50.476,85` beside its costs), then the
        // preferred label, then rows that name one value over rows that do not add up (`Total
        // Rooms 1,302.75 91.18`), then an amount the page confirms (`confirm.rs`), then the last
        // occurrence: totals close a document, so a later `Total` wins over an earlier one.
        let candidates = self.labelled(pages, &self.total, false, same, next);
        // The rows that name one amount other than zero beside their label: their label, page
        // and amount.
        let rows: Vec<(usize, u32, String)> = candidates
            .iter()
            .filter(|(c, at)| names_one_amount(c, at))
            .map(|(c, _)| (c.priority, c.field.page, c.field.value.clone()))
            .collect();
        let (mut best, at) = candidates.into_iter().min_by_key(|(c, _)| {
            let cents = parse_amount_cents(&c.field.value);
            let zero = cents == Some(0);
            let negative = cents.is_some_and(|c| c < 0);
            let doubtful = c.quality <= AMOUNT_IN_ROW;
            let unconfirmed = !is_confirmed(&c.field.value);
            let late = std::cmp::Reverse(c.order);
            (
                !c.normalized,
                zero,
                negative,
                c.priority,
                doubtful,
                unconfirmed,
                late,
            )
        })?;
        // Confirmed by the document's other numbers: its digits are read right.
        if is_confirmed(&best.field.value) {
            let printed = self
                .amounts(&at.repaired)
                .into_iter()
                .rev()
                .find(|m| m.normalized.as_deref() == Some(best.field.value.as_str()));
            if let Some(m) = printed {
                let f = Found {
                    quality: best.quality,
                    ..found(&m, &at.repaired)
                };
                best.field = at.field_read_elsewhere(&f, &|_| CONFIRMED_READING);
            }
        }
        // Another such row of the page, behind the same label, names another amount (the
        // items' `Total` and a tax table's): which one is the invoice's is a guess.
        // Unless the page confirms the one and not the other (the amount in words).
        let contested = names_one_amount(&best, at)
            && rows.iter().any(|(label, page, amount)| {
                (*label, *page) == (best.priority, best.field.page)
                    && *amount != best.field.value
                    && (is_confirmed(amount) || !is_confirmed(&best.field.value))
            });
        if contested {
            best.field.confidence *= TOTAL_CONTESTED;
        }
        // A total below zero is a credit note's, or a payment's sign read with the amount.
        if parse_amount_cents(&best.field.value).is_some_and(|cents| cents < 0) {
            best.field.confidence *= NEGATIVE_TOTAL;
        }
        // A payment printed after the total (`Deposit 201.00`): what is left to pay is not the
        // total found, unless a label for it was missed; a person should look.
        let paid_later = pages.iter().flatten().any(|ctx| {
            ctx.order > best.order
                && self.payments.hits(ctx.text()).iter().any(|h| {
                    self.amounts(&ctx.repaired).iter().any(|m| {
                        m.likely && m.start >= h.end && m.normalized.as_deref() != Some("0.00")
                    })
                })
        });
        if paid_later {
            best.field.confidence *= PAID_AFTER_TOTAL;
        }
        Some((best.field, at))
    }

    /// Amounts in `text` that are not part of a date, a percentage or a word.
    pub(super) fn amounts(&self, text: &str) -> Vec<AmountMatch> {
        let dates = self.dates(text);
        amount_regex()
            .find_iter(text)
            .filter(|m| !dates.iter().any(|d| d.start < m.end() && d.end > m.start()))
            .filter(|m| !text[m.end()..].trim_start().starts_with('%'))
            .filter_map(|m| {
                let before = &text[..m.start()];
                let after = &text[m.end()..];
                let cur_before = self
                    .currencies(before.trim_end())
                    .last()
                    .is_some_and(|c| c.end == before.trim_end().len());
                let cur_after = self
                    .currencies(after.trim_start())
                    .first()
                    .is_some_and(|c| c.start == 0);
                let glued = before
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric);
                if glued && !cur_before {
                    return None; // `INV2026`, `A4`
                }
                let normalized = normalize_amount(m.as_str());
                let two_decimals = {
                    let s = m.as_str();
                    s.len() > 3 && matches!(s.as_bytes()[s.len() - 3], b'.' | b',')
                };
                Some(AmountMatch {
                    start: m.start(),
                    end: m.end(),
                    likely: normalized.is_some() && (two_decimals || cur_before || cur_after),
                    normalized,
                })
            })
            .collect()
    }
}
