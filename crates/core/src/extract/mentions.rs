//! The names one line of page 1 mentions (`letterhead.rs` scores them): each part of a line
//! that looks like a name or ends in a legal form, the name before a capital's statement or above
//! one, a payee's company behind its label, a letterhead's name before its street; never a bank
//! (behind its label or before an IBAN) nor a copyright notice's publisher.

use super::blocks::{is_sender_line, salutation, split_parts};
use super::issuer::{is_connector, norm_words};
use super::labels::skip_separators;
use super::line::{Ctx, Found};
use super::Extractor;

/// Lines above this (page-relative) are the letterhead.
pub(super) const LETTERHEAD_BOTTOM: f64 = 0.3;
/// At most this many words make a name before its legal form.
const NAME_WORDS: usize = 6;
/// A gap this wide (page widths) between two words of a line parts two columns.
const COLUMN_SPLIT: f64 = 0.05;
/// A capital's statement without a name states the capital of a name at most this far above
/// it (page heights): two lines of a footer.
const STATED_ABOVE: f64 = 0.03;

/// One mention of a name.
pub(super) struct Mention<'c, 'p> {
    pub(super) ctx: &'c Ctx<'p>,
    pub(super) found: Found,
    /// With its legal form, or named by its capital's statement (`au capital de`).
    pub(super) suffix: bool,
    pub(super) sender: bool,
    /// Named as the payee of the bank details (`Account Name:`).
    pub(super) payee: bool,
}

