//! Invoice field extraction from the normalized OCR: generic and label-driven, no per-issuer
//! templates. A field's value follows one of its configured labels on the same line, or fills
//! the next line on its own; a few fallbacks (issuer from the letterhead, currency from the
//! total line) cover documents without explicit labels.
//!
//! Every field carries a confidence: the lowest OCR confidence of the words its value came from,
//! times a match-quality factor below 1 when the value was found by a heuristic, read from an
//! ambiguous date, or repaired from OCR look-alikes (`2O26` → `2026`). Validation turns low
//! confidence into a human review, so the factors decide what a person has to look at.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;
use time::{Date, Month};

use crate::config::{DateOrder, ExtractionRules, LabelSet};
use crate::model::fields::{Extraction, Field, FieldName};
use crate::ocr::{Line, OcrDocument};

/// Extracts the invoice fields of `doc` following `rules`.
pub fn extract(doc: &OcrDocument, rules: &ExtractionRules) -> Extraction {
    Extractor::new(rules).run(doc)
}

// Match-quality factors. A field at OCR confidence ~0.99 stays above the default review threshold
// (0.80) only with a factor above ~0.81: the factors below that line mean "a person should look".
/// The value sits alone on the line after its label: a normal layout, slightly less certain.
const NEXT_LINE: f64 = 0.95;
/// Numeric date readable both ways (`03/04/2026`), read with the configured order.
const AMBIGUOUS_DATE: f64 = 0.7;
/// Two-digit year (`14.03.26`), read as 20yy.
const TWO_DIGIT_YEAR: f64 = 0.9;
/// Digits repaired from OCR look-alikes (`O`→`0`, `l`/`I`→`1`).
const OCR_REPAIRED: f64 = 0.6;
/// Currency from a symbol: `$` names several currencies, the config picks one.
const CURRENCY_SYMBOL: f64 = 0.95;
/// Currency found elsewhere in the document, not on the total line; all mentions agree.
const CURRENCY_ELSEWHERE: f64 = 0.85;
/// Currency found elsewhere and the mentions disagree: the most frequent one.
const CURRENCY_CONFLICT: f64 = 0.5;
/// Issuer taken from the letterhead, with a legal-form suffix (`Ltd`, `GmbH`).
const ISSUER_WITH_SUFFIX: f64 = 0.9;
/// Issuer taken from the letterhead without a legal-form suffix.
const ISSUER_GUESSED: f64 = 0.6;
/// Invoice date taken from an unlabelled date on page 1.
const DATE_UNLABELLED: f64 = 0.6;
/// How many lines of page 1 are searched for a letterhead issuer.
const LETTERHEAD_LINES: usize = 12;

/// A value found in one line: byte span in the line's text, normalized value, quality.
struct Found {
    value: String,
    start: usize,
    end: usize,
    quality: f64,
    /// False when the value is raw text that could not be normalized.
    normalized: bool,
}

/// A field candidate with what ranks it against other candidates.
struct Candidate {
    field: Field,
    /// Index of the label in its set (lower is preferred).
    priority: usize,
    /// Document order of the label line.
    order: usize,
    normalized: bool,
}

/// One OCR line prepared for matching.
struct Ctx<'a> {
    page: u32,
    index: usize,
    order: usize,
    line: &'a Line,
    /// The text with digit look-alikes repaired inside numbers; same byte offsets as the text.
    repaired: String,
    /// Which bytes of `repaired` differ from the text.
    changed: Vec<bool>,
}

