//! Labels: phrases matched as whole words ([`Phrase`]), a field's label set with its exclusions
//! ([`Labels`]), and the search every labelled field shares ([`Extractor::labelled`]): a value
//! after its label on the same line, or alone on the next line; a label may be wrapped over two
//! lines of a narrow column.

use unicode_normalization::UnicodeNormalization;

use super::line::{Ctx, Found};
use super::Extractor;
use crate::config::LabelSet;
use crate::model::fields::Field;

/// How far below a line (in its heights) the second line of a wrapped label may stand.
const WRAP_LINES: f64 = 2.0;

/// A field candidate with what ranks it against other candidates.
pub(super) struct Candidate {
    pub(super) field: Field,
    /// Index of the label in its set (lower is preferred).
    pub(super) priority: usize,
    /// Document order of the label line.
    pub(super) order: usize,
    pub(super) normalized: bool,
    /// How sure the reading is, before the OCR's confidence (`Found::quality`).
    pub(super) quality: f64,
}

/// A label match in a line.
#[derive(Clone, Copy)]
pub(super) struct Hit {
    priority: usize,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// What the OCR reads a table's border before a line's first word as (`IRechnungsempfänger`).
const BORDER_READ_AS: [char; 2] = ['I', 'l'];

impl Hit {
    /// A label found by other means than a label set's phrases (a column named by a title).
    pub(super) fn spanning(start: usize, end: usize) -> Self {
        Hit {
            priority: 0,
            start,
            end,
        }
    }

    /// The label `hit`, found elsewhere (its words joined across two lines), placed at
    /// `start..end` of a line.
    pub(super) fn spanning_as(hit: &Hit, start: usize, end: usize) -> Self {
        Hit {
            priority: hit.priority,
            start,
            end,
        }
    }

    /// Whether nothing stands before the label on its line but a table's border read as a
    /// letter (`I Rechnungsempfänger`).
    pub(super) fn leads(&self, text: &str) -> bool {
        let before = text[..self.start].trim();
        before.is_empty() || before.len() == 1 && before.starts_with(BORDER_READ_AS)
    }

    /// Whether nothing follows the label on its line but separators (`Verkäufer:`).
    pub(super) fn ends_line(&self, text: &str) -> bool {
        text[skip_separators(text, self.end)..].trim().is_empty()
    }
}

/// A label set, compiled.
pub(super) struct Labels {
    labels: Vec<Phrase>,
    exclude: Vec<Phrase>,
}

impl Labels {
    pub(super) fn new(set: &LabelSet) -> Self {
        Labels {
            labels: set.labels.iter().map(|l| Phrase::new(l)).collect(),
            exclude: set.exclude.iter().map(|l| Phrase::new(l)).collect(),
        }
    }

    pub(super) fn from_phrases(phrases: &[String]) -> Self {
        Labels {
            labels: phrases.iter().map(|l| Phrase::new(l)).collect(),
            exclude: vec![],
        }
    }

    /// Label matches in `text`, most preferred label first, then left to right.
    pub(super) fn hits(&self, text: &str) -> Vec<Hit> {
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

    /// Whether the label of `priority` is generic: one word that other labels of the set
    /// contain (`Date` in `Invoice Date`).
    pub(super) fn is_generic(&self, priority: usize) -> bool {
        let Some(phrase) = self.labels.get(priority) else {
            return false;
        };
        let [word] = phrase.words.as_slice() else {
            return false;
        };
        self.labels
            .iter()
            .any(|other| other.words.len() > 1 && other.words.contains(word))
    }

    /// Whether an exclusion phrase overlaps `start..end` of `text`.
    pub(super) fn excluded(&self, text: &str, start: usize, end: usize) -> bool {
        self.excluded_beyond(text, None, start, end)
    }

    /// Whether an exclusion phrase overlaps `start..end` of `text` other than one inside the
    /// label `hit` itself (`Netto a pagare` is a label, though `Netto` is excluded).
    pub(super) fn excluded_beyond(
        &self,
        text: &str,
        hit: Option<&Hit>,
        start: usize,
        end: usize,
    ) -> bool {
        self.exclude
            .iter()
            .flat_map(|p| p.find_all(text))
            .filter(|(s, e)| !hit.is_some_and(|h| *s >= h.start && *e <= h.end))
            .any(|(s, e)| s < end && e > start)
    }
}

/// A phrase matched case- and accent-insensitively as whole words, with any run of spaces or
/// punctuation between its words (`Invoice No` matches `INVOICE NO.` and `Invoice-No`;
/// `Fälligkeitsdatum` matches an OCR's `Falligkeitsdatum` and a `Fälligkeits-Datum`, `Net à
/// payer` a `NET A PAYER`, `Nº Factura` an OCR's `N2 Factura`, `Rechnungs-Nr` a
/// `Rechnungs.-Nr.`, a line's first label also behind a table border read as `I`). Hand-written rather
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
                .map(|w| w.chars().flat_map(fold).collect())
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
            // A table's border the OCR read as a letter glued to the line's first word
            // (`IRechnungsempfänger`): the label starts after it.
            if i == 0 && BORDER_READ_AS.contains(&c) && text[1..].starts_with(char::is_uppercase) {
                if let Some(end) = self.match_at(text, 1) {
                    out.push((1, end));
                }
            }
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
                if c == '-' && j > 0 && word[j - 1].is_alphabetic() && word[j].is_alphabetic() {
                    continue; // a compound written with a hyphen (`Beleg-Datum`, `Belegdatum`)
                }
                if c == '.' && j > 0 && word[j] == '-' {
                    continue; // an abbreviation's dot before the hyphen (`Rechnungs.-Nr.`)
                }
                let after = pos + offset + c.len_utf8();
                if matches!(word[j], '°' | 'º')
                    && matches!(c, '2' | 'o' | 'O' | '0')
                    && !text[after..].starts_with(char::is_alphanumeric)
                {
                    // OCR reads the ordinal sign as a look-alike (`N2 Factura`, `Factura no`),
                    // but `N2026/17` is a number.
                    j += 1;
                    end = after;
                    continue;
                }
                for lower in fold(c) {
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

/// A character compared in a label: lower case, without its accents (`É` → `e`).
fn fold(c: char) -> impl Iterator<Item = char> {
    let base = std::iter::once(c).nfd().next().unwrap_or(c);
    base.to_lowercase()
}

/// Skips the punctuation between a label and its value (`: `, `. `, `# `, `N° `).
pub(super) fn skip_separators(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    let trimmed = rest.trim_start_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                ':' | '.' | '#' | '=' | '|' | '–' | '—' | ')' | '°' | 'º' | '_'
            )
    });
    from + rest.len() - trimmed.len()
}

