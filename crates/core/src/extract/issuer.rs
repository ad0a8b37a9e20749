//! The issuer: behind an explicit label (`From:`, `Seller:`) at the start of a line, or else from
//! the evidence on the first page (`letterhead.rs`); what an organisation name looks like.

use unicode_normalization::UnicodeNormalization;

use super::labels::first_preferred;
use super::line::{Ctx, Found};
use super::Extractor;

/// The gap (page widths) between two texts of a line that stand in separate columns; words of
/// one phrase stand about a hundredth apart.
const COLUMN_GAP: f64 = 0.1;
use crate::model::fields::Field;

/// Lower-case words of a text with only letters and digits kept, without accents (`Co.,` →
/// `co`, `(haftungsbeschränkt)` → `haftungsbeschrankt`): OCR often drops them.
pub(super) fn norm_words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .map(|w| {
            w.nfd()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Organisation names are written in title or upper case and are not sentences: every word
/// starts with a capital or contains one (`eBay`), except short connectors (`Smith & Sons`,
/// `Bank of Ireland`, `Müller und Söhne`, `Hampton Inn by Hilton`); no `!` or `?`; at most
/// eight words.
pub(super) fn org_shaped(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    if let [word] = words[..] {
        if site_name(word) {
            return true;
        }
    }
    words.len() <= 8
        && !text.contains(['!', '?'])
        && words.iter().all(|w| {
            let core = w.trim_matches(|c: char| !c.is_alphanumeric());
            !core.chars().next().is_some_and(char::is_alphabetic)
                || core.chars().any(char::is_uppercase)
                || is_connector(w)
        })
}

/// A web site's name alone, the way a brand in lower case signs its letterhead (`bol.com`):
/// letters, digits and hyphens, a dot and a top-level domain of letters.
fn site_name(word: &str) -> bool {
    let word = word.trim_end_matches(|c: char| !c.is_alphanumeric());
    let Some((name, tld)) = word.rsplit_once('.') else {
        return false;
    };
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && (2..=6).contains(&tld.len())
        && tld.chars().all(|c| c.is_ascii_lowercase())
}

/// A short word that joins the words of a name (`and`, `&`, `y`, `van`), in lower case.
pub(super) fn is_connector(w: &str) -> bool {
    const CONNECTORS: &[&str] = &[
        "and", "of", "the", "for", "und", "der", "die", "des", "den", "de", "du", "la", "le", "et",
        "van", "von", "y", "e", "en", "del", "di", "by", "par", "&", "+",
    ];
    let core = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '&' && c != '+');
    CONNECTORS.contains(&core)
}

/// Whether the text of `ctx` from byte `rest` on stands in a column of its own, a gap of
/// [`COLUMN_GAP`] or more right of the text from `start` to there.
fn own_column(ctx: &Ctx, start: usize, rest: usize) -> bool {
    let (Some((_, right)), Some((left, _))) =
        (ctx.span_x(start, rest), ctx.span_x(rest, ctx.text().len()))
    else {
        return false;
    };
    left - right >= COLUMN_GAP
}

/// Where the value of a line that begins with a one-word label and its colon starts (`Name:
/// Taxiunternehmen TX GmbH`); `None` for any other line.
fn line_label(text: &str) -> Option<usize> {
    let (label, _) = text.split_once(':')?;
    let one_word = !label.trim().is_empty()
        && !label.trim().contains(char::is_whitespace)
        && label.trim().chars().all(char::is_alphabetic);
    let rest = &text[label.len() + 1..];
    (one_word && !rest.trim().is_empty()).then(|| text.len() - rest.trim_start().len())
}

fn letters(text: &str) -> usize {
    text.chars().filter(|c| c.is_alphabetic()).count()
}

impl Extractor<'_> {
    pub(super) fn issuer(&self, pages: &[Vec<Ctx>]) -> Option<Field> {
        let same = |ctx: &Ctx, from: usize| {
            let text = ctx.text();
            // `Seller: Acme`, not `Lieferant GmbH`: a name may start with a label's word.
            if !text[..from].trim_end().ends_with(':') {
                return None;
            }
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
            // A block whose lines are labelled (`Name: Taxiunternehmen TX GmbH` under
            // `Verkäufer`, `Anschrift: ...` under it): the name behind its line's label.
            let text = ctx.text();
            let from = line_label(text).unwrap_or(0);
            self.looks_like_org(ctx)
                .then(|| self.issuer_value(text, from, text.len()))
                .flatten()
        };
        let labelled = self.labelled(pages, &self.issuer, true, same, next);
        if let Some(field) = first_preferred(labelled) {
            return Some(field);
        }

        self.issuer_from_evidence(pages)
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

    /// `Bill To`, `ATTN: Globex`, `Party | Globex`: a recipient label at the start of the line,
    /// followed by nothing, `:`, a table's border or another column's words
    /// (`Rechnungsempfänger     Kundennummer 123`); or a line of recipient labels alone
    /// (`Käufer/Leistungsempfänger:`).
    pub(super) fn is_recipient_label(&self, ctx: &Ctx) -> bool {
        let text = ctx.text();
        let hits = self.recipients.hits(text);
        let leading = hits.iter().any(|h| {
            let rest = text[h.end..].trim_start_matches(|c: char| c.is_whitespace() || c == ':');
            h.leads(text)
                && (text[h.end..]
                    .trim_start()
                    .chars()
                    .next()
                    .is_none_or(|c| c == ':' || c == '|')
                    || own_column(ctx, h.start, text.len() - rest.len()))
        });
        let mut covered = vec![false; text.len()];
        for h in &hits {
            covered[h.start..h.end].iter_mut().for_each(|c| *c = true);
        }
        let only_labels = !hits.is_empty()
            && text.char_indices().all(|(i, c)| {
                covered[i] || c.is_whitespace() || matches!(c, ':' | '/' | '&' | '-' | ',')
            });
        leading || only_labels
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
        // `Nummer:` is a label of its own, not a name.
        if !self.plausible_org(text)
            || self.titles.contains(&norm_words(text))
            || !org_shaped(text)
            || text.trim_end().ends_with(':')
        {
            return false;
        }
        self.label_free(text)
    }

    /// Whether no field's or recipient's label is in `text`.
    pub(super) fn label_free(&self, text: &str) -> bool {
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
    pub(super) fn plausible_org(&self, text: &str) -> bool {
        let lower = text.to_lowercase();
        letters(text) >= 2
            && !["@", "www.", "http", "://"]
                .iter()
                .any(|s| lower.contains(s))
            && (!text.chars().any(|c| c.is_ascii_digit()) || self.has_company_suffix(text))
            && self.dates(text).is_empty()
    }
}
