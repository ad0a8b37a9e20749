//! The invoice number: the first token with a digit after its label, or else after the
//! document's title (`Invoice 103767`, `Rechnung Nr. RE-1001`, `Handelsrechnung Nr. 4711`),
//! or a title alone as a key in a column of keys (`Arve   7008605`),
//! or else below a table's column that a title names alone (`Klant  Order  Factuur
//! Vervaldatum`), or else behind a number marker alone on its line (`N° 2023-6013`), less
//! surely.

use std::collections::HashSet;

use super::issuer::norm_words;
use super::labels::{preferred, Candidate, Hit};
use super::line::{Ctx, Found};
use super::{
    Extractor, GENERIC_NUMBER, LETTERS_ONLY, MARKER_NUMBER, NUMBER_CONTESTED, TITLE_COLUMN,
    TITLE_NUMBER,
};
use crate::model::fields::Field;

/// Words that stand between a title and its number (`Nr.`, `No`, `#`, `N°`).
const NUMBER_MARKERS: &[&str] = &[
    "nr", "no", "n", "nº", "n°", "num", "number", "nummer", "numero",
];
/// How many words may stand between a title and a number marker (`Beitragsrechnung zur
/// Kraftfahrtversicherung Nr. 00.123`).
const TITLE_GAP: usize = 3;
/// How long a code of letters alone may be to stand for a number (`NFCZMQ`).
const LETTERS_CODE: (usize, usize) = (5, 10);
/// A header row's column name stands this far (page widths) from its neighbours' words; the
/// words of one name stand a space apart.
const COLUMN_GAP: f64 = 0.02;

/// The number at `from`: the first word if it has a digit, or a short upper-case series
/// prefix and the word starting with a digit after it (`FT 2026/492`, `INV 269748`), joined
/// without the space (an identifier has none; validation refuses one).
fn token(text: &str, from: usize) -> Option<Found> {
    let rest = &text[from..];
    let mut words = rest.split_whitespace().peekable();
    // A label shared with the next field's (`Rechnungsnr./-datum 6002298172 / 21.03.2023`,
    // `No./Date`): its second half is passed over.
    if words
        .peek()
        .is_some_and(|w| w.starts_with('/') && !w.chars().any(|c| c.is_ascii_digit()))
    {
        words.next();
    }
    let word = words.next()?;
    let skip = glued_marker(word);
    let first = &word[skip..];
    let start = from + rest.find(word)? + skip;
    let has_digit = |w: &str| w.chars().any(|c| c.is_ascii_digit());
    let end = if has_digit(first) {
        start + first.trim_end_matches(['.', ',', ';', ':', ')']).len()
    } else {
        let prefix = (2..=4).contains(&first.len())
            && first.chars().all(|c| c.is_ascii_uppercase())
            && !NUMBER_MARKERS.contains(&first.to_lowercase().as_str());
        let second = words
            .next()
            .filter(|w| prefix && w.starts_with(|c: char| c.is_ascii_digit()))?;
        let at = start + first.len() + text[start + first.len()..].find(second)?;
        at + second.trim_end_matches(['.', ',', ';', ':', ')']).len()
    };
    let end = end + hyphened_parts(&text[end..]);
    let end = end + part_suffix(&text[end..]);
    Some(Found {
        value: text[start..end].split_whitespace().collect(),
        start,
        end,
        quality: 1.0,
        normalized: true,
    })
}

/// The length of a number marker glued to the number by its dot or colon at the start of
/// `word` (`Nr.471102`, `No:17`), to pass over; 0 when there is none.
fn glued_marker(word: &str) -> usize {
    let Some(cut) = word.find(['.', ':']) else {
        return 0;
    };
    let marker = word[..cut].to_lowercase();
    let number = &word[cut + 1..];
    let glued = NUMBER_MARKERS.contains(&marker.as_str())
        && number.starts_with(|c: char| c.is_ascii_alphanumeric())
        && number.chars().any(|c| c.is_ascii_digit());
    if glued {
        cut + 1
    } else {
        0
    }
}

/// A code of capital letters alone at `from` (`NFCZMQ`, a booking code behind `Rechnungsnummer:`),
/// less surely: a word in capitals (`PENDING`) reads the same.
fn letters_code(text: &str, from: usize) -> Option<Found> {
    let rest = &text[from..];
    let word = rest.split_whitespace().next()?;
    let code = word.trim_end_matches(['.', ',', ';', ')']);
    let ok = (LETTERS_CODE.0..=LETTERS_CODE.1).contains(&code.len())
        && code.chars().all(|c| c.is_ascii_uppercase());
    let start = from + rest.find(word)?;
    ok.then(|| Found {
        value: code.to_string(),
        start,
        end: start + code.len(),
        quality: LETTERS_ONLY,
        normalized: true,
    })
}

