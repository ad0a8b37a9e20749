//! The blocks of a page that name a party: the addressee's (under a recipient label, a
//! letter's return address, or a label behind a table's border; without any of them, the
//! postal address that lacks the contact details another postal address beside it shows; and
//! always a postal address a person's salutation heads) and
//! the seller's (under a seller's label alone on its line). The issuer's evidence
//! (`letterhead.rs`) leaves the first out and counts the second.

use std::collections::HashSet;

use super::issuer::norm_words;
use super::layout::beside;
use super::line::Ctx;
use super::Extractor;
use crate::ocr::BoundingBox;

/// A letter's window (a return address over the addressee) lies above this.
const WINDOW_BOTTOM: f64 = 0.5;
/// Separators of a sender line's parts.
const SEPARATORS: &[&str] = &[" | ", " - ", " – ", " — ", " · ", " • ", " / "];
/// The next line of an addressee's block under its label starts at most this far below the
/// last one's top (the label's for its first line).
const ADDRESS_GAP: f64 = 0.08;
/// The next line of a block starts at most this far below the last one's top (a blank line
/// between an address and its contact details is still one block).
const BLOCK_LINE_GAP: f64 = 0.04;
/// Lines of a block share their left or their right edge within this.
const BLOCK_ALIGN: f64 = 0.02;
/// Words of a line of contact details.
const CONTACT_WORDS: &[&str] = &["tel", "telefon", "telephone", "phone", "fon", "fax", "mob"];
/// Words before a person's name heading an addressee (`Mr Jens Walter`, `z. Hd.`).
const SALUTATIONS: &[&str] = &["mr", "mrs", "ms", "herr", "herrn", "frau", "hd", "mme", "m"];

