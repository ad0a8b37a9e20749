//! Amounts written out in English words, as invoices print them under the total (`Amount in
//! Words: Three Hundred And Nine only`, `Rupees Four Hundred Thirteen Only`, Indian lakhs and
//! crores, `and Fifty Paise`): evidence that confirms a total (`confirm.rs`).

use super::issuer::norm_words;

/// The value of a number word below a hundred.
fn unit(word: &str) -> Option<i128> {
    const UNITS: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    if let Some(i) = UNITS.iter().position(|u| *u == word) {
        return Some(i as i128);
    }
    TENS.iter()
        .position(|t| *t == word)
        .map(|i| 20 + 10 * i as i128)
}

/// The multiplier a scale word stands for (`thousand`, `lakh`).
fn scale(word: &str) -> Option<i128> {
    match word {
        "thousand" => Some(1_000),
        "lakh" | "lakhs" | "lac" | "lacs" => Some(100_000),
        "million" | "millions" => Some(1_000_000),
        "crore" | "crores" => Some(10_000_000),
        _ => None,
    }
}

/// A run of number words read as one number (`four hundred thirteen`): its value and how many
/// number words it holds.
#[derive(Default)]
struct Run {
    total: i128,
    current: i128,
    words: usize,
}

impl Run {
    /// Adds a word; false when it is no number word.
    fn push(&mut self, word: &str) -> bool {
        if let Some(u) = unit(word) {
            self.current += u;
        } else if word == "hundred" {
            self.current = self.current.max(1) * 100;
        } else if let Some(s) = scale(word) {
            self.total += self.current.max(1) * s;
            self.current = 0;
        } else {
            return false;
        }
        self.words += 1;
        true
    }

    fn value(&self) -> i128 {
        self.total + self.current
    }
}

/// The amount, in cents, that `text` writes out in words, if it writes one of at least two
/// number words (`Three Hundred And Nine only` → 30900; `Two Thousand Nine Hundred Twenty
/// Eight Rupees and Fifty Paise` → 292850). One word alone (`One`) is too common to be an
/// amount.
pub(super) fn amount_in_words(text: &str) -> Option<i128> {
    // `Twenty-Three` is two words.
    let words = norm_words(&text.replace('-', " "));
    let mut runs: Vec<(Run, usize)> = vec![];
    let mut run = Run::default();
    for (i, word) in words.iter().enumerate() {
        if run.push(word) {
            continue;
        }
        // `and` after a hundred or a scale joins the words of one number (`three hundred and
        // nine`), not a number and its cents (`ninety nine and fifty paise`).
        let after_scale = i > 0 && (words[i - 1] == "hundred" || scale(&words[i - 1]).is_some());
        if word == "and" && after_scale && words.get(i + 1).is_some_and(|w| number_word(w)) {
            continue;
        }
        if run.words > 0 {
            runs.push((std::mem::take(&mut run), i));
        }
    }
    if run.words > 0 {
        runs.push((run, words.len()));
    }
    let (whole, _) = runs.first().filter(|(r, _)| r.words >= 2)?;
    let cents = runs
        .get(1)
        .filter(|(r, end)| {
            r.value() < 100
                && words
                    .get(*end)
                    .is_some_and(|w| matches!(w.as_str(), "paise" | "paisa" | "cents" | "cent"))
        })
        .map_or(0, |(r, _)| r.value());
    Some(whole.value() * 100 + cents)
}

fn number_word(word: &str) -> bool {
    unit(word).is_some() || word == "hundred" || scale(word).is_some()
}

#[cfg(test)]
mod tests {
    use super::amount_in_words;

    #[test]
    fn reads_english_and_indian_amounts_in_words() {
        let cases = [
            ("Three Hundred And Nine only", Some(30_900)),
            ("Rupees Four Hundred Thirteen Only", Some(41_300)),
            (
                "INR Two Thousand Nine Hundred Twenty Eight Only",
                Some(292_800),
            ),
            (
                "One Lakh Twenty-Three Thousand Four Hundred Fifty Six",
                Some(12_345_600),
            ),
            ("Two Crore Five Lakh", Some(2_050_000_000)),
            ("Rupees Ninety Nine and Fifty Paise Only", Some(9_950)),
            (
                "USD One Thousand and Twenty Dollars and Five Cents",
                Some(102_005),
            ),
            ("Amount in Words:", None),
            ("Page One", None),
            ("Three", None),
        ];
        for (text, want) in cases {
            assert_eq!(amount_in_words(text), want, "{text}");
        }
    }
}
