//! One OCR line prepared for matching ([`Ctx`]), what is found in it ([`Found`]), and the
//! confidence of a value: the lowest confidence of its words, discounted when its digits were
//! repaired from OCR look-alikes.

use super::{OCR_REPAIRED, OVERLAPPING_WORDS};
use crate::model::fields::Field;
use crate::ocr::{BoundingBox, Line, OcrDocument, Word};

/// A value found in one line: byte span in the line's text, normalized value, quality.
pub(super) struct Found {
    pub(super) value: String,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) quality: f64,
    /// False when the value is raw text that could not be normalized.
    pub(super) normalized: bool,
}

/// One OCR line prepared for matching.
pub(super) struct Ctx<'a> {
    page: u32,
    /// Index of the line within its page.
    pub(super) index: usize,
    /// Position of the line in the whole document.
    pub(super) order: usize,
    line: &'a Line,
    /// The line's words, each with its byte span in the text, located once ([`word_spans`]).
    words: Vec<(usize, usize, &'a Word)>,
    /// The text with digit look-alikes repaired inside numbers; same byte offsets as the text.
    pub(super) repaired: String,
    /// Which bytes of `repaired` differ from the text.
    changed: Vec<bool>,
}

impl<'a> Ctx<'a> {
    pub(super) fn text(&self) -> &str {
        &self.line.text
    }

    /// Where the line is on its page.
    pub(super) fn bbox(&self) -> BoundingBox {
        self.line.bbox
    }

    /// The page the line is on.
    pub(super) fn page(&self) -> u32 {
        self.page
    }

    /// The horizontal extent (left, right) of the words overlapping `start..end` of the text.
    pub(super) fn span_x(&self, start: usize, end: usize) -> Option<(f64, f64)> {
        self.words_over(start, end)
            .map(|w| (w.bbox.left, w.bbox.left + w.bbox.width))
            .reduce(|(l1, r1), (l2, r2)| (l1.min(l2), r1.max(r2)))
    }

    /// The byte offset of the first word that overlaps `left..right` horizontally.
    pub(super) fn word_at_x(&self, left: f64, right: f64) -> Option<usize> {
        self.words
            .iter()
            .find(|(_, _, w)| w.bbox.left < right && w.bbox.left + w.bbox.width > left)
            .map(|(s, _, _)| *s)
    }

    /// The words overlapping `start..end` of the text.
    fn words_over(&self, start: usize, end: usize) -> impl Iterator<Item = &'a Word> + '_ {
        self.words
            .iter()
            .filter(move |(ws, we, _)| *ws < end && *we > start)
            .map(|(_, _, w)| *w)
    }

    /// The lowest word confidence over a byte span of the text, times `quality`, in 0..=1;
    /// a word counts as read at least as well as `elsewhere` says it was read (0: nowhere).
    fn confidence(
        &self,
        start: usize,
        end: usize,
        quality: f64,
        elsewhere: &dyn Fn(&str) -> f64,
    ) -> f64 {
        let quality = if self.changed[start..end].iter().any(|c| *c) {
            quality * OCR_REPAIRED
        } else {
            quality
        };
        let quality = if overlaps_a_neighbour(&self.words, start, end) {
            quality * OVERLAPPING_WORDS
        } else {
            quality
        };
        // The lowest confidence of the words, each at least `elsewhere(word)`; the line's own
        // when its words cannot be located.
        let read = self
            .words_over(start, end)
            .map(|w| w.confidence.max(elsewhere(&w.text)))
            .reduce(f64::min)
            .unwrap_or(self.line.confidence);
        let c = read * quality;
        if c.is_finite() {
            c.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The field for a value found in this line.
    pub(super) fn field(&self, found: &Found) -> Field {
        self.field_read_elsewhere(found, &|_| 0.0)
    }

    /// The field for a value found in this line whose words were also read elsewhere: each
    /// word's confidence is the better of its reading here and `elsewhere(word)`.
    pub(super) fn field_read_elsewhere(
        &self,
        found: &Found,
        elsewhere: &dyn Fn(&str) -> f64,
    ) -> Field {
        Field {
            value: found.value.clone(),
            confidence: self.confidence(found.start, found.end, found.quality, elsewhere),
            page: self.page,
            line: self.index,
        }
    }

    /// Each word's byte span in the text and its box on the page, left to right.
    pub(super) fn word_boxes(&self) -> impl Iterator<Item = (usize, usize, BoundingBox)> + '_ {
        self.words.iter().map(|&(s, e, w)| (s, e, w.bbox))
    }

    /// The words overlapping `start..end` of the text, each with its OCR confidence.
    pub(super) fn words_in(&self, start: usize, end: usize) -> Vec<(&str, f64)> {
        self.words_over(start, end)
            .map(|w| (w.text.as_str(), w.confidence))
            .collect()
    }
}

/// Every line of `doc`, page by page, numbered in document order.
pub(super) fn pages(doc: &OcrDocument) -> Vec<Vec<Ctx<'_>>> {
    let mut order = 0;
    doc.pages
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
                        words: word_spans(line),
                        repaired,
                        changed,
                    }
                })
                .collect()
        })
        .collect()
}

/// Each word of the line with its byte span in the line's text, located in order; empty if
/// they cannot be (an adapter joined them differently).
fn word_spans(line: &Line) -> Vec<(usize, usize, &Word)> {
    let mut cursor = 0;
    let mut out = Vec::with_capacity(line.words.len());
    for word in &line.words {
        let Some(offset) = line.text[cursor..].find(word.text.as_str()) else {
            return vec![];
        };
        let (ws, we) = (cursor + offset, cursor + offset + word.text.len());
        cursor = we;
        out.push((ws, we, word));
    }
    out
}

/// Whether a word overlapping `start..end` of the line's text shares much of its room on the
/// page with the word before or after it (more than a quarter of the narrower one's width):
/// the OCR split one printed token into two words, or read the same glyphs twice
/// (`INV-2026-1007` with `70` inside its box, for `INV-2026-100770`), so the value's text may
/// lack what the other word holds (a word outside the value, beside one inside it). A neighbour
/// of no letter or digit (a leader of dots between a label and its value, `Invoice date ........
/// Oct 31, 2023`) holds nothing the value could lack.
fn overlaps_a_neighbour(spans: &[(usize, usize, &Word)], start: usize, end: usize) -> bool {
    let shared = |a: &Word, b: &Word| {
        let holds_text = |w: &Word| w.text.chars().any(char::is_alphanumeric);
        if !holds_text(a) || !holds_text(b) {
            return false;
        }
        let (a, b) = (a.bbox, b.bbox);
        let overlap = (a.left + a.width).min(b.left + b.width) - a.left.max(b.left);
        overlap > 0.25 * a.width.min(b.width)
    };
    spans.windows(2).any(|pair| {
        let [(s1, e1, w1), (s2, e2, w2)] = pair else {
            return false;
        };
        // Two words both within the value lack nothing of each other: the value holds both
        // (a box drawn over the words after it, `...Oct` over `31, 2023`).
        let one_inside = (*s1 < end && *e1 > start) != (*s2 < end && *e2 > start);
        one_inside && shared(w1, w2)
    })
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
        if has_digit && !letter_touches(text, start, i) {
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

/// Whether a letter sits right before `start` or right after `end` in `text`: the span is then
/// part of a word (`Oct`, `EURO`), not a token of its own.
pub(super) fn letter_touches(text: &str, start: usize, end: usize) -> bool {
    text[..start]
        .chars()
        .next_back()
        .is_some_and(char::is_alphabetic)
        || text[end..].chars().next().is_some_and(char::is_alphabetic)
}
