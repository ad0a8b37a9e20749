//! The issuer from evidence, when no label names it: every organisation name on the first page
//! (a line, or a segment of a sender line like `Acme GmbH | Europa-Allee 1 | 60486 Frankfurt`,
//! or the words before a legal form inside a sentence: `mentions.rs`), never one in the
//! addressee block,
//! grouped by name and scored by what vouches for it: a legal form, a sender line, a second
//! mention (letterhead and footer), a web or e-mail domain of the document that spells it, its
//! place in the letterhead or the footer, its place in the block under a seller's label, a
//! payee's label before it (`Account Name:`). The
//! best name wins; its confidence says whether the evidence clearly beats the runner-up.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::domains::{domains, spelled};
use super::issuer::norm_words;
use super::line::{Ctx, Found};
use super::mentions::{found, Mention, LETTERHEAD_BOTTOM};
use super::{Extractor, ISSUER_CONTESTED, ISSUER_GUESSED, ISSUER_WITH_SUFFIX, LEGAL_FORM_READING};
use crate::model::fields::Field;

/// Lines below this are the footer.
const FOOTER_TOP: f64 = 0.8;
/// A logo's word alone names the one name it begins if it has this many letters or more.
const LOGO_LETTERS: usize = 4;
/// How much more evidence the best name needs than the next for a confident answer.
const CLEAR_MARGIN: u32 = 2;

impl Extractor<'_> {
    pub(super) fn issuer_from_evidence(&self, pages: &[Vec<Ctx>]) -> Option<Field> {
        let first = pages.first()?;
        let addressee = self.addressee_lines(first);
        let sellers = self.seller_lines(first);
        let domains = domains(pages);
        // The addressee's names, wherever else they appear (a delivery address beside the
        // billing one), are the customer's.
        let customers: HashSet<String> = first
            .iter()
            .filter(|c| addressee.contains(&c.order))
            .flat_map(|c| self.mentions(c))
            .map(|m| self.name_key(&m.found.value))
            .collect();
        let mut names: BTreeMap<String, Vec<Mention>> = BTreeMap::new();
        for ctx in first.iter().filter(|c| !addressee.contains(&c.order)) {
            let stated = self
                .stated_above(first, ctx)
                .filter(|m| !addressee.contains(&m.ctx.order));
            for mention in self.mentions(ctx).into_iter().chain(stated) {
                let key = self.name_key(&mention.found.value);
                if !key.is_empty() && !customers.contains(&key) {
                    names.entry(key).or_default().push(mention);
                }
            }
        }
        self.merge_sentence_heads(&mut names);
        // A line that is nothing but a name mentioned elsewhere mentions it again, whatever its
        // case (`weclapp.com` in the letterhead, beside its sender line); so does a logo's word
        // alone that begins one name of several words (`cronus:` over `CRONUS DE`).
        let firsts: HashMap<String, Vec<String>> = names.keys().fold(HashMap::new(), |mut m, k| {
            let words = self.name_words(&names[k][0].found.value);
            if words.len() >= 2 && words[0].chars().count() >= LOGO_LETTERS {
                m.entry(words[0].clone()).or_default().push(k.clone());
            }
            m
        });
        for ctx in first.iter().filter(|c| !addressee.contains(&c.order)) {
            let key = self.name_key(ctx.text());
            let key = match firsts.get(&key).map(Vec::as_slice) {
                Some([one]) if !names.contains_key(&key) => one.clone(),
                _ => key,
            };
            if let Some(mentions) = names.get_mut(&key) {
                if mentions.iter().all(|m| m.ctx.order != ctx.order) {
                    mentions.push(Mention {
                        ctx,
                        found: found(ctx.text(), 0, ctx.text().len()),
                        suffix: false,
                        sender: false,
                        payee: false,
                    });
                }
            }
        }
        let mut scored: Vec<(u32, usize, &String, &Vec<Mention>)> = names
            .iter()
            .map(|(key, mentions)| {
                let score = evidence(key, mentions, &domains, &sellers);
                let order = mentions.iter().map(|m| m.ctx.order).min().unwrap_or(0);
                (score, order, key, mentions)
            })
            .collect();
        scored.sort_by_key(|(score, order, _, _)| (std::cmp::Reverse(*score), *order));
        let (score, _, key, mentions) = scored.first()?;
        let runner_up = scored.get(1).map_or(0, |s| s.0);
        // The mention to report: one with the legal form, else any; of those, a sender line's
        // (a company's own full name), the name as mentioned alone (not inside a sentence's
        // words), then the best-read.
        let alone = |m: &&Mention| self.name_key(&m.found.value) == **key;
        let read = |m: &&Mention| m.ctx.field(&m.found).confidence;
        let better = |a: &&Mention, b: &&Mention| {
            (a.sender.cmp(&b.sender))
                .then(alone(a).cmp(&alone(b)))
                .then(read(a).total_cmp(&read(b)))
        };
        let best = mentions
            .iter()
            .filter(|m| m.suffix)
            .max_by(better)
            .or_else(|| mentions.iter().max_by(better))?;
        let mut found = Found {
            value: best.found.value.clone(),
            ..best.found
        };
        found.quality = if score - runner_up < CLEAR_MARGIN {
            ISSUER_CONTESTED
        } else if mentions.iter().any(|m| m.suffix) || vouched(key, mentions, &domains) {
            ISSUER_WITH_SUFFIX
        } else {
            ISSUER_GUESSED
        };
        // A name read more than once counts each word as read as well as its best reading
        // (`Services,` smudged in the footer, clear in the title `Amazon Web Services Invoice`);
        // a legal form's word the config lists (`B.V.`) as read whatever the OCR's hesitation
        // over its dots: a misreading would have to spell another listed form.
        let readings = readings(mentions);
        let elsewhere = |word: &str| {
            let key = norm_words(word).concat();
            let listed = self.legal_form_at(std::slice::from_ref(&key)) == Some(1);
            let read = readings.get(&key).copied().unwrap_or(0.0);
            if listed {
                read.max(LEGAL_FORM_READING)
            } else {
                read
            }
        };
        Some(best.ctx.field_read_elsewhere(&found, &elsewhere))
    }

    /// A name read inside a sentence can carry the sentence's words before it (`Sitz der
    /// Premier Inn GmbH`, `Mitglied der Acme AG`): a name whose words end with the words of
    /// another name the page mentions is that name, its mentions joining the other's.
    fn merge_sentence_heads(&self, names: &mut BTreeMap<String, Vec<Mention>>) {
        let words: Vec<(String, Vec<String>)> = names
            .iter()
            .filter_map(|(key, mentions)| {
                let first = mentions.first()?;
                Some((key.clone(), self.name_words(&first.found.value)))
            })
            .collect();
        for (key, long) in &words {
            let shorter = words
                .iter()
                .filter(|(_, short)| !short.is_empty() && short.len() < long.len())
                .filter(|(_, short)| long.ends_with(short))
                .min_by_key(|(_, short)| short.len());
            if let Some((into, _)) = shorter {
                if let Some(moved) = names.remove(key) {
                    names.entry(into.clone()).or_default().extend(moved);
                }
            }
        }
    }

    /// An organisation-shaped text that is not a title, a country (`Australia`, the last line
    /// of an address), a label or a label and its value (`Name:`, `Geschäftsprozess :
    /// Beispiel`) or contact details.
    pub(super) fn looks_like_name(&self, part: &str) -> bool {
        let words = norm_words(part);
        !words.is_empty()
            && !part.contains(':')
            && !self.titles.contains(&words)
            && !self.is_country(part)
            && super::issuer::org_shaped(part)
            && self.plausible_org(part)
            && self.label_free(part)
    }

    /// A name's identity: its words without legal forms and document titles.
    pub(super) fn name_key(&self, name: &str) -> String {
        self.name_words(name).concat()
    }

    /// The words of a name's identity ([`Self::name_key`]), in order.
    fn name_words(&self, name: &str) -> Vec<String> {
        let mut words = norm_words(name);
        // Legal forms of several words first (`Private Limited`), then single ones.
        let mut forms: Vec<&Vec<String>> = self.suffixes.iter().filter(|s| !s.is_empty()).collect();
        forms.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for form in forms {
            while let Some(at) = (0..words.len().saturating_sub(form.len() - 1))
                .find(|&i| words[i..i + form.len()] == form[..])
            {
                words.drain(at..at + form.len());
            }
        }
        words.retain(|w| !self.titles.iter().any(|t| t.len() == 1 && t[0] == *w));
        words
    }
}