/// The length of the groups that continue a number behind a hyphen set apart by spaces
/// (`083 -72561`, `HA007 - 123123 - 37816396`): each group letters and digits with a digit; a
/// date or a word there (`- 21.03.2023`, `- Page 1`) is another value.
fn hyphened_parts(rest: &str) -> usize {
    let mut len = 0;
    loop {
        let tail = &rest[len..];
        let Some(after) = tail.trim_start().strip_prefix(['-', '–']) else {
            return len;
        };
        let spaced =
            tail.starts_with(char::is_whitespace) || after.starts_with(char::is_whitespace);
        let after = after.trim_start();
        let group = after.split_whitespace().next().unwrap_or("");
        let group = group.trim_end_matches(['.', ',', ';', ':', ')']);
        let ok = spaced
            && group.chars().all(|c| c.is_ascii_alphanumeric())
            && group.chars().any(|c| c.is_ascii_digit());
        if !ok {
            return len;
        }
        len = rest.len() - after.len() + group.len();
    }
}

/// The length of a part number printed after a number behind a slash (`030405755 / 1`, a
/// hotel's sub-folio; `RE-1001/2`): one to three letters or digits ending the word. A longer
/// word after the slash (`/ 16.05.2022`, `/ 2026`) is another value.
fn part_suffix(rest: &str) -> usize {
    let after_slash = rest.trim_start().strip_prefix('/').map(str::trim_start);
    let Some(after) = after_slash else {
        return 0;
    };
    let part = after.split_whitespace().next().unwrap_or("");
    let ok = (1..=3).contains(&part.len()) && part.chars().all(|c| c.is_ascii_alphanumeric());
    if ok {
        rest.len() - after.len() + part.len()
    } else {
        0
    }
}

