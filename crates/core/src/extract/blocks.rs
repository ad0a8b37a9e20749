//! The blocks of a page that name a party: the addressee's (under a recipient label, a
//! letter's return address, or a label behind a table's border) and the seller's (under a
//! seller's label alone on its line). The issuer's evidence (`letterhead.rs`) leaves the first
//! out and counts the second.

use std::collections::HashSet;

use super::layout::beside;
use super::line::Ctx;
use super::Extractor;

/// A letter's window (a return address over the addressee) lies above this.
const WINDOW_BOTTOM: f64 = 0.5;
/// Separators of a sender line's parts.
const SEPARATORS: &[&str] = &[" | ", " - ", " – ", " — ", " · ", " • ", " / "];

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
        out
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
        for (k, c) in column.enumerate() {
            let text = c.text();
            let name = self.looks_like_name(text) || self.name_before_suffix(text).is_some();
            if name && !named || k == 0 {
                named |= name;
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