impl Ctx<'_> {
    fn text(&self) -> &str {
        &self.line.text
    }

    /// The lowest word confidence over a byte span of the text, times `quality`, in 0..=1.
    fn confidence(&self, start: usize, end: usize, quality: f64) -> f64 {
        let quality = if self.changed[start..end].iter().any(|c| *c) {
            quality * OCR_REPAIRED
        } else {
            quality
        };
        let c = span_confidence(self.line, start, end) * quality;
        if c.is_finite() {
            c.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    fn field(&self, found: &Found) -> Field {
        Field {
            value: found.value.clone(),
            confidence: self.confidence(found.start, found.end, found.quality),
            page: self.page,
            line: self.index,
        }
    }
}

/// The lowest confidence of the words overlapping `start..end` of the line's text. Words are
/// located in the text in order; if they cannot be (an adapter joined them differently), the
/// line's own confidence stands in.
fn span_confidence(line: &Line, start: usize, end: usize) -> f64 {
    let mut cursor = 0;
    let mut lowest: Option<f64> = None;
    for word in &line.words {
        let Some(offset) = line.text[cursor..].find(word.text.as_str()) else {
            return line.confidence;
        };
        let (ws, we) = (cursor + offset, cursor + offset + word.text.len());
        cursor = we;
        if ws < end && we > start {
            lowest = Some(lowest.map_or(word.confidence, |l| l.min(word.confidence)));
        }
    }
    lowest.unwrap_or(line.confidence)
}

/// Replaces `O`/`o` with `0` and `l`/`I` with `1` inside runs of digits and separators that
/// contain at least one real digit and are not part of a word (`2O26`, `1.25O,OO`; not `Oct`).
fn repair_digits(text: &str) -> (String, Vec<bool>) {
    let bytes = text.as_bytes();
    let in_run =
        |b: u8| b.is_ascii_digit() || matches!(b, b'O' | b'o' | b'l' | b'I' | b'.' | b',' | b'\'');
    let mut out = bytes.to_vec();
    let mut changed = vec![false; bytes.len()];
    let mut i = 0;
    while i < bytes.len() {
        if !in_run(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && in_run(bytes[i]) {
            i += 1;
        }
        let has_digit = bytes[start..i].iter().any(u8::is_ascii_digit);
        let free_before = !text[..start]
            .chars()
            .next_back()
            .is_some_and(char::is_alphabetic);
        let free_after = !text[i..].chars().next().is_some_and(char::is_alphabetic);
        if has_digit && free_before && free_after {
            for j in start..i {
                let fixed = match bytes[j] {
                    b'O' | b'o' => b'0',
                    b'l' | b'I' => b'1',
                    _ => continue,
                };
                out[j] = fixed;
                changed[j] = true;
            }
        }
    }
    // Only ASCII bytes were swapped for ASCII bytes, so this is still UTF-8.
    let repaired = String::from_utf8(out).unwrap_or_else(|_| text.to_string());
    (repaired, changed)
}

/// A label match in a line.
#[derive(Clone, Copy)]
struct Hit {
    priority: usize,
    start: usize,
    end: usize,
}

/// A label set, compiled.
struct Labels {
    labels: Vec<Phrase>,
    exclude: Vec<Phrase>,
}

impl Labels {
    fn new(set: &LabelSet) -> Self {
        Labels {
            labels: set.labels.iter().map(|l| Phrase::new(l)).collect(),
            exclude: set.exclude.iter().map(|l| Phrase::new(l)).collect(),
        }
    }

    fn from_phrases(phrases: &[String]) -> Self {
        Labels {
            labels: phrases.iter().map(|l| Phrase::new(l)).collect(),
            exclude: vec![],
        }
    }

    /// Label matches in `text`, most preferred label first, then left to right.
    fn hits(&self, text: &str) -> Vec<Hit> {
        let mut hits = vec![];
        for (priority, phrase) in self.labels.iter().enumerate() {
            for (start, end) in phrase.find_all(text) {
                hits.push(Hit {
                    priority,
                    start,
                    end,
                });
            }
        }
        hits.sort_by_key(|h| (h.priority, h.start));
        hits
    }

    /// Whether an exclusion phrase overlaps `start..end` of `text`.
    fn excluded(&self, text: &str, start: usize, end: usize) -> bool {
        self.exclude
            .iter()
            .flat_map(|p| p.find_all(text))
            .any(|(s, e)| s < end && e > start)
    }
}

/// A phrase matched case-insensitively as whole words, with any run of spaces or punctuation
/// between its words (`Invoice No` matches `INVOICE NO.` and `Invoice-No`). Hand-written rather
/// than a regex per label: labels come from the config at run time, and compiling a hundred
/// Unicode case-insensitive regexes for every document costs more than the whole extraction.
struct Phrase {
    /// The words, lower-cased.
    words: Vec<Vec<char>>,
}

impl Phrase {
    fn new(phrase: &str) -> Self {
        Phrase {
            words: phrase
                .split_whitespace()
                .map(|w| w.chars().flat_map(char::to_lowercase).collect())
                .collect(),
        }
    }

    /// Byte spans of the phrase in `text`: starting after a non-alphanumeric character and not
    /// running on into a longer word (`Date` is not in `Dated`, `total` is not in `Subtotal`).
    fn find_all(&self, text: &str) -> Vec<(usize, usize)> {
        let Some(last) = self.words.last().and_then(|w| w.last()) else {
            return vec![];
        };
        let ends_in_letter = last.is_alphabetic();
        let mut out = vec![];
        let mut prev: Option<char> = None;
        for (i, c) in text.char_indices() {
            if !prev.is_some_and(char::is_alphanumeric) {
                if let Some(end) = self.match_at(text, i) {
                    let letter_follows =
                        text[end..].chars().next().is_some_and(char::is_alphabetic);
                    if !(ends_in_letter && letter_follows) {
                        out.push((i, end));
                    }
                }
            }
            prev = Some(c);
        }
        out
    }

    fn match_at(&self, text: &str, start: usize) -> Option<usize> {
        let mut pos = start;
        for (k, word) in self.words.iter().enumerate() {
            if k > 0 {
                let rest = &text[pos..];
                let trimmed = rest.trim_start_matches(|c: char| {
                    c.is_whitespace() || matches!(c, '.' | ':' | '(' | ')' | '/' | '-')
                });
                pos += rest.len() - trimmed.len();
            }
            let mut j = 0;
            let mut chars = text[pos..].char_indices();
            let mut end = pos;
            while j < word.len() {
                let (offset, c) = chars.next()?;
                for lower in c.to_lowercase() {
                    if word.get(j) != Some(&lower) {
                        return None;
                    }
                    j += 1;
                }
                end = pos + offset + c.len_utf8();
            }
            pos = end;
        }
        Some(pos)
    }
}

/// Skips the punctuation between a label and its value (`: `, `. `, `# `, `N° `).
fn skip_separators(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    let trimmed = rest.trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, ':' | '.' | '#' | '=' | '|' | '–' | '—' | ')' | '°' | 'º')
    });
    from + rest.len() - trimmed.len()
}

struct AmountMatch {
    start: usize,
    end: usize,
    normalized: Option<String>,
    likely: bool,
}

struct DateMatch {
    start: usize,
    end: usize,
    date: Option<Date>,
    quality: f64,
}

struct CurrencyMatch {
    code: String,
    start: usize,
    end: usize,
    symbol: bool,
}

fn amount_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"[-−]?(?:[1-9][0-9]{0,2}(?:[,.'’\x{a0}\x{202f} ][0-9]{3})+(?:[.,][0-9]+)?|[0-9]+(?:[.,][0-9]+)?)")
            .expect("static regex")
    })
}