/// The candidate of the most preferred label, the first in the document among equals.
pub(super) fn preferred(candidates: Vec<(Candidate, &Ctx)>) -> Option<Candidate> {
    candidates
        .into_iter()
        .min_by_key(|(c, _)| (c.priority, c.order))
        .map(|(c, _)| c)
}

/// The field of the most preferred label's candidate ([`preferred`]).
pub(super) fn first_preferred(candidates: Vec<(Candidate, &Ctx)>) -> Option<Field> {
    preferred(candidates).map(|c| c.field)
}

/// Labels wrapped over two lines of a narrow column: a line's last word and the word below it
/// in the next row, joined with or without a space, make a whole label (`RECHNUNGS` over
/// `BETRAG`, `Invoice` over `Number`). Each as the index of the lower line and the label's hit
/// on it, at the lower word.
fn wrapped_labels(lines: &[Ctx], labels: &Labels) -> Vec<(usize, Hit)> {
    let mut out = vec![];
    for upper in lines {
        let Some((s1, e1, b1)) = upper.word_boxes().last() else {
            continue;
        };
        let top = upper.bbox().top;
        let reach = top + upper.bbox().height.max(0.005) * WRAP_LINES;
        for (j, lower) in lines.iter().enumerate() {
            let lt = lower.bbox().top;
            if lower.page() != upper.page() || lt <= top || lt > reach {
                continue;
            }
            let below = lower
                .word_boxes()
                .find(|(_, _, b2)| b2.left < b1.right() && b2.right() > b1.left);
            let Some((s2, e2, _)) = below else { continue };
            let (w1, w2) = (&upper.text()[s1..e1], &lower.text()[s2..e2]);
            let whole = [format!("{w1} {w2}"), format!("{w1}{w2}")]
                .iter()
                .find_map(|joined| {
                    labels
                        .hits(joined)
                        .into_iter()
                        .find(|h| h.start == 0 && h.end == joined.len())
                });
            if let Some(h) = whole {
                out.push((j, Hit::spanning_as(&h, s2, e2)));
            }
        }
    }
    out
}

impl Extractor<'_> {
    /// Candidates for a labelled field: for each line, the most preferred label whose value is
    /// found after it on the same line (`same`), or beside or below it, or alone on the next
    /// line (`next`; [`Extractor::off_the_line`]), unless an exclusion phrase overlaps the label
    /// or the text between label and a value on its line.
    pub(super) fn labelled<'p>(
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
                    if anchored && !hit.leads(text) {
                        continue;
                    }
                    let from = skip_separators(text, hit.end);
                    let (found, at) = match same(ctx, from) {
                        Some(f) => {
                            if labels.excluded_beyond(
                                text,
                                Some(&hit),
                                hit.start,
                                f.start.max(hit.end),
                            ) {
                                continue;
                            }
                            (f, ctx)
                        }
                        None => {
                            // Off the line: the rest of the line is other columns' names.
                            if labels.excluded_beyond(text, Some(&hit), hit.start, hit.end) {
                                continue;
                            }
                            let alone = hit.ends_line(text);
                            match self.off_the_line(lines, i, &hit, alone, &same, &next) {
                                Some(found) => found,
                                None => continue,
                            }
                        }
                    };
                    out.push((
                        Candidate {
                            field: at.field(&found),
                            priority: hit.priority,
                            order: ctx.order,
                            normalized: found.normalized,
                            quality: found.quality,
                        },
                        at,
                    ));
                    break;
                }
            }
            // Labels wrapped over two lines of a narrow column (`RECHNUNGS` over `BETRAG`).
            for (j, hit) in wrapped_labels(lines, labels) {
                let alone = hit.ends_line(lines[j].text());
                if let Some((found, at)) = self.off_the_line(lines, j, &hit, alone, &same, &next) {
                    out.push((
                        Candidate {
                            field: at.field(&found),
                            priority: hit.priority,
                            order: lines[j].order,
                            normalized: found.normalized,
                            quality: found.quality,
                        },
                        at,
                    ));
                }
            }
        }
        out
    }
}