impl Extractor<'_> {
    pub(super) fn invoice_number(&self, pages: &[Vec<Ctx>]) -> Option<Field> {
        let candidates = self.number_candidates(pages);
        // Specific labels that name different numbers (`Invoice No 17` and `Invoice No 18`):
        // the best has no margin over the runner-up.
        let specific: HashSet<&str> = candidates
            .iter()
            .filter(|(c, _)| !self.number.is_generic(c.priority))
            .map(|(c, _)| c.field.value.as_str())
            .collect();
        let contested = specific.len() > 1;
        let best = preferred(candidates);
        let after_title = || self.number_after_title(pages.first()?);
        match best {
            Some(c) if !self.number.is_generic(c.priority) => {
                let mut field = c.field;
                if contested {
                    field.confidence *= NUMBER_CONTESTED;
                }
                Some(field)
            }
            // A generic label (`Nummer 50417`) names a number, but of what is the reader's
            // call: the number after the title is the invoice's, else the generic one, less
            // surely.
            Some(c) => after_title().or_else(|| {
                let mut field = c.field;
                field.confidence *= GENERIC_NUMBER;
                Some(field)
            }),
            None => after_title()
                .or_else(|| self.number_under_title_column(pages.first()?))
                .or_else(|| self.number_after_marker(pages.first()?)),
        }
    }

    /// The page's every reading of the invoice number: behind a label of its own, and after
    /// the document's title (`Handelsrechnung Nr. E2018092011804` above a note's
    /// `Belegnummer 2018092011804`).
    pub(super) fn number_readings(&self, pages: &[Vec<Ctx>]) -> Vec<Field> {
        let labelled = self.number_candidates(pages).into_iter();
        labelled
            .filter(|(c, _)| !self.number.is_generic(c.priority))
            .map(|(c, _)| c.field)
            .chain(pages.first().and_then(|p| self.number_after_title(p)))
            .collect()
    }

    /// The labelled candidates for the invoice number.
    fn number_candidates<'p>(&self, pages: &'p [Vec<Ctx<'p>>]) -> Vec<(Candidate, &'p Ctx<'p>)> {
        let same = |ctx: &Ctx, from: usize| {
            token(ctx.text(), from).or_else(|| letters_code(ctx.text(), from))
        };
        let next = |ctx: &Ctx| {
            let text = ctx.text();
            (text.split_whitespace().count() == 1)
                .then(|| token(text, 0))
                .flatten()
        };
        let mut candidates = self.labelled(pages, &self.number, false, same, next);
        // A code of letters alone is a number only behind an invoice number's own label.
        candidates.retain(|(c, _)| {
            !self.number.is_generic(c.priority)
                || c.field.value.chars().any(|ch| ch.is_ascii_digit())
        });
        candidates
    }

    /// The first line of page 1 that starts with a document title followed by a number, or
    /// that holds a key and value pair of columns whose key is a title alone (`Arve saaja:` on
    /// the left, `Arve   7008605` right of it; not `Standard:   XRechnung 1.2`).
    fn number_after_title(&self, page: &[Ctx]) -> Option<Field> {
        page.iter().find_map(|ctx| {
            let text = ctx.text();
            let words: Vec<(usize, &str)> = text
                .split_whitespace()
                .map(|w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
                .collect();
            let boxes: Vec<_> = ctx.word_boxes().collect();
            let column_start = |at: usize| {
                boxes
                    .iter()
                    .position(|&(s, _, _)| s == at)
                    .is_some_and(|i| {
                        i > 0 && boxes[i].2.left - boxes[i - 1].2.right() >= COLUMN_GAP
                    })
            };
            (0..words.len())
                .filter(|&k| {
                    k == 0
                        || (column_start(words[k].0)
                            && words.get(k + 1).is_some_and(|w| column_start(w.0)))
                })
                .find_map(|k| self.title_then_number(ctx, &words[k..]))
        })
    }

    /// The number after `words`' first word if it is a document title: right after it (an
    /// aside in parentheses skipped), or after a marker a few words on.
    fn title_then_number(&self, ctx: &Ctx, words: &[(usize, &str)]) -> Option<Field> {
        let text = ctx.text();
        let (_, first) = words.first()?;
        if !self.is_title_word(first) {
            return None;
        }
        let mut rest = words[1..]
            .iter()
            .skip_while(|(_, w)| w.starts_with('(') && w.ends_with(')'));
        let (at, _) = rest.next()?;
        if let Some(found) = self.number_token(text, *at) {
            return Some(ctx.field(&found));
        }
        let marker = words[1..].iter().take(TITLE_GAP + 1).position(|(_, w)| {
            norm_words(w)
                .first()
                .is_some_and(|n| NUMBER_MARKERS.contains(&n.as_str()))
                || *w == "#"
        })?;
        let (at, _) = words.get(marker + 2)?;
        Some(ctx.field(&self.number_token(text, *at)?))
    }

    /// The number below the first column of a table's header row on page 1 that a document
    /// title names alone (`Klant  Order  Factuur datum  Factuur  Vervaldatum`, the second
    /// `Factuur` over `VF1005193039`): a column of invoices numbers them, most likely.
    fn number_under_title_column(&self, page: &[Ctx]) -> Option<Field> {
        let same = |c: &Ctx, at: usize| self.number_token(c.text(), at);
        let next = |_: &Ctx| None;
        page.iter().enumerate().find_map(|(i, ctx)| {
            let words: Vec<_> = ctx.word_boxes().collect();
            let column = (0..words.len()).find(|&k| {
                let (s, e, b) = words[k];
                let apart_before = k == 0 || b.left - words[k - 1].2.right() >= COLUMN_GAP;
                let apart_after = words
                    .get(k + 1)
                    .is_some_and(|w| w.2.left - b.right() >= COLUMN_GAP);
                apart_before && apart_after && self.is_title_word(&ctx.text()[s..e])
            })?;
            let (s, e, _) = words[column];
            let (mut found, at) =
                self.off_the_line(page, i, &Hit::spanning(s, e), false, &same, &next)?;
            found.quality *= TITLE_COLUMN;
            Some(at.field(&found))
        })
    }

    /// The first line of page 1 that is a number marker and a number alone (`N° 2023-6013`
    /// under a title and a date stacked above it; the OCR's `n®` for `nº`): what it numbers is
    /// a guess, for a person to check.
    fn number_after_marker(&self, page: &[Ctx]) -> Option<Field> {
        page.iter().find_map(|ctx| {
            let text = ctx.text();
            let words: Vec<&str> = text.split_whitespace().collect();
            let [marker, _] = words.as_slice() else {
                return None;
            };
            let norm = norm_words(marker);
            if !matches!(norm.as_slice(), [n] if NUMBER_MARKERS.contains(&n.as_str())) {
                return None;
            }
            let at = text.rfind(words[1])?;
            let mut found = self.number_token(text, at)?;
            found.quality = MARKER_NUMBER;
            Some(ctx.field(&found))
        })
    }

    /// A number-shaped token at byte `at` of `text`: with a digit, not a date.
    fn number_token(&self, text: &str, at: usize) -> Option<Found> {
        let mut found = token(text, at)?;
        if self
            .dates(text)
            .iter()
            .any(|d| d.start < found.end && d.end > found.start)
        {
            return None;
        }
        found.quality = TITLE_NUMBER;
        Some(found)
    }

    /// A document title's word (`Invoice`, `Facture`), or a German compound of `Rechnung`.
    pub(super) fn is_title_word(&self, word: &str) -> bool {
        let words = norm_words(word);
        let [norm] = words.as_slice() else {
            return false;
        };
        norm.ends_with("rechnung") || self.titles.iter().any(|t| t.len() == 1 && &t[0] == norm)
    }
}
