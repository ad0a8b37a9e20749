//! What confirms a total besides its label: an amount of the document at a tax rate the
//! document prints (`376,37` at `19,00%` is `447,88`), or the amount written out in words
//! (`in_words.rs`). Numbers read apart that agree are read right, whatever the OCR's
//! confidence in each word; and the amount they give is a gross amount, a total's kind.

use std::collections::HashSet;
use std::sync::OnceLock;

use regex::Regex;

use super::in_words::amount_in_words;
use super::issuer::norm_words;
use super::line::Ctx;
use super::Extractor;
use crate::model::fields::parse_amount_cents;

/// Words that name a tax: a line with one writes out a tax's amount.
const TAX_WORDS: &[&str] = &["tax", "vat", "gst", "igst", "cgst", "sgst", "cess"];
/// Words of a rate that is no tax's: a discount's or an interest's (`2% Skonto`, `Remise de
/// 27,33 %`, `late interest 8%`).
const NOT_TAX_RATE: &[&str] = &[
    "discount",
    "skonto",
    "rabatt",
    "nachlass",
    "remise",
    "escompte",
    "sconto",
    "descuento",
    "korting",
    "interest",
    "zinsen",
    "verzugszinsen",
    "interets",
    "interessi",
    "intereses",
];

/// A rate the document prints (`19%`, `19,00 %`, `5.5%`), in hundredths of a percent; none on
/// a line of a discount or an interest.
fn rates(text: &str) -> impl Iterator<Item = i128> + '_ {
    let other = norm_words(text)
        .iter()
        .any(|w| NOT_TAX_RATE.contains(&w.as_str()));
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?:^|[^0-9.,])([0-9]{1,2})(?:[.,]([0-9]{1,2}))? ?%").expect("static regex")
    });
    re.captures_iter(text)
        .filter(move |_| !other)
        .filter_map(|c| {
            let whole: i128 = c[1].parse().ok()?;
            let frac = c
                .get(2)
                .map_or("00".to_string(), |f| format!("{:0<2}", f.as_str()));
            let bp = whole * 100 + frac.parse::<i128>().ok()?;
            (bp > 0).then_some(bp)
        })
}

impl Extractor<'_> {
    /// The amounts, in cents, that the document confirms as gross totals: each money amount
    /// at each printed rate (to the cent either way, as taxes summed line by line round), and
    /// each amount written in words.
    pub(super) fn confirmed_totals(&self, pages: &[Vec<Ctx>]) -> HashSet<i128> {
        let lines = || pages.iter().flatten();
        let rates: HashSet<i128> = lines().flat_map(|c| rates(c.text())).collect();
        let mut out = HashSet::new();
        for ctx in lines() {
            for m in self.amounts(&ctx.repaired) {
                let net = m.likely.then_some(m.normalized).flatten();
                let Some(net) = net.as_deref().and_then(parse_amount_cents) else {
                    continue;
                };
                for bp in rates.iter().filter(|_| net > 0) {
                    let gross = (net * (10_000 + bp) + 5_000) / 10_000;
                    out.extend([gross - 1, gross, gross + 1]);
                }
            }
            // `Tax Amount (in words)` writes out the tax, not the total.
            let of_tax = norm_words(ctx.text())
                .iter()
                .any(|w| TAX_WORDS.contains(&w.as_str()));
            if !of_tax {
                out.extend(amount_in_words(ctx.text()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::rates;

    #[test]
    fn reads_printed_rates_in_hundredths_of_a_percent() {
        let read = |t: &str| rates(t).collect::<Vec<_>>();
        assert_eq!(read("Nettobetrag (zzgl. 19,00% MwSt.)"), [1900]);
        assert_eq!(read("TVA 5.5 % et 20%"), [550, 2000]);
        assert_eq!(
            read("IGST 28% | 0%"),
            [2800],
            "a zero rate confirms nothing"
        );
        assert_eq!(read("100% cotton, 1.234%"), Vec::<i128>::new());
        let none = Vec::<i128>::new();
        assert_eq!(read("2% Skonto bei Zahlung binnen 10 Tagen"), none);
        assert_eq!(read("Remise de 27,33 % 73,52"), none);
    }
}