/// What vouches for a name, summed; `sellers` are the lines of the seller's block.
fn evidence(
    key: &str,
    mentions: &[Mention],
    domains: &HashSet<Vec<String>>,
    sellers: &HashSet<usize>,
) -> u32 {
    let lines: HashSet<usize> = mentions.iter().map(|m| m.ctx.order).collect();
    let any = |f: &dyn Fn(&Mention) -> bool| mentions.iter().any(f);
    let mut score = 0;
    score += 3 * u32::from(any(&|m| sellers.contains(&m.ctx.order)));
    score += 2 * u32::from(any(&|m| m.suffix));
    score += 2 * u32::from(any(&|m| m.sender));
    score += 2 * u32::from(any(&|m| m.payee));
    // Mentioned twice, once at least as a company (a repeated heading is no name).
    score += 2 * u32::from(lines.len() >= 2 && any(&|m| m.suffix || m.sender));
    score += 2 * u32::from(spelled(key, domains));
    score += u32::from(any(&|m| m.ctx.bbox().top < LETTERHEAD_BOTTOM));
    score += u32::from(any(&|m| m.ctx.bbox().top > FOOTER_TOP));
    score
}

/// Whether a name without a legal form is vouched for as surely as one with it: mentioned on
/// two lines, and a sender line or a domain of the document names it.
fn vouched(key: &str, mentions: &[Mention], domains: &HashSet<Vec<String>>) -> bool {
    let lines: HashSet<usize> = mentions.iter().map(|m| m.ctx.order).collect();
    lines.len() >= 2 && (mentions.iter().any(|m| m.sender) || spelled(key, domains))
}

/// How well each word of a name's mentions was read at best, by its normalized spelling.
fn readings(mentions: &[Mention]) -> HashMap<String, f64> {
    let mut out: HashMap<String, f64> = HashMap::new();
    for m in mentions {
        for (word, confidence) in m.ctx.words_in(m.found.start, m.found.end) {
            let key = norm_words(word).concat();
            if !key.is_empty() {
                let best = out.entry(key).or_default();
                *best = best.max(confidence);
            }
        }
    }
    out
}
