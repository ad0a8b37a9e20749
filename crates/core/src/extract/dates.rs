//! Dates: every printed form the config allows (ISO, numeric in either order, with month
//! names), normalized to ISO; and the invoice date among them.

use std::collections::HashSet;
use std::sync::OnceLock;

use regex::{Captures, Regex};
use time::{Date, Month};

use super::issuer::norm_words;
use super::labels::Candidate;
use super::line::{Ctx, Found};
use super::{
    Extractor, AMBIGUOUS_DATE, DATELINE, DATE_CONTESTED, DATE_UNLABELLED, DATE_WITH_NUMBER,
    MISSPELT_MONTH, ORDER_SEEN, TWO_DIGIT_YEAR,
};
use crate::config::DateOrder;
use crate::model::fields::Field;

/// A date-shaped text in a line.
pub(super) struct DateMatch {
    pub(super) start: usize,
    pub(super) end: usize,
    /// `None` when it is not a calendar date (`31/02/2026`).
    date: Option<Date>,
    quality: f64,
}

impl DateMatch {
    /// The date as `YYYY-MM-DD`, when it is a calendar date.
    pub(super) fn iso(&self) -> Option<String> {
        self.date.map(iso_date)
    }

    /// The whole match of `c`, read as the given year, month and day.
    fn new(c: &Captures, (year, month, day): (u32, u32, u32), quality: f64) -> Self {
        let m = c.get(0).expect("group 0");
        DateMatch {
            start: m.start(),
            end: m.end(),
            date: calendar_date(year, month, day),
            quality,
        }
    }
}

fn date_regexes() -> &'static [Regex; 4] {
    static RE: OnceLock<[Regex; 4]> = OnceLock::new();
    RE.get_or_init(|| {
        [
            Regex::new(r"\b([0-9]{4})([-/.])([0-9]{1,2})([-/.])([0-9]{1,2})\b"),
            Regex::new(r"\b([0-9]{1,2})([-/.])([0-9]{1,2})([-/.])([0-9]{4}|[0-9]{2})\b"),
            Regex::new(
                // `14 March 2026`, `1er mars 2026`, `5 de mayo de 2026`, `29-Nov-19`.
                r"\b([0-9]{1,2})(?:st|nd|rd|th|er)?\.?[\s/-]*(?:de\s+)?(\p{L}{3,})\.?,?[\s/-]*(?:de\s+)?([0-9]{4}|[0-9]{2})\b",
            ),
            // `March 14, 2026`, `August 3 , 2014`.
            Regex::new(r"\b(\p{L}{3,})\.?[\s-]*([0-9]{1,2})(?:st|nd|rd|th)?\s*,?[\s-]*([0-9]{4})\b"),
        ]
        .map(|r| r.expect("static regex"))
    })
}

/// The places of a page's addresses: the word after a postcode (`91244 Reichenschwand`),
/// without case or accents.
fn places(page: &[Ctx]) -> HashSet<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    // A postcode stands alone, not at a date's end (`01.11.2024 bis`).
    let re = RE
        .get_or_init(|| Regex::new(r"(?:^|[\s,•*|])[0-9]{4,5} (\p{L}{3,})").expect("static regex"));
    page.iter()
        .flat_map(|ctx| re.captures_iter(ctx.text()))
        .map(|c| norm_words(&c[1]).concat())
        .collect()
}

/// A page's margin where a browser prints its stamp: above this, or below one minus it.
const STAMP_MARGIN: f64 = 0.04;

/// Whether the date ending at `end` of `ctx` is a browser's or printer's stamp: a time follows
/// it (`23.06.23, 11:09`) in the page's top or bottom margin.
fn print_stamp(ctx: &Ctx, end: usize) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"^,?\s*[0-9]{1,2}:[0-9]{2}").expect("static regex"));
    let top = ctx.bbox().top;
    !(STAMP_MARGIN..=1.0 - STAMP_MARGIN).contains(&top) && re.is_match(&ctx.repaired[end..])
}

/// How far below a row (in its heights) the next row of its column may stand.
const NEXT_ROWS: f64 = 4.0;

/// The words a dateline may put between its place and its date (`Berlin, den 19.05.2014`).
const DATELINE_JOINERS: &[&str] = &["den", "le", "el", "il", "am", "on"];

fn iso_date(date: Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}