impl Extractor<'_> {
    /// The lines of the seller's block: under an issuer label alone on its line (`Verkäufer:`)
    /// the name and reference lines in its column, and a bare label's value beside them
    /// (`Name:` | `Acme GmbH`), as [`Self::block_below`] reads an addressee's.
    pub(super) fn seller_lines(&self, page: &[Ctx]) -> HashSet<usize> {
        let mut out = HashSet::new();
        for (i, ctx) in page.iter().enumerate() {
            let text = ctx.text();
            let alone = self
                .issuer
                .hits(text)
                .iter()
                .any(|h| h.leads(text) && h.ends_line(text));
            if alone {
                self.block_below(page, i, ctx.bbox().left, &mut out);
            }
        }
        out
    }

    /// The lines of the addressee block: the line after a recipient label (`Bill To`, or a
    /// label with the name on its own line) and the address lines below it in its column, and
    /// the block under a sender line (the window of a letter).
    pub(super) fn addressee_lines(&self, page: &[Ctx]) -> HashSet<usize> {
        let mut out = HashSet::new();
        for (i, ctx) in page.iter().enumerate() {
            // Where each block starts: under each recipient label of the line (`Invoice to:
            // ... Deliver to:` heads two columns), or under a sender line.
            let columns: Vec<f64> = if self.is_recipient_label(ctx) {
                out.insert(ctx.order);
                self.recipients
                    .hits(ctx.text())
                    .iter()
                    .filter_map(|h| ctx.span_x(h.start, h.end).map(|(left, _)| left))
                    .collect()
            } else if is_sender_line(ctx.text()) && ctx.bbox().top < WINDOW_BOTTOM {
                // A return address over a letter's window; in the footer, a line of parts
                // (`Registergericht ... | Ust.-IdNr. ... | Steuer-Nr. ...`) heads no addressee.
                vec![ctx.bbox().left]
            } else {
                continue;
            };
            for left in columns {
                self.block_below(page, i, left, &mut out);
            }
        }
        if out.is_empty() {
            out = self.unlabelled_addressee(page);
        }
        out.extend(self.window_addressee(page));
        out
    }

    /// The lines of each postal address in the top half that a person's salutation heads
    /// (`Mr Jens Walter`, then the company, the street, the postcode, on the salutation's
    /// left edge; up to its postcode): a sender does not begin its letterhead with `Mr`; a
    /// letter's window does.
    fn window_addressee(&self, page: &[Ctx]) -> Vec<usize> {
        let top = top_half(page);
        let none = HashSet::new();
        let left = |a: BoundingBox, b: BoundingBox| (a.left - b.left).abs() < BLOCK_ALIGN;
        top.iter()
            .filter(|&&i| salutation(page[i].text()))
            .map(|&i| run_below(page, &top, i, left, &none))
            .filter(|b| self.postal_address(page, b))
            .flat_map(|b| self.to_postcode(page, b).into_iter().map(|i| page[i].order))
            .collect()
    }

    /// A postal address's lines up to its postcode's line (past the name and the street's),
    /// and the country's name after it: the lines below are another block's.
    fn to_postcode(&self, page: &[Ctx], mut block: Vec<usize>) -> Vec<usize> {
        if let Some(at) = (2..block.len()).find(|&k| postcode_line(page[block[k]].text())) {
            let country = block
                .get(at + 1)
                .is_some_and(|&i| self.is_country(page[i].text()));
            block.truncate(at + 1 + usize::from(country));
        }
        block
    }

    /// Without a label or a return address: the lines of each postal address (a name, then a
    /// postcode line) in the top half that shows no contact details, when another postal
    /// address there has them in its block (`Tel:`, `@`, `www.`): a sender prints how to reach
    /// it, the window of a letter holds only where the letter goes.
    fn unlabelled_addressee(&self, page: &[Ctx]) -> HashSet<usize> {
        let blocks = column_blocks(page);
        let contact = |block: &[usize]| block.iter().any(|&i| contact_line(page[i].text()));
        let reachable = blocks
            .iter()
            .any(|b| contact(b) && self.postal_address(page, b));
        if !reachable {
            return HashSet::new();
        }
        blocks
            .iter()
            .filter(|b| !contact(b) && self.postal_address(page, b))
            .flat_map(|b| b.iter().map(|&i| page[i].order))
            .collect()
    }

    /// A name (after a person's line, if any), a street's line and a line with a postcode.
    fn postal_address(&self, page: &[Ctx], block: &[usize]) -> bool {
        let texts: Vec<&str> = block.iter().map(|&i| page[i].text()).collect();
        let name = |t: &str| self.looks_like_name(t) || self.name_before_suffix(t).is_some();
        // The name on the person's line (`Mr. APImeister GmbH`) or on the line after it.
        let first = usize::from(texts.len() > 1 && salutation(texts[0]) && !name(texts[0]));
        texts.get(first).is_some_and(|t| name(t))
            && texts.len() > first + 2
            && texts[first + 2..].iter().any(|t| postcode_line(t))
    }

    /// The addressee's name (the first name below, or the line right after the label) and
    /// its address and reference lines (with digits, or `Kunde: 123`), in the column at `left`
    /// under `page[head]`; a bare label's value beside it (`Name:` | `Globex GmbH`) too.
    fn block_below(&self, page: &[Ctx], head: usize, left: f64, out: &mut HashSet<usize>) {
        let head = &page[head];
        let column = page
            .iter()
            .filter(|c| c.order > head.order)
            .filter(|c| (c.bbox().left - left).abs() < 0.03 && c.bbox().top > head.bbox().top)
            .take(5);
        let mut named = false;
        // A company's name with its legal form may follow a person's (`Thomas Flassbeck`,
        // `SimFin Analytics GmbH`): the person to attend to it, at the company.
        let mut company = false;
        let mut above = head.bbox().top;
        for (k, c) in column.enumerate() {
            // A block's lines follow each other; a line far below is another block's.
            if c.bbox().top - above > ADDRESS_GAP {
                break;
            }
            above = c.bbox().top;
            let text = c.text();
            let legal_form = self.name_before_suffix(text).is_some();
            let name = self.looks_like_name(text) || legal_form;
            if name && (!named || legal_form && !company) || k == 0 {
                named |= name;
                company |= legal_form;
                out.insert(c.order);
            } else if !name && (text.contains(':') || text.chars().any(|ch| ch.is_ascii_digit())) {
                out.insert(c.order);
                if text.trim_end().ends_with(':') {
                    let value = c
                        .span_x(0, text.len())
                        .and_then(|(_, right)| beside(page, c, right));
                    if let Some(value) = value {
                        out.insert(value.order);
                    }
                }
            } else {
                break;
            }
        }
    }
}

