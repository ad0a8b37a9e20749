//! The web and e-mail domains a document prints, and whether one spells a name: evidence of
//! the issuer (`letterhead.rs`).

use std::collections::HashSet;
use std::sync::OnceLock;

use regex::Regex;

use super::issuer::norm_words;
use super::line::Ctx;

/// Mail and web hosts that name no issuer.
const GENERIC_DOMAINS: &[&str] = &[
    "gmail",
    "googlemail",
    "yahoo",
    "outlook",
    "hotmail",
    "live",
    "gmx",
    "web",
    "icloud",
    "mail",
    "localhost",
    "example",
];

/// Whether a domain of the document spells the name `key`: its parts, in order (`acme` and
/// `tools` of `acme-tools` in `acmepowertools`; `hetzner` in `hetzneronline`).
pub(super) fn spelled(key: &str, domains: &HashSet<Vec<String>>) -> bool {
    domains.iter().any(|parts| {
        let mut rest = key;
        parts.iter().all(|p| match rest.find(p.as_str()) {
            Some(at) => {
                rest = &rest[at + p.len()..];
                true
            }
            None => false,
        })
    })
}

/// The distinctive part of every web and e-mail domain of the document, as its hyphenated
/// parts (`hetzner` of `www.hetzner.de` and `info@hetzner.de`, `acme`, `tools` of
/// `acme-tools.com`; OCR may set the `@` or `www.` apart).
pub(super) fn domains(pages: &[Vec<Ctx>]) -> HashSet<Vec<String>> {
    static HOST: OnceLock<Regex> = OnceLock::new();
    let host = HOST.get_or_init(|| {
        Regex::new(r"(?i)(?:@|\bwww\.|://(?:www\.)?)\s?([a-z0-9][a-z0-9-]*)\.")
            .expect("static regex")
    });
    let mut out = HashSet::new();
    for ctx in pages.iter().flatten() {
        for c in host.captures_iter(ctx.text()) {
            let parts: Vec<String> = c[1]
                .split('-')
                .map(|p| norm_words(p).concat())
                .filter(|p| !p.is_empty())
                .collect();
            let name = parts.concat();
            if name.len() >= 3 && name != "www" && !GENERIC_DOMAINS.contains(&name.as_str()) {
                out.insert(parts);
            }
        }
    }
    out
}