fn calendar_date(year: u32, month: u32, day: u32) -> Option<Date> {
    let year = i32::try_from(year).ok()?;
    let month = Month::try_from(u8::try_from(month).ok()?).ok()?;
    Date::from_calendar_date(year, month, u8::try_from(day).ok()?).ok()
}

impl Extractor<'_> {
    /// The invoice date: behind its label; else on the invoice number's line (`number`); else
    /// the first date of page 1 that no exclusion touches.
    pub(super) fn invoice_date(&self, pages: &[Vec<Ctx>], number: Option<&Field>) -> Option<Field> {
        let found = |ctx: &Ctx, m: &DateMatch| Found {
            value: m
                .date
                .map_or_else(|| ctx.repaired[m.start..m.end].to_string(), iso_date),
            start: m.start,
            end: m.end,
            quality: m.quality,
            normalized: m.date.is_some(),
        };
        let same = |ctx: &Ctx, from: usize| {
            let m = self
                .dates(&ctx.repaired)
                .into_iter()
                .find(|m| m.start >= from)?;
            Some(found(ctx, &m))
        };
        let next = |ctx: &Ctx| {
            let lead = ctx.repaired.len() - ctx.repaired.trim_start().len();
            let m = self.dates(&ctx.repaired).into_iter().next()?;
            (m.start == lead).then(|| found(ctx, &m))
        };
        let candidates = self.labelled(pages, &self.date, false, same, next);
        // A generic `Date` heading a column of different dates heads the items' dates.
        let items = |c: &Candidate, at: &Ctx| {
            self.date.is_generic(c.priority)
                && at.order != c.order
                && self.column_of_dates(pages, at, &c.field.value)
        };
        if let Some((c, _)) = candidates
            .into_iter()
            .filter(|(c, at)| !items(c, at))
            .min_by_key(|(c, _)| (!c.normalized, c.priority, c.order))
        {
            let mut field = c.field;
            // A generic label (`Date`) with another date on page 1 that no exclusion explains:
            // which one is the invoice's is a guess.
            if self.date.is_generic(c.priority) && self.other_date(pages, &field.value) {
                field.confidence *= DATE_CONTESTED;
            }
            return Some(field);
        }

        // No labelled date: one on the invoice number's line (`Invoice 4711 of 3 May 2026`).
        if let Some(n) = number {
            let line = pages
                .get(n.page as usize - 1)
                .and_then(|p| p.iter().find(|c| c.index == n.line));
            if let Some(ctx) = line {
                let on_line = self
                    .dates(&ctx.repaired)
                    .into_iter()
                    .find(|m| m.date.is_some() && !self.date.excluded(ctx.text(), 0, m.end));
                if let Some(m) = on_line {
                    let mut f = found(ctx, &m);
                    f.quality *= DATE_WITH_NUMBER;
                    return Some(ctx.field(&f));
                }
            }
        }

        // A letter's dateline (`Berlin, 19.05.2014`, `Paris, le 3 mars 2026`): the date the
        // document was written, on whichever page it stands (a folio signs off on its last).
        // Without its comma if the place is one of the page's addresses' (`Reichenschwand
        // 04.07.2023` beside `91244 Reichenschwand`).
        let places = places(pages.first()?);
        for ctx in pages.iter().flatten() {
            let text = &ctx.repaired;
            let dateline = self
                .dateline(text)
                .or_else(|| self.place_and_date(text, &places));
            if let Some(m) = dateline.filter(|m| !self.date.excluded(ctx.text(), 0, m.end)) {
                let mut f = found(ctx, &m);
                f.quality *= DATELINE;
                return Some(ctx.field(&f));
            }
        }

        // Else the first valid date on page 1 that no exclusion (`Due`) touches and that is no
        // printer's stamp.
        for ctx in pages.first()? {
            for m in self.dates(&ctx.repaired) {
                if m.date.is_some()
                    && !self.date.excluded(ctx.text(), 0, m.end)
                    && !print_stamp(ctx, m.end)
                {
                    let mut f = found(ctx, &m);
                    f.quality *= DATE_UNLABELLED;
                    return Some(ctx.field(&f));
                }
            }
        }
        None
    }

    /// The month whose name (five letters or more) `word` misspells by one letter left out,
    /// added, changed, or two letters swapped (`Januray`, `Febuary`); none when two months'
    /// names are as near.
    fn misspelt_month(&self, word: &str) -> Option<u32> {
        let word = norm_words(word).concat();
        if word.chars().count() < 5 {
            return None;
        }
        let near: HashSet<u32> = self
            .months
            .iter()
            .filter(|(name, _)| name.chars().count() >= 5 && one_slip(&word, name))
            .map(|(_, &m)| m)
            .collect();
        let mut near = near.into_iter();
        match (near.next(), near.next()) {
            (Some(m), None) => Some(m),
            _ => None,
        }
    }

    /// The date of a dateline: a place (words without digits), a comma, maybe `den` or `le`,
    /// then a valid date that ends the line.
    fn dateline(&self, text: &str) -> Option<DateMatch> {
        let m = self.dates(text).pop()?;
        let (place, joiner) = text[..m.start].rsplit_once(',')?;
        let joiner = joiner.trim();
        let place = place.trim();
        let place_words = !place.is_empty()
            && place
                .chars()
                .all(|c| c.is_alphabetic() || c.is_whitespace() || matches!(c, '.' | '-' | '\''));
        let ends = text[m.end..].trim().is_empty();
        let joined =
            joiner.is_empty() || DATELINE_JOINERS.contains(&joiner.to_lowercase().as_str());
        (m.date.is_some() && place_words && ends && joined).then_some(m)
    }

    /// A valid date ending the line after a place of `places` (one word), which is not the
    /// end of an address (no postcode before it).
    fn place_and_date(&self, text: &str, places: &HashSet<String>) -> Option<DateMatch> {
        let m = self.dates(text).pop()?;
        let mut before = text[..m.start].split_whitespace().rev();
        let place = norm_words(before.next()?).concat();
        let address = before
            .next()
            .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()));
        let ends = text[m.end..].trim().is_empty();
        (m.date.is_some() && ends && !address && places.contains(&place)).then_some(m)
    }

    /// Whether a line just below `at`, on its page, holds a date other than `value` where
    /// `at` holds it (the next row of a column of dates).
    fn column_of_dates(&self, pages: &[Vec<Ctx>], at: &Ctx, value: &str) -> bool {
        let Some(m) = self
            .dates(&at.repaired)
            .into_iter()
            .find(|m| m.date.is_some_and(|d| iso_date(d) == value))
        else {
            return false;
        };
        let Some((left, right)) = at.span_x(m.start, m.end) else {
            return false;
        };
        let b = at.bbox();
        let reach = b.top + b.height.max(0.005) * NEXT_ROWS;
        pages.iter().flatten().any(|c| {
            c.page() == at.page()
                && c.bbox().top > b.top
                && c.bbox().top < reach
                && self.dates(&c.repaired).iter().any(|d| {
                    d.date.is_some_and(|d| iso_date(d) != value)
                        && c.span_x(d.start, d.end)
                            .is_some_and(|(l, r)| l < right && r > left)
                })
        })
    }

    /// Whether page 1 shows a valid date other than `value` that no exclusion (`Due`) touches,
    /// that is no print stamp and no booking's date.
    fn other_date(&self, pages: &[Vec<Ctx>], value: &str) -> bool {
        pages.first().into_iter().flatten().any(|ctx| {
            self.dates(&ctx.repaired).iter().any(|m| {
                m.date.is_some_and(|d| iso_date(d) != value)
                    && !self.date.excluded(ctx.text(), 0, m.end)
                    && !print_stamp(ctx, m.end)
                    && !self.booking(&ctx.repaired, m.end)
            })
        })
    }

    /// Whether `text` after a date ending at `end` ends with an amount of money, maybe with
    /// its currency: the date is a booking's (an item's row, a payment: `30.09.18 7%
    /// Übernachtung 1 81.00 81.00`, `du 06/12/2022 45,93 €`).
    fn booking(&self, text: &str, end: usize) -> bool {
        let rest = text[end..].trim_end();
        let rest = match self.currencies(rest).last() {
            Some(c) if c.end == rest.len() => rest[..c.start].trim_end(),
            _ => rest,
        };
        self.amounts(rest)
            .last()
            .is_some_and(|a| a.likely && a.end() == rest.len())
    }

    /// The order the document's numeric dates show where a part above 12 decides it
    /// (`25/03/2026`: day first; `03/25/2026`: month first), if they all agree.
    pub(super) fn date_order_seen(&self, pages: &[Vec<Ctx>]) -> Option<DateOrder> {
        let [_, numeric, _, _] = date_regexes();
        let (mut dmy, mut mdy) = (false, false);
        for ctx in pages.iter().flatten() {
            for c in numeric.captures_iter(&ctx.repaired) {
                let (a, b) = (c[1].parse::<u32>(), c[3].parse::<u32>());
                let (Ok(a), Ok(b)) = (a, b) else { continue };
                dmy |= a > 12 && (1..=12).contains(&b) && a <= 31;
                mdy |= b > 12 && (1..=12).contains(&a) && b <= 31;
            }
        }
        match (dmy, mdy) {
            (true, false) => Some(DateOrder::Dmy),
            (false, true) => Some(DateOrder::Mdy),
            _ => None,
        }
    }

    /// Dates in `text`, left to right, without overlaps. A date-like match that is not a real
    /// calendar date (`31/02/2026`) is kept with `date: None`.
    pub(super) fn dates(&self, text: &str) -> Vec<DateMatch> {
        let [iso, numeric, day_month, month_day] = date_regexes();
        let mut out: Vec<DateMatch> = vec![];
        let num = |s: &str| s.parse::<u32>().unwrap_or(0);
        for c in iso.captures_iter(text) {
            if c[2] != c[4] {
                continue;
            }
            let ymd = (num(&c[1]), num(&c[3]), num(&c[5]));
            out.push(DateMatch::new(&c, ymd, 1.0));
        }
        for c in numeric.captures_iter(text) {
            if c[2] != c[4] {
                continue;
            }
            let (a, b) = (num(&c[1]), num(&c[3]));
            let mut quality = 1.0;
            let mut year = num(&c[5]);
            if c[5].len() == 2 {
                year += 2000;
                quality *= TWO_DIGIT_YEAR;
            }
            // Dots are the day-first convention (14.03.2026); otherwise a part above 12 decides,
            // and only a genuinely two-way date falls back to the configured order.
            let (day, month) = if a > 12 || a == b {
                (a, b)
            } else if b > 12 {
                (b, a)
            } else if &c[2] == "." {
                (a, b)
            } else {
                let order = match self.seen_order {
                    Some(seen) => {
                        quality *= ORDER_SEEN;
                        seen
                    }
                    None => {
                        quality *= AMBIGUOUS_DATE;
                        self.locale_order.unwrap_or(self.rules.date_order)
                    }
                };
                match order {
                    DateOrder::Dmy => (a, b),
                    DateOrder::Mdy => (b, a),
                }
            };
            out.push(DateMatch::new(&c, (year, month, day), quality));
        }
        let month = |name: &str| self.months.get(&norm_words(name).concat()).copied();
        for (re, day_group, month_group) in [(day_month, 1, 2), (month_day, 2, 1)] {
            for c in re.captures_iter(text) {
                let full_year = c[3].len() == 4;
                let (mo, spelled) = match month(&c[month_group]) {
                    Some(mo) => (mo, 1.0),
                    // `31st Januray 2020`: a month's name one slip off, with its full year.
                    None => match self.misspelt_month(&c[month_group]) {
                        Some(mo) if full_year => (mo, MISSPELT_MONTH),
                        _ => continue,
                    },
                };
                let (year, quality) = match num(&c[3]) {
                    short if !full_year => (2000 + short, TWO_DIGIT_YEAR * spelled),
                    year => (year, spelled),
                };
                out.push(DateMatch::new(&c, (year, mo, num(&c[day_group])), quality));
            }
        }
        out.sort_by_key(|d| (d.start, std::cmp::Reverse(d.end)));
        let mut kept: Vec<DateMatch> = vec![];
        for d in out {
            if kept.last().is_none_or(|k| d.start >= k.end) {
                kept.push(d);
            }
        }
        kept
    }
}

/// Whether `a` is `b` with one slip: a letter left out, added or changed, or two neighbours
/// swapped (never `b` itself).
fn one_slip(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a == b {
        return false;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    match ra.len() as isize - rb.len() as isize {
        0 => {
            ra[1..] == rb[1..]
                || ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..]
        }
        1 => ra[1..] == *rb,
        -1 => *ra == rb[1..],
        _ => false,
    }
}