impl Extractor<'_> {
    /// The names a line mentions: each separated part that is organisation-shaped or ends in a
    /// legal form (cut there), and the name before a legal form inside a longer text.
    pub(super) fn mentions<'c, 'p>(&self, ctx: &'c Ctx<'p>) -> Vec<Mention<'c, 'p>> {
        let text = ctx.text();
        if copyright_notice(text) {
            return vec![]; // the publisher of a form or a template, not the issuer
        }
        if let Some(payee) = self.payee_mention(ctx) {
            return vec![payee];
        }
        if bank_label(text) {
            return vec![]; // `Bank Name: The Karad Urban Co-operative Bank Ltd`: the payee's bank
        }
        let parts = split_parts(text);
        let sender = is_sender_line(text);
        let top = ctx.bbox().top < LETTERHEAD_BOTTOM;
        let mut out = vec![];
        // `Leonardo Royal Edinburgh Haymarket, 1 Morrison Link`: a letterhead's name and its
        // street, as a sender line names them.
        if let Some(cut) = name_and_street(text).filter(|_| top && parts.len() == 1) {
            if self.looks_like_name(&text[..cut]) {
                out.push(Mention {
                    ctx,
                    found: found(text, 0, cut),
                    suffix: false,
                    sender: true,
                    payee: false,
                });
                return out;
            }
        }
        // A sender line names its sender first; the other parts are its address.
        let parts = if sender { &parts[..1] } else { &parts[..] };
        for &(start, end) in parts {
            let part = &text[start..end];
            if let Some(name) = self.capital_statement(text, start, end) {
                out.push(Mention {
                    ctx,
                    found: name,
                    suffix: true,
                    sender,
                    payee: false,
                });
                continue;
            }
            // The OCR joins the columns of a row into one line (`Pfalzer Ufer 4    Semrush
            // Inc.`): a name with its legal form starts in the legal form's column.
            let with_suffix = columns(ctx, start, end).into_iter().find_map(|(s, e)| {
                let (ns, ne) = self.name_before_suffix(&text[s..e])?;
                Some((s + ns, s + ne))
            });
            if let Some((s, e)) = with_suffix {
                out.push(Mention {
                    ctx,
                    found: found(text, s, e),
                    suffix: true,
                    sender,
                    payee: false,
                });
            } else if sender && self.plausible_org(part) && self.label_free(part)
                || top && self.looks_like_name(part)
            {
                out.push(Mention {
                    ctx,
                    found: found(text, start, end),
                    suffix: false,
                    sender,
                    payee: false,
                });
            }
        }
        // `COOP PANK AS EE554204278638917403`: the bank that holds an account, not a party.
        out.retain(|m| !iban_follows(&text[m.found.end..]));
        out
    }

    /// The company whose capital the part `start..end` of `text` states: the words before the
    /// capital's label (`EDF-SA au capital de 1 549 961 789,50 €`), if they look like a name
    /// (a legal form alone, `SASU au capital de`, has no name's key and names nobody).
    fn capital_statement(&self, text: &str, start: usize, end: usize) -> Option<Found> {
        let hit = self.capitals.hits(&text[start..end]).into_iter().next()?;
        let before = text[start..start + hit.start]
            .trim_end()
            .trim_end_matches(',');
        let name = found(text, start, start + before.len());
        let words = name.value.split_whitespace().count();
        ((1..=NAME_WORDS).contains(&words)
            && self.plausible_org(&name.value)
            && super::issuer::org_shaped(&name.value)
            && self.label_free(&name.value))
        .then_some(name)
    }

    /// The name whose capital `ctx` states when the statement names none itself (`Sarl au
    /// capital de 10 000€` under `NETPRESSE`): the nearest name at most [`STATED_ABOVE`] above
    /// it (an address line may stand between), as surely as one with its legal form.
    pub(super) fn stated_above<'c, 'p>(
        &self,
        page: &'c [Ctx<'p>],
        ctx: &Ctx,
    ) -> Option<Mention<'c, 'p>> {
        let text = ctx.text();
        let hit = self.capitals.hits(text).into_iter().next()?;
        if !self.name_key(&text[..hit.start]).is_empty() {
            return None; // `EDF-SA au capital de`: the statement names its company
        }
        let top = ctx.bbox().top;
        let nearest_name = page
            .iter()
            .filter(|c| c.bbox().top < top && top - c.bbox().top <= STATED_ABOVE)
            .filter(|c| self.looks_like_name(c.text()))
            .max_by(|a, b| a.bbox().top.total_cmp(&b.bbox().top))?;
        Some(Mention {
            ctx: nearest_name,
            found: found(nearest_name.text(), 0, nearest_name.text().len()),
            suffix: true,
            sender: false,
            payee: false,
        })
    }

    /// The company behind a payee's label and its colon (`Titulaire du compte : NETPRESSE`,
    /// `Account Name: Coastwide Pest Control Limited Detach this ...`): up to its legal form,
    /// else the rest of the label's part of the line in upper case; not a person (`MME OU MR
    /// GUERIN`, `Max Mustermann`).
    fn payee_mention<'c, 'p>(&self, ctx: &'c Ctx<'p>) -> Option<Mention<'c, 'p>> {
        let text = ctx.text();
        let hit = self.payees.hits(text).into_iter().next()?;
        let from = skip_separators(text, hit.end);
        if !text[hit.end..from].contains(':') {
            return None; // `TVA payée sur les débits`: a word, not a label
        }
        let (_, end) = split_parts(text)
            .into_iter()
            .find(|&(s, e)| s <= from && from < e)?;
        let value = &text[from..end];
        if salutation(value) {
            return None;
        }
        let (span, suffix) = match self.name_before_suffix(value) {
            Some((s, e)) => ((from + s, from + e), true),
            // Without a legal form, a bank's upper-case account name (`NETPRESSE`), not a
            // person's (`Max Mustermann`).
            None if !value.chars().any(char::is_lowercase)
                && self.plausible_org(value)
                && self.label_free(value) =>
            {
                ((from, end), false)
            }
            None => return None,
        };
        Some(Mention {
            ctx,
            found: found(text, span.0, span.1),
            suffix,
            sender: false,
            payee: true,
        })
    }

    /// The span of `Name Words <legal form>` in `part`: the legal form, and before it the
    /// capitalised words of the name (title words and labels left out).
    pub(super) fn name_before_suffix(&self, part: &str) -> Option<(usize, usize)> {
        let words: Vec<(usize, &str)> = part
            .split_whitespace()
            .map(|w| (w.as_ptr() as usize - part.as_ptr() as usize, w))
            .collect();
        let normed: Vec<String> = words.iter().map(|(_, w)| norm_words(w).concat()).collect();
        for suffix_start in 1..words.len() {
            let Some(len) = self.legal_form_at(&normed[suffix_start..]) else {
                continue;
            };
            let end = suffix_start + len - 1;
            let labelled = words[..suffix_start].iter().any(|(_, w)| w.ends_with(':'));
            if end + 1 == words.len() && suffix_start <= NAME_WORDS && !labelled {
                // The whole part is the name (`Au bon moulin SARL`).
                let (e, w) = words[end];
                return Some((0, e + w.trim_end_matches([',', ';', ':']).len()));
            }
            let mut first = suffix_start;
            while first > 0 && suffix_start - first < NAME_WORDS {
                let (_, w) = words[first - 1];
                // `Betreiber: Citadines GmbH`: a label before the name is not part of it.
                if !name_word(w) || self.is_title_word(w) || w.ends_with(':') {
                    break;
                }
                first -= 1;
            }
            // A name starts with a name, not a connector (`... y Valdeoro S.L.`).
            while first < suffix_start && is_connector(words[first].1) {
                first += 1;
            }
            if first == suffix_start {
                continue; // a legal form alone (`GmbH ae`) names nobody
            }
            let (s, _) = words[first];
            let (e, w) = words[end];
            let e = e + w.trim_end_matches([',', ';', ':']).len();
            return Some((s, e));
        }
        None
    }

    /// How many of `words` (normalized) the longest legal form at their start spans
    /// (`GmbH & Co. KG` over `GmbH`; a word of punctuation alone, `&`, is passed over).
    pub(super) fn legal_form_at(&self, words: &[String]) -> Option<usize> {
        self.suffixes
            .iter()
            .filter(|form| !form.is_empty() && words.first() == form.first())
            .filter_map(|form| {
                let mut at = 0;
                for part in form {
                    while words.get(at).is_some_and(String::is_empty) {
                        at += 1;
                    }
                    if words.get(at) != Some(part) {
                        return None;
                    }
                    at += 1;
                }
                Some(at)
            })
            .max()
    }
}