/// A sender line: a name, then address parts (one with digits), at least three parts between
/// separators (`Acme GmbH | Europa-Allee 1 | 60486 Frankfurt`; not `New Delhi - 110001`).
pub(super) fn is_sender_line(text: &str) -> bool {
    let parts = split_parts(text);
    parts.len() >= 3
        && parts[1..]
            .iter()
            .any(|(s, e)| text[*s..*e].chars().any(|c| c.is_ascii_digit()))
}

/// The byte spans of a line's parts between sender-line separators, trimmed.
pub(super) fn split_parts(text: &str) -> Vec<(usize, usize)> {
    let mut cuts: Vec<(usize, usize)> = SEPARATORS
        .iter()
        .flat_map(|sep| text.match_indices(sep).map(|(i, s)| (i, i + s.len())))
        .collect();
    cuts.sort_unstable();
    let mut out = vec![];
    let mut from = 0;
    for (s, e) in cuts {
        if s >= from {
            out.push((from, s));
            from = e;
        }
    }
    out.push((from, text.len()));
    out.into_iter()
        .map(|(s, e)| {
            let part = &text[s..e];
            let lead = part.len() - part.trim_start().len();
            (s + lead, s + lead + part.trim().len())
        })
        .filter(|(s, e)| e > s)
        .collect()
}

/// The page's blocks in its top half: runs of lines, each starting just below the last one and
/// sharing its left or its right edge (indices into `page`, top to bottom; every line in one).
fn column_blocks(page: &[Ctx]) -> Vec<Vec<usize>> {
    let top = top_half(page);
    let either = |a: BoundingBox, b: BoundingBox| {
        (a.left - b.left).abs() < BLOCK_ALIGN || (a.right() - b.right()).abs() < BLOCK_ALIGN
    };
    let mut taken = HashSet::new();
    let mut out = vec![];
    for &start in &top {
        if !taken.contains(&start) {
            let block = run_below(page, &top, start, either, &taken);
            taken.extend(block.iter().copied());
            out.push(block);
        }
    }
    out
}

/// The lines of the page's top half (indices into `page`), top to bottom.
fn top_half(page: &[Ctx]) -> Vec<usize> {
    let mut by_top: Vec<usize> = (0..page.len())
        .filter(|&i| page[i].bbox().top < WINDOW_BOTTOM)
        .collect();
    by_top.sort_by(|&a, &b| page[a].bbox().top.total_cmp(&page[b].bbox().top));
    by_top
}

/// The run of lines of `lines` (top to bottom) from `start` on, none of `taken`: each the first
/// to start just below the last one and `aligned` with it.
fn run_below(
    page: &[Ctx],
    lines: &[usize],
    start: usize,
    aligned: impl Fn(BoundingBox, BoundingBox) -> bool,
    taken: &HashSet<usize>,
) -> Vec<usize> {
    let mut run = vec![start];
    let mut last = page[start].bbox();
    while let Some(next) = lines.iter().copied().find(|&i| {
        let b = page[i].bbox();
        !taken.contains(&i)
            && !run.contains(&i)
            && b.top > last.top
            && b.top - last.top <= BLOCK_LINE_GAP
            && aligned(b, last)
    }) {
        run.push(next);
        last = page[next].bbox();
    }
    run
}

/// A line of contact details: a phone's or fax's label, an e-mail address or a website.
fn contact_line(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.contains('@')
        || lower.contains("www.")
        || norm_words(text)
            .iter()
            .any(|w| CONTACT_WORDS.contains(&w.as_str()))
}

/// A line that names a person to whom the letter goes (`Mr Jens Walter`, `Herrn Max Muster`).
pub(super) fn salutation(text: &str) -> bool {
    norm_words(text)
        .first()
        .is_some_and(|w| SALUTATIONS.contains(&w.as_str()))
}

/// A postcode beside a place's name (`10117 Berlin`, `Berlin 10117`, `NL-1057 PH Amsterdam`):
/// a group of four to six digits before any label's colon, and a word of letters.
fn postcode_line(text: &str) -> bool {
    let head = text.split(':').next().unwrap_or(text);
    let words: Vec<&str> = head.split_whitespace().collect();
    let code = |w: &str| {
        let digits = w.rsplit('-').next().unwrap_or(w);
        (4..=6).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit())
    };
    words.iter().any(|w| code(w))
        && words
            .iter()
            .any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 3)
}
