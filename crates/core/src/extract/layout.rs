//! Where a label's value is when it does not follow the label on its line: in the line beside
//! it on the same row (a column of labels, a column of values), or below it in its column (a
//! table's header over its rows), found from the OCR's boxes; or, as the OCR orders the lines,
//! alone on the next line.

use super::labels::Hit;
use super::line::{Ctx, Found};
use super::{Extractor, BELOW_LABEL, BESIDE_LABEL, NEXT_LINE, ROWS_UNDER_LABEL};
use crate::model::fields::parse_amount_cents;

/// How far below a label (in its line's heights) a value may stand.
const BELOW_LINES: f64 = 3.0;
/// How far right of a label (page widths) the value beside it may start.
const BESIDE_WIDTH: f64 = 0.45;
/// At most this many words after a label qualify it (`gemaakte kosten (incl. btw)`).
const QUALIFIER_WORDS: usize = 4;
/// Slack when comparing positions (page widths), for OCR boxes that do not align exactly.
const SLACK: f64 = 0.01;

impl Extractor<'_> {
    /// The value of the label `hit` of `lines[i]` found off its line, and the line it is on.
    /// `alone`: nothing but punctuation follows the label. `same` reads a value at a byte
    /// offset of a line, `next` a line holding nothing but the value.
    pub(super) fn off_the_line<'p>(
        &self,
        lines: &'p [Ctx<'p>],
        i: usize,
        hit: &Hit,
        alone: bool,
        same: &impl Fn(&Ctx, usize) -> Option<Found>,
        next: &impl Fn(&Ctx) -> Option<Found>,
    ) -> Option<(Found, &'p Ctx<'p>)> {
        let ctx = &lines[i];
        let (left, right) = ctx.span_x(hit.start, hit.end)?;
        let b = ctx.bbox();
        let h = b.height.max(0.005);
        if alone {
            if let Some(c) = beside(lines, ctx, right) {
                if let Some(mut f) = same(c, 0) {
                    f.quality *= BESIDE_LABEL;
                    return Some((f, c));
                }
            }
            if let Some(c) = lines.get(i + 1) {
                if let Some(mut f) = next(c) {
                    f.quality *= NEXT_LINE;
                    return Some((f, c));
                }
            }
        } else {
            let rest = &ctx.text()[hit.end..];
            // A label and a few words qualifying it (`Totaal gemaakte kosten (incl. btw)`),
            // its value at the right of the row.
            if is_qualifier(rest) {
                if let Some(c) = beside(lines, ctx, b.right()) {
                    if let Some(mut f) = same(c, 0) {
                        f.quality *= BESIDE_LABEL;
                        return Some((f, c));
                    }
                }
            }
            if !is_header_row(rest) {
                return None;
            }
        }
        // Below: the column of values under the label, one row after another.
        let mut rows: Vec<(Found, &'p Ctx<'p>)> = vec![];
        let mut above = b.top;
        loop {
            let below = lines
                .iter()
                .filter(|c| c.page() == ctx.page())
                .filter(|c| {
                    let top = c.bbox().top;
                    top > above + h / 2.0 && top < above + h * (1.0 + BELOW_LINES)
                })
                .filter_map(|c| Some((c, c.word_at_x(left, right)?)))
                .min_by(|(a, _), (b, _)| a.bbox().top.total_cmp(&b.bbox().top));
            let Some((c, at)) = below else { break };
            let Some(mut f) = same(c, at) else { break };
            // The value must start in the label's column, not in the next one.
            match c.span_x(f.start, f.end) {
                Some((vl, _)) if vl <= right + SLACK => {}
                _ => break,
            }
            f.quality *= BELOW_LABEL;
            rows.push((f, c));
            above = c.bbox().top;
        }
        pick_row(rows)
    }
}

/// The nearest line to the right of `right` on the row of `ctx` (a column of values beside a
/// column of labels).
pub(super) fn beside<'p>(lines: &'p [Ctx<'p>], ctx: &Ctx, right: f64) -> Option<&'p Ctx<'p>> {
    let b = ctx.bbox();
    let h = b.height.max(0.005);
    lines
        .iter()
        .filter(|c| c.order != ctx.order && c.page() == ctx.page())
        .filter(|c| {
            let cb = c.bbox();
            let mid = cb.top + cb.height / 2.0;
            mid > b.top
                && mid < b.top + h
                && cb.left >= right - SLACK
                && cb.left - right < BESIDE_WIDTH
        })
        .min_by(|a, b| a.bbox().left.total_cmp(&b.bbox().left))
}

/// The value of a column of rows under a label: the last row when it is the sum of the rows
/// above it (a table's total row: `382.47`, `136.52`, `518.99`); else the first row, less
/// surely when other rows show other values (which row the label means is a person's call).
fn pick_row<'p>(mut rows: Vec<(Found, &'p Ctx<'p>)>) -> Option<(Found, &'p Ctx<'p>)> {
    let cents: Option<Vec<i128>> = rows
        .iter()
        .map(|(f, _)| parse_amount_cents(&f.value))
        .collect();
    if let Some([above @ .., last]) = cents.as_deref() {
        if above.len() >= 2 && above.iter().sum::<i128>() == *last {
            return rows.pop();
        }
    }
    let agree = rows.iter().all(|(f, _)| f.value == rows[0].0.value);
    let (mut first, c) = rows.into_iter().next()?;
    if !agree {
        first.quality *= ROWS_UNDER_LABEL;
    }
    Some((first, c))
}

/// Whether the text after a label only qualifies it: a few words, no figures, no sentence's
/// end (`gemaakte kosten (incl. btw)`, `amount due (EUR)`).
fn is_qualifier(rest: &str) -> bool {
    let rest = rest.trim();
    !rest.is_empty()
        && rest.split_whitespace().count() <= QUALIFIER_WORDS
        && !rest.ends_with('.')
        && !rest.chars().any(|c| c.is_ascii_digit())
}

/// Whether the text after a label reads as the rest of a table's header row: other column
/// names, no figures (a value that failed to read, `CP -88412`, is no header), not a sentence
/// (`... die Rechnungsnummer an.`, `please quote it with your payment`; column names may have
/// lower-case words, `Fecha de vencimiento`, `Scadenza pagamento`, but not mostly).
fn is_header_row(rest: &str) -> bool {
    let rest = rest.trim();
    let words = rest.split_whitespace().count();
    let lower = rest
        .split_whitespace()
        .filter(|w| w.chars().next().is_some_and(char::is_lowercase))
        .count();
    let sentence = rest.ends_with('.') && words >= 2 || lower >= 3 && 2 * lower > words;
    !sentence && !rest.chars().any(|c| c.is_ascii_digit())
}