/// Where the name ends in a line of a name, a comma and a street that starts with its number
/// (`Leonardo Royal Edinburgh Haymarket, 1 Morrison Link`): the name has no digits, the street
/// no label.
fn name_and_street(text: &str) -> Option<usize> {
    let (name, street) = text.split_once(", ")?;
    let number_first = street
        .split_whitespace()
        .next()
        .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()));
    let street_word = street
        .split_whitespace()
        .nth(1)
        .is_some_and(|w| w.chars().next().is_some_and(char::is_uppercase));
    // A label after it (`Paseo de la Ribera, 22   Web: www...`) is another column's, joined by
    // the OCR: the line may be an address alone.
    let labelled = street.contains(':');
    (!name.chars().any(|c| c.is_ascii_digit()) && number_first && street_word && !labelled)
        .then_some(name.len())
}

/// Whether `rest` starts with an IBAN (`EE55 4204 2786 ...`, `EE554204278638917403`): two
/// letters, two check digits and at least ten letters or digits, spaces left out.
fn iban_follows(rest: &str) -> bool {
    let compact: Vec<char> = rest
        .trim_start_matches(|c: char| c.is_whitespace() || c == ',')
        .chars()
        .filter(|c| *c != ' ')
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    compact.len() >= 14
        && compact[..2].iter().all(char::is_ascii_uppercase)
        && compact[2..4].iter().all(char::is_ascii_digit)
        && compact[4..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// A line led by a bank's label (`Bank Name:`, `Bank:`, `Banque :`, `Bankverbindung:`, `Pank
/// =`): the name behind it is the payee's bank.
fn bank_label(text: &str) -> bool {
    let Some((label, _)) = text.split_once([':', '=']) else {
        return false;
    };
    norm_words(label).iter().any(|w| {
        ["bank", "banque", "banco", "banca", "pank", "panga"]
            .iter()
            .any(|b| w.starts_with(b))
    })
}

/// A copyright notice (`Copyright AWV e.V. 2014`, `(c) FeRD 2022`, `©`).
fn copyright_notice(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.contains("copyright") || lower.contains("(c)") || text.contains('©')
}

/// A word that can belong to a name: with a capital (`e-Luscious`), digit-led (`3M`), `&`, or
/// a short connector.
fn name_word(w: &str) -> bool {
    let core = w.trim_matches(|c: char| !c.is_alphanumeric());
    is_connector(w)
        || core.chars().any(char::is_uppercase)
        || core.chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// A name at `start..end` of `text`, without the borders and underlines the OCR read around it
/// (`|LE FOURNISSEUR`, `__Leonardo`) and the punctuation ending a part.
pub(super) fn found(text: &str, start: usize, end: usize) -> Found {
    let raw = &text[start..end];
    let value = raw.trim_start_matches(['|', '_', '[', '{', '•', '*']);
    let start = start + raw.len() - value.len();
    let value = value.trim_end_matches([',', ';', ':', '|', '_', ']', '}', '”', '"', '™', '®']);
    Found {
        value: value.to_string(),
        start,
        end: start + value.len(),
        quality: 1.0,
        normalized: true,
    }
}

/// The spans of `start..end` of the line's text between gaps of [`COLUMN_SPLIT`] or more
/// between its words: each column of a row the OCR read as one line.
fn columns(ctx: &Ctx, start: usize, end: usize) -> Vec<(usize, usize)> {
    let words: Vec<_> = ctx
        .word_boxes()
        .filter(|&(s, e, _)| s >= start && e <= end)
        .collect();
    let mut out = vec![];
    let mut from = start;
    for pair in words.windows(2) {
        let (_, e1, b1) = pair[0];
        let (s2, _, b2) = pair[1];
        if b2.left - b1.right() >= COLUMN_SPLIT {
            out.push((from, e1));
            from = s2;
        }
    }
    out.push((from, end));
    out
}