fn date_regexes() -> &'static [Regex; 4] {
    static RE: OnceLock<[Regex; 4]> = OnceLock::new();
    RE.get_or_init(|| {
        [
            Regex::new(r"\b([0-9]{4})([-/.])([0-9]{1,2})([-/.])([0-9]{1,2})\b"),
            Regex::new(r"\b([0-9]{1,2})([-/.])([0-9]{1,2})([-/.])([0-9]{4}|[0-9]{2})\b"),
            Regex::new(
                r"\b([0-9]{1,2})(?:st|nd|rd|th)?\.?[\s/-]*(\p{L}{3,})\.?,?[\s/-]*([0-9]{4})\b",
            ),
            Regex::new(r"\b(\p{L}{3,})\.?[\s-]*([0-9]{1,2})(?:st|nd|rd|th)?,?[\s-]*([0-9]{4})\b"),
        ]
        .map(|r| r.expect("static regex"))
    })
}

/// Normalizes a printed amount to a plain decimal with two decimals: `1,234.50`, `1.234,50`,
/// `1'234.50`, `1 234,50`, `1234,5` → `1234.50`. A single separator followed by exactly three digits is a
/// thousands separator (`1,234` → `1234.00`). `None` when the grouping or decimals make no sense.
fn normalize_amount(raw: &str) -> Option<String> {
    let (negative, body) = match raw.strip_prefix(['-', '−']) {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
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

fn iso_date(date: Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}

fn calendar_date(year: i32, month: u32, day: u32) -> Option<Date> {
    let month = Month::try_from(u8::try_from(month).ok()?).ok()?;
    Date::from_calendar_date(year, month, u8::try_from(day).ok()?).ok()
}

/// Lower-case words of a text with only letters and digits kept (`Co.,` → `co`).
fn norm_words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Organisation names are written in title or upper case and are not sentences: every word
/// starts with a capital or contains one (`eBay`), except short connectors (`Smith & Sons`,
/// `Bank of Ireland`, `Müller und Söhne`); no `!` or `?`; at most eight words.
fn org_shaped(text: &str) -> bool {
    const CONNECTORS: &[&str] = &[
        "and", "of", "the", "for", "und", "der", "die", "des", "de", "du", "la", "le", "et", "van",
        "von", "den", "y", "e",
    ];
    let words: Vec<&str> = text.split_whitespace().collect();
    words.len() <= 8
        && !text.contains(['!', '?'])
        && words.iter().all(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            !w.chars().next().is_some_and(char::is_alphabetic)
                || w.chars().any(char::is_uppercase)
                || CONNECTORS.contains(&w)
        })
}

fn letters(text: &str) -> usize {
    text.chars().filter(|c| c.is_alphabetic()).count()
}

struct Extractor<'r> {
    rules: &'r ExtractionRules,
    issuer: Labels,
    number: Labels,
    date: Labels,
    total: Labels,
    currency: Labels,
    recipients: Labels,
    /// Currency symbols, longest first so `US$` wins over `$`.
    symbols: Vec<(&'r str, &'r str)>,
    suffixes: Vec<Vec<String>>,
    titles: Vec<Vec<String>>,
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
        }
    }

    fn run(&self, doc: &OcrDocument) -> Extraction {
        let mut order = 0;
        let pages: Vec<Vec<Ctx>> = doc
            .pages
            .iter()
            .map(|page| {
                page.lines
                    .iter()
                    .enumerate()
                    .map(|(index, line)| {
                        let (repaired, changed) = repair_digits(&line.text);
                        order += 1;
                        Ctx {
                            page: page.number,
                            index,
                            order,
                            line,
                            repaired,
                            changed,
                        }
                    })
                    .collect()
            })
            .collect();

        let mut fields = BTreeMap::new();
        if let Some(f) = self.issuer(&pages) {
            fields.insert(FieldName::Issuer, f);
        }
        if let Some(f) = self.invoice_number(&pages) {
            fields.insert(FieldName::InvoiceNumber, f);
        }
        if let Some(f) = self.invoice_date(&pages) {
            fields.insert(FieldName::InvoiceDate, f);
        }
        let total = self.total(&pages);
        if let Some(f) = self.currency_field(&pages, total.as_ref()) {
            fields.insert(FieldName::Currency, f);
        }
        if let Some((f, _)) = total {
            fields.insert(FieldName::TotalAmount, f);
        }
        Extraction { fields }
    }

    /// Candidates for a labelled field: for each line, the most preferred label whose value is
    /// found after it on the same line (`same`) or alone on the next line (`next`), unless an
    /// exclusion phrase overlaps the label or the text between label and value.
    fn labelled<'p>(
        &self,
        pages: &'p [Vec<Ctx<'p>>],
        labels: &Labels,
        anchored: bool,
        same: impl Fn(&Ctx, usize) -> Option<Found>,
        next: impl Fn(&Ctx) -> Option<Found>,
    ) -> Vec<(Candidate, &'p Ctx<'p>)> {
        let mut out = vec![];
        for lines in pages {
            for (i, ctx) in lines.iter().enumerate() {
                let text = ctx.text();
                for hit in labels.hits(text) {
                    if anchored && !text[..hit.start].trim().is_empty() {
                        continue;
                    }
                    let from = skip_separators(text, hit.end);
                    let (found, at) = match same(ctx, from) {
                        Some(f) => {
                            if labels.excluded(text, hit.start, f.start.max(hit.end)) {
                                continue;
                            }
                            (f, ctx)
                        }
                        None => {
                            if labels.excluded(text, hit.start, text.len()) {
                                continue;
                            }
                            // Only when nothing but punctuation follows the label.
                            if !text[from..].trim().is_empty() {
                                continue;
                            }
                            let Some(next_ctx) = lines.get(i + 1) else {
                                continue;
                            };
                            let Some(mut f) = next(next_ctx) else {
                                continue;
                            };
                            f.quality *= NEXT_LINE;
                            (f, next_ctx)
                        }
                    };
                    out.push((
                        Candidate {
                            field: at.field(&found),
                            priority: hit.priority,
                            order: ctx.order,
                            normalized: found.normalized,
                        },
                        at,
                    ));
                    break;
                }
            }
        }
        out
    }

    fn issuer(&self, pages: &[Vec<Ctx>]) -> Option<Field> {
        let same = |ctx: &Ctx, from: usize| {
            let text = ctx.text();
            let rest = &text[from..];
            // `From: Acme Ltd, 12 High Street`: stop before the address.
            let cut = rest
                .match_indices(',')
                .find(|(i, _)| rest[*i..].chars().any(|c| c.is_ascii_digit()))
                .map_or(rest.len(), |(i, _)| i);
            let found = self.issuer_value(text, from, from + cut)?;
            // `From 01/03/2026 to 31/03/2026` is a service period, not a seller.
            self.plausible_org(&found.value).then_some(found)
        };
        let next = |ctx: &Ctx| {
            self.looks_like_org(ctx)
                .then(|| self.issuer_value(ctx.text(), 0, ctx.text().len()))
                .flatten()
        };
        let labelled = self.labelled(pages, &self.issuer, true, same, next);
        if let Some((c, _)) = labelled
            .into_iter()
            .min_by_key(|(c, _)| (c.priority, c.order))
        {
            return Some(c.field);
        }

        // The letterhead: the first line of page 1 that looks like an organisation.
        let first = pages.first()?;
        let mut after_recipient = false;
        for ctx in first.iter().take(LETTERHEAD_LINES) {
            if self.is_recipient_label(ctx) {
                after_recipient = true;
                continue;
            }
            if std::mem::take(&mut after_recipient) || !self.looks_like_org(ctx) {
                continue;
            }
            let text = ctx.text();
            let quality = if self.has_company_suffix(text) {
                ISSUER_WITH_SUFFIX
            } else {
                ISSUER_GUESSED
            };
            let mut found = self.issuer_value(text, 0, text.len())?;
            found.quality = quality;
            return Some(ctx.field(&found));
        }
        None
    }

    fn issuer_value(&self, text: &str, start: usize, end: usize) -> Option<Found> {
        let slice = &text[start..end];
        let lead = slice.len() - slice.trim_start().len();
        let value = slice
            .trim()
            .trim_end_matches([',', ';', ':'])
            .trim_end()
            .to_string();
        (letters(&value) >= 2).then(|| Found {
            start: start + lead,
            end: start + lead + value.len(),
            value,
            quality: 1.0,
            normalized: true,
        })
    }

    /// `Bill To`, `Ship To:` and the like at the start of a line, followed by nothing or `:`.
    fn is_recipient_label(&self, ctx: &Ctx) -> bool {
        let text = ctx.text();
        self.recipients.hits(text).iter().any(|h| {
            text[..h.start].trim().is_empty()
                && text[h.end..]
                    .trim_start()
                    .chars()
                    .next()
                    .is_none_or(|c| c == ':')
        })
    }

    fn has_company_suffix(&self, text: &str) -> bool {
        let words = norm_words(text);
        self.suffixes.iter().filter(|s| !s.is_empty()).any(|s| {
            // Never the first word: `AG Consulting` is not a legal form.
            (1..words.len()).any(|i| words.len() - i >= s.len() && words[i..i + s.len()] == s[..])
        })
    }

    /// A letterhead line: a plausible, organisation-shaped name that is not a document title or
    /// a label line.
    fn looks_like_org(&self, ctx: &Ctx) -> bool {
        let text = ctx.text();
        if !self.plausible_org(text) || self.titles.contains(&norm_words(text)) || !org_shaped(text)
        {
            return false;
        }
        let labelled = [
            &self.issuer,
            &self.number,
            &self.date,
            &self.total,
            &self.currency,
            &self.recipients,
        ];
        labelled.iter().all(|l| l.hits(text).is_empty())
    }

    /// Could be a company name, even behind an explicit label: letters, no contact details,
    /// no date, digits only next to a legal-form suffix (`3M Ltd`).
    fn plausible_org(&self, text: &str) -> bool {
        let lower = text.to_lowercase();
        letters(text) >= 2
            && !["@", "www.", "http", "://"]
                .iter()
                .any(|s| lower.contains(s))
            && (!text.chars().any(|c| c.is_ascii_digit()) || self.has_company_suffix(text))
            && self.dates(text).is_empty()
    }

    fn invoice_number(&self, pages: &[Vec<Ctx>]) -> Option<Field> {
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
        self.labelled(pages, &self.number, false, same, next)
            .into_iter()
            .min_by_key(|(c, _)| (c.priority, c.order))
            .map(|(c, _)| c.field)
    }

    fn invoice_date(&self, pages: &[Vec<Ctx>]) -> Option<Field> {
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
        if let Some((c, _)) = candidates
            .into_iter()
            .min_by_key(|(c, _)| (!c.normalized, c.priority, c.order))
        {
            return Some(c.field);
        }

        // No labelled date: the first valid date on page 1 that no exclusion (`Due`) touches.
        for ctx in pages.first()? {
            for m in self.dates(&ctx.repaired) {
                if m.date.is_some() && !self.date.excluded(ctx.text(), 0, m.end) {
                    let mut f = found(ctx, &m);
                    f.quality *= DATE_UNLABELLED;
                    return Some(ctx.field(&f));
                }
            }
        }
        None
    }

    /// The total and the line it was found on (for the currency).
    fn total<'p>(&self, pages: &'p [Vec<Ctx<'p>>]) -> Option<(Field, &'p Ctx<'p>)> {
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
        let same = |ctx: &Ctx, from: usize| {
            let amounts: Vec<AmountMatch> = self
                .amounts(&ctx.repaired)
                .into_iter()
                .filter(|m| m.start >= from)
                .collect();
            let best = amounts
                .iter()
                .find(|m| m.likely)
                .or_else(|| amounts.iter().find(|m| m.normalized.is_some()))
                .or_else(|| amounts.first())?;
            Some(found(best, &ctx.repaired))
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
        // Parsed values first, then the preferred label, then the last occurrence: totals close
        // a document, so a later `Total` wins over an earlier one.
        self.labelled(pages, &self.total, false, same, next)
            .into_iter()
            .min_by_key(|(c, _)| (!c.normalized, c.priority, std::cmp::Reverse(c.order)))
            .map(|(c, ctx)| (c.field, ctx))
    }

    fn currency_field(&self, pages: &[Vec<Ctx>], total: Option<&(Field, &Ctx)>) -> Option<Field> {
        let found = |c: &CurrencyMatch| Found {
            value: c.code.clone(),
            start: c.start,
            end: c.end,
            quality: if c.symbol { CURRENCY_SYMBOL } else { 1.0 },
            normalized: true,
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
        if let Some((c, _)) = labelled
            .into_iter()
            .min_by_key(|(c, _)| (c.priority, c.order))
        {
            return Some(c.field);
        }

        // 2. A code or symbol on the total's line.
        if let Some((_, ctx)) = total {
            if let Some(c) = self.currencies(ctx.text()).first() {
                return Some(ctx.field(&found(c)));
            }
        }

        // 3. Anywhere: all mentions agreeing, or else the most frequent one, less confidently.
        let mut mentions: Vec<(&Ctx, CurrencyMatch)> = vec![];
        for ctx in pages.iter().flatten() {
            for c in self.currencies(ctx.text()) {
                mentions.push((ctx, c));
            }
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, c) in &mentions {
            *counts.entry(c.code.as_str()).or_default() += 1;
        }
        let top = counts.values().copied().max()?;
        let (ctx, c) = mentions
            .iter()
            .find(|(_, c)| counts[c.code.as_str()] == top)?;
        let mut f = found(c);
        f.quality *= if counts.len() == 1 {
            CURRENCY_ELSEWHERE
        } else {
            CURRENCY_CONFLICT
        };
        Some(ctx.field(&f))
    }

    /// Amounts in `text` that are not part of a date, a percentage or a word.
    fn amounts(&self, text: &str) -> Vec<AmountMatch> {
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

    /// Dates in `text`, left to right, without overlaps. A date-like match that is not a real
    /// calendar date (`31/02/2026`) is kept with `date: None`.
    fn dates(&self, text: &str) -> Vec<DateMatch> {
        let [iso, numeric, day_month, month_day] = date_regexes();
        let mut out: Vec<DateMatch> = vec![];
        let num = |s: &str| s.parse::<u32>().unwrap_or(0);
        for c in iso.captures_iter(text) {
            if c[2] != c[4] {
                continue;
            }
            let m = c.get(0).expect("group 0");
            out.push(DateMatch {
                start: m.start(),
                end: m.end(),
                date: i32::try_from(num(&c[1]))
                    .ok()
                    .and_then(|y| calendar_date(y, num(&c[3]), num(&c[5]))),
                quality: 1.0,
            });
        }
        for c in numeric.captures_iter(text) {
            if c[2] != c[4] {
                continue;
            }
            let m = c.get(0).expect("group 0");
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
                quality *= AMBIGUOUS_DATE;
                match self.rules.date_order {
                    DateOrder::Dmy => (a, b),
                    DateOrder::Mdy => (b, a),
                }
            };
            out.push(DateMatch {
                start: m.start(),
                end: m.end(),
                date: i32::try_from(year)
                    .ok()
                    .and_then(|y| calendar_date(y, month, day)),
                quality,
            });
        }
        let month = |name: &str| {
            self.rules
                .month_names
                .get(&name.to_lowercase())
                .map(|m| u32::from(*m))
        };
        for (re, day_group, month_group) in [(day_month, 1, 2), (month_day, 2, 1)] {
            for c in re.captures_iter(text) {
                let Some(mo) = month(&c[month_group]) else {
                    continue;
                };
                let m = c.get(0).expect("group 0");
                out.push(DateMatch {
                    start: m.start(),
                    end: m.end(),
                    date: i32::try_from(num(&c[3]))
                        .ok()
                        .and_then(|y| calendar_date(y, mo, num(&c[day_group]))),
                    quality: 1.0,
                });
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

    /// Currency codes (upper case, whole) and symbols in `text`, left to right.
    fn currencies(&self, text: &str) -> Vec<CurrencyMatch> {
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
            let whole = !text[..start]
                .chars()
                .next_back()
                .is_some_and(char::is_alphabetic)
                && !text[i..].chars().next().is_some_and(char::is_alphabetic);
            if whole
                && word.len() == 3
                && word.bytes().all(|b| b.is_ascii_uppercase())
                && self.rules.currency_codes.iter().any(|c| c == word)
            {
                out.push(CurrencyMatch {
                    code: word.to_string(),
                    start,
                    end: i,
                    symbol: false,
                });
            }
        }
        for (symbol, code) in &self.symbols {
            let has_letters = symbol.chars().any(char::is_alphabetic);
            for (start, _) in text.match_indices(symbol) {
                let end = start + symbol.len();
                if has_letters
                    && (text[..start]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphabetic)
                        || text[end..].chars().next().is_some_and(char::is_alphabetic))
                {
                    continue;
                }
                if out.iter().any(|c| c.start < end && c.end > start) {
                    continue;
                }
                out.push(CurrencyMatch {
                    code: code.to_string(),
                    start,
                    end,
                    symbol: true,
                });
            }
        }
        out.sort_by_key(|c| c.start);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PipelineConfig;

    fn rules() -> ExtractionRules {
        PipelineConfig::builtin().extraction
    }

    fn run(lines: &[&str]) -> Extraction {
        extract(&OcrDocument::from_lines(lines, 0.99), &rules())
    }

    fn value(x: &Extraction, name: FieldName) -> Option<&str> {
        x.value(name)
    }

    fn confidence(x: &Extraction, name: FieldName) -> f64 {
        x.fields[&name].confidence
    }

    fn assert_close(actual: f64, expected: f64) {
        assert!(
            (actual - expected).abs() < 1e-9,
            "confidence {actual} != {expected}"
        );
    }

    const US: &[&str] = &[
        "Acme Supply Co.",
        "1200 Market Street, Suite 400",
        "San Francisco, CA 94103",
        "INVOICE",
        "Invoice #: INV-2026-0042",
        "Invoice Date: March 14, 2026",
        "Due Date: April 13, 2026",
        "Bill To:",
        "Globex Corporation",
        "Description Qty Unit Price Amount",
        "Consulting services 10 $120.00 $1,200.00",
        "Subtotal $1,200.00",
        "Sales Tax (8.5%) $102.00",
        "Amount Due: $1,302.00",
    ];

    const UK: &[&str] = &[
        "BRIGHTLINE CONSULTING LTD",
        "Unit 4, 22 Canal Street",
        "Manchester M1 3HE",
        "VAT Reg No: GB 123 4567 89",
        "Tax Invoice",
        "Invoice No. BL-0911",
        "Date: 14/03/2026",
        "Net Total £2,500.00",
        "VAT @ 20% £500.00",
        "Total £3,000.00",
    ];

    const DE: &[&str] = &[
        "Müller Maschinenbau GmbH",
        "Industriestraße 12, 70173 Stuttgart",
        "Rechnung",
        "Rechnungsnummer: RE-2026-117",
        "Rechnungsdatum: 14.03.2026",
        "Kundennummer: K-5521",
        "Zwischensumme 1.037,45 €",
        "MwSt. 19% 197,11 €",
        "Gesamtbetrag 1.234,56 €",
    ];

    const STACKED: &[&str] = &[
        "Northwind Traders AG",
        "Bahnhofstrasse 1, 8001 Zürich",
        "INVOICE",
        "Invoice Number",
        "NW-88017",
        "Invoice Date",
        "2026-02-28",
        "Currency",
        "CHF",
        "Total Due",
        "4'850.00",
    ];

    const SUBTOTALS: &[&str] = &[
        "Contoso Office Supplies BV",
        "Invoice ID: CT/2026/0315",
        "Date of Issue: 5 March 2026",
        "Sub Total EUR 900.00",
        "Discount EUR -50.00",
        "Total excl. VAT EUR 850.00",
        "Total VAT (21%) EUR 178.50",
        "Total EUR 1,028.50",
        "Total Hours 12",
    ];

    const NOISY: &[&str] = &[
        "| : .",
        "Hartmann & Vos BV",
        "Keizersgracht 1OO, Amsterdam",
        "INV0ICE",
        "Invoice  No :  HV-2026/77",
        "Invoice Date: 2O26-O3-14",
        "Total   EUR   1.25O,OO",
    ];

    #[test]
    fn us_invoice_with_dollar_and_amount_due_extracts_every_field() {
        let x = run(US);
        assert_eq!(value(&x, FieldName::Issuer), Some("Acme Supply Co."));
        assert_eq!(value(&x, FieldName::InvoiceNumber), Some("INV-2026-0042"));
        // the invoice date, not the due date
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
        // the amount due, not the subtotal or a line amount
        assert_eq!(value(&x, FieldName::TotalAmount), Some("1302.00"));
        assert_eq!(value(&x, FieldName::Currency), Some("USD"));
        assert_eq!(
            (
                x.fields[&FieldName::TotalAmount].page,
                x.fields[&FieldName::TotalAmount].line
            ),
            (1, 13)
        );
        // labelled values keep the OCR confidence; heuristics are discounted
        assert_close(confidence(&x, FieldName::InvoiceNumber), 0.99);
        assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
        assert_close(confidence(&x, FieldName::Currency), 0.99 * CURRENCY_SYMBOL);
    }

    #[test]
    fn uk_invoice_with_pound_and_invoice_no_extracts_every_field() {
        let x = run(UK);
        assert_eq!(
            value(&x, FieldName::Issuer),
            Some("BRIGHTLINE CONSULTING LTD")
        );
        assert_eq!(value(&x, FieldName::InvoiceNumber), Some("BL-0911"));
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
        assert_eq!(value(&x, FieldName::TotalAmount), Some("3000.00"));
        assert_eq!(value(&x, FieldName::Currency), Some("GBP"));
        assert_close(confidence(&x, FieldName::InvoiceDate), 0.99);
    }

    #[test]
    fn german_invoice_with_european_amount_and_euro_sign_extracts_every_field() {
        let x = run(DE);
        assert_eq!(
            value(&x, FieldName::Issuer),
            Some("Müller Maschinenbau GmbH")
        );
        assert_eq!(value(&x, FieldName::InvoiceNumber), Some("RE-2026-117"));
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
        assert_eq!(value(&x, FieldName::TotalAmount), Some("1234.56"));
        assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
    }

    #[test]
    fn values_on_the_line_after_their_labels_are_extracted_at_that_line() {
        let x = run(STACKED);
        assert_eq!(value(&x, FieldName::Issuer), Some("Northwind Traders AG"));
        assert_eq!(value(&x, FieldName::InvoiceNumber), Some("NW-88017"));
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-02-28"));
        assert_eq!(value(&x, FieldName::TotalAmount), Some("4850.00"));
        assert_eq!(value(&x, FieldName::Currency), Some("CHF"));
        let number = &x.fields[&FieldName::InvoiceNumber];
        assert_eq!((number.page, number.line), (1, 4));
        assert_close(number.confidence, 0.99 * NEXT_LINE);
    }

    #[test]
    fn subtotal_net_and_tax_totals_above_the_total_are_not_taken_for_it() {
        let x = run(SUBTOTALS);
        assert_eq!(value(&x, FieldName::TotalAmount), Some("1028.50"));
        assert_eq!(x.fields[&FieldName::TotalAmount].line, 7);
        assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
        assert_close(confidence(&x, FieldName::Currency), 0.99);
        assert_eq!(value(&x, FieldName::InvoiceNumber), Some("CT/2026/0315"));
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-05"));
        assert_eq!(
            value(&x, FieldName::Issuer),
            Some("Contoso Office Supplies BV")
        );
    }

    #[test]
    fn ocr_noise_is_repaired_in_numbers_at_a_lower_confidence() {
        // given a scan with stray marks, spacing and O for 0, and one blurry word
        let mut doc = OcrDocument::from_lines(NOISY, 0.97);
        doc.pages[0].lines[4].words[3].confidence = 0.62; // "HV-2026/77"
                                                          // when extracted
        let x = extract(&doc, &rules());
        // then the values are right
        assert_eq!(value(&x, FieldName::Issuer), Some("Hartmann & Vos BV"));
        assert_eq!(value(&x, FieldName::InvoiceNumber), Some("HV-2026/77"));
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
        assert_eq!(value(&x, FieldName::TotalAmount), Some("1250.00"));
        assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
        // and what was repaired or blurry carries its doubt
        assert_close(confidence(&x, FieldName::InvoiceDate), 0.97 * OCR_REPAIRED);
        assert_close(confidence(&x, FieldName::TotalAmount), 0.97 * OCR_REPAIRED);
        assert_close(confidence(&x, FieldName::InvoiceNumber), 0.62);
        assert_close(confidence(&x, FieldName::Currency), 0.97);
    }

    #[test]
    fn a_document_without_labels_has_no_number_total_or_currency() {
        let x = run(&["Acme Widgets Ltd", "Thank you for your business"]);
        assert_eq!(
            x.fields.keys().copied().collect::<Vec<_>>(),
            vec![FieldName::Issuer]
        );
        assert_eq!(
            extract(&OcrDocument::from_lines(&[], 0.9), &rules()),
            Extraction::default()
        );
    }

    #[test]
    fn issuer_comes_from_an_explicit_label_before_the_letterhead() {
        let x = run(&[
            "INVOICE",
            "Globex Corporation",
            "Seller: Initech Ltd, 4 Office Park",
        ]);
        assert_eq!(value(&x, FieldName::Issuer), Some("Initech Ltd"));
        assert_close(confidence(&x, FieldName::Issuer), 0.99);
        assert_eq!(x.fields[&FieldName::Issuer].line, 2);
    }

    #[test]
    fn a_service_period_after_from_is_not_taken_for_the_issuer() {
        let x = run(&["Globex Ltd", "From 01/03/2026 to 31/03/2026"]);
        assert_eq!(value(&x, FieldName::Issuer), Some("Globex Ltd"));
        assert_eq!(x.fields[&FieldName::Issuer].line, 0);
    }

    #[test]
    fn sentences_titles_and_address_lines_are_not_taken_for_the_issuer() {
        let x = run(&[
            "Thank you for your business!",
            "TAX INVOICE",
            "12 High Street",
            "accounts@example.com",
            "Page 1 of 2",
            "Smith & Sons of London",
        ]);
        assert_eq!(value(&x, FieldName::Issuer), Some("Smith & Sons of London"));
        assert_eq!(x.fields[&FieldName::Issuer].line, 5);
    }

    #[test]
    fn letterhead_issuer_without_a_company_suffix_is_less_confident() {
        let x = run(&["INVOICE", "Northwind Traders", "12 Harbour Road"]);
        assert_eq!(value(&x, FieldName::Issuer), Some("Northwind Traders"));
        assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_GUESSED);
    }

    #[test]
    fn the_customer_after_bill_to_is_not_taken_for_the_issuer() {
        let x = run(&["Bill To:", "Globex Corporation", "Initech", "Invoice No: 7"]);
        assert_eq!(value(&x, FieldName::Issuer), Some("Initech"));
    }

    #[test]
    fn dates_in_every_supported_format_are_normalized_to_iso() {
        for (printed, iso) in [
            ("2026-03-14", "2026-03-14"),
            ("14/03/2026", "2026-03-14"),
            ("14.03.2026", "2026-03-14"),
            ("03/14/2026", "2026-03-14"),
            ("14 March 2026", "2026-03-14"),
            ("March 14, 2026", "2026-03-14"),
            ("14 Mar 2026", "2026-03-14"),
            ("14th Mar. 2026", "2026-03-14"),
            ("14. März 2026", "2026-03-14"),
            ("Mar 4 2026", "2026-03-04"),
            ("04.03.2026", "2026-03-04"),
        ] {
            let line = format!("Invoice Date: {printed}");
            let x = run(&[line.as_str()]);
            assert_eq!(value(&x, FieldName::InvoiceDate), Some(iso), "{printed}");
            assert_close(confidence(&x, FieldName::InvoiceDate), 0.99);
        }
    }

    #[test]
    fn ambiguous_date_follows_the_configured_order_at_a_lower_confidence() {
        let lines = ["Date: 03/04/2026"];
        let x = run(&lines);
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-04-03"));
        assert_close(
            confidence(&x, FieldName::InvoiceDate),
            0.99 * AMBIGUOUS_DATE,
        );

        let mut us = rules();
        us.date_order = DateOrder::Mdy;
        let x = extract(&OcrDocument::from_lines(&lines, 0.99), &us);
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-04"));
        assert_close(
            confidence(&x, FieldName::InvoiceDate),
            0.99 * AMBIGUOUS_DATE,
        );
    }

    #[test]
    fn an_impossible_date_is_kept_raw_for_validation_to_reject() {
        let x = run(&["Invoice Date: 31/02/2026"]);
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("31/02/2026"));
    }

    #[test]
    fn an_unlabelled_date_on_page_one_is_a_low_confidence_fallback() {
        let x = run(&["Acme Ltd", "Due 30/04/2026", "London, 14 March 2026"]);
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
        assert_close(
            confidence(&x, FieldName::InvoiceDate),
            0.99 * DATE_UNLABELLED,
        );
    }

    #[test]
    fn amounts_in_every_supported_notation_are_normalized() {
        for (printed, normalized) in [
            ("1,234.50", "1234.50"),
            ("1.234,50", "1234.50"),
            ("1234,5", "1234.50"),
            ("1'234.50", "1234.50"),
            ("1 234,50", "1234.50"),
            ("12 345 678.00", "12345678.00"),
            ("1,234", "1234.00"),
            ("1.234.567,89", "1234567.89"),
            ("12", "12.00"),
            ("0.99", "0.99"),
            ("-50.00", "-50.00"),
        ] {
            assert_eq!(
                normalize_amount(printed).as_deref(),
                Some(normalized),
                "{printed}"
            );
        }
        for malformed in ["1.234.5", "1,23,4.5", "12.345,6,7", "1234.567", "0.125"] {
            assert_eq!(normalize_amount(malformed), None, "{malformed}");
        }
    }

    #[test]
    fn a_malformed_total_is_kept_raw_for_validation_to_reject() {
        let x = run(&["Total Due: 1.234.5 EUR"]);
        assert_eq!(value(&x, FieldName::TotalAmount), Some("1.234.5"));
        assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
    }

    #[test]
    fn space_grouped_totals_are_read_whole() {
        let x = run(&["Montant total : 1 234,56 €"]);
        assert_eq!(value(&x, FieldName::TotalAmount), Some("1234.56"));
        assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
    }

    #[test]
    fn percentages_and_dates_on_the_total_line_are_not_the_total() {
        let x = run(&["Total (incl. 19% VAT, due 14.04.2026): 1.190,00"]);
        assert_eq!(value(&x, FieldName::TotalAmount), Some("1190.00"));
    }

    #[test]
    fn currency_mentioned_only_elsewhere_is_less_confident() {
        let x = run(&["All amounts in CHF", "Total: 100.00"]);
        assert_eq!(value(&x, FieldName::Currency), Some("CHF"));
        assert_close(
            confidence(&x, FieldName::Currency),
            0.99 * CURRENCY_ELSEWHERE,
        );

        let x = run(&[
            "Paid in USD",
            "Fees in EUR",
            "EUR 5 bank charge",
            "Total: 100.00",
        ]);
        assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
        assert_close(
            confidence(&x, FieldName::Currency),
            0.99 * CURRENCY_CONFLICT,
        );
    }

    #[test]
    fn field_confidence_is_the_lowest_word_confidence_of_the_value() {
        let mut doc = OcrDocument::from_lines(&["Invoice Date: 14 March 2026"], 0.99);
        doc.pages[0].lines[0].words[3].confidence = 0.7; // "March"
        doc.pages[0].lines[0].words[0].confidence = 0.1; // the label does not count
        let x = extract(&doc, &rules());
        assert_close(confidence(&x, FieldName::InvoiceDate), 0.7);
    }

    #[test]
    fn fields_on_later_pages_report_their_page_and_line() {
        let mut doc = OcrDocument::from_lines(&["Acme Widgets Ltd", "Invoice No: A-1"], 0.99);
        let mut second = OcrDocument::from_lines(&["Carried over", "Total: EUR 99.90"], 0.9);
        second.pages[0].number = 2;
        doc.pages.append(&mut second.pages);
        let x = extract(&doc, &rules());
        let total = &x.fields[&FieldName::TotalAmount];
        assert_eq!(
            (total.value.as_str(), total.page, total.line),
            ("99.90", 2, 1)
        );
        assert_close(total.confidence, 0.9);
        assert_eq!(x.fields[&FieldName::Currency].page, 2);
    }

    #[test]
    fn odd_text_never_panics() {
        let lines = [
            "İSTANBUL ŞİRKETİ A.Ş.",
            "Total: €",
            "Invoice No:",
            "Date: 99/99/9999 ٣/٣/٢٠٢٦",
            "Total — — 1.",
            "ﬁ ß ẞ 𝟙𝟚𝟛 ,,, ... ’’’",
            "Amount Due",
        ];
        let x = run(&lines);
        assert_eq!(value(&x, FieldName::InvoiceNumber), None);
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("99/99/9999"));
    }
}
