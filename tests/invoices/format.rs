//! How a locale prints numbers, amounts, rates and dates: the separators and grouping of
//! amounts (including India's lakh grouping), and date templates with month names.

use super::date::Date;
use super::locales::Locale;

/// `cents` as a decimal with two places: `decimal` before the cents, `group` between groups of
/// thousands (or, with `lakh`, of three digits and then twos: 1,23,45,678.00).
pub fn number(cents: i64, decimal: &str, group: &str, lakh: bool) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    let digits = (cents / 100).to_string();
    let mut groups: Vec<&str> = Vec::new();
    let mut end = digits.len();
    let mut size = 3;
    while end > size {
        groups.push(&digits[end - size..end]);
        end -= size;
        if lakh {
            size = 2;
        }
    }
    groups.push(&digits[..end]);
    groups.reverse();
    format!("{sign}{}{decimal}{:02}", groups.join(group), cents % 100)
}

/// A tax rate in basis points as printed: `21`, `5,5`, `8.25`.
pub fn rate(basis_points: u32, decimal: &str) -> String {
    let whole = basis_points / 100;
    match basis_points % 100 {
        0 => whole.to_string(),
        f if f % 10 == 0 => format!("{whole}{decimal}{}", f / 10),
        f => format!("{whole}{decimal}{f:02}"),
    }
}

/// `date` by `template`: `{d}`/`{dd}` day, `{m}`/`{mm}` month, `{yy}`/`{yyyy}` year, `{month}`
/// and `{mon}` the locale's month name and abbreviation, `{dth}` the ordinal day ("3rd" in
/// English, "1er" in French).
pub fn date(date: Date, template: &str, locale: &Locale) -> String {
    let month = date.month as usize - 1;
    let ordinal = match (locale.language, date.day) {
        ("en", 1 | 21 | 31) => format!("{}st", date.day),
        ("en", 2 | 22) => format!("{}nd", date.day),
        ("en", 3 | 23) => format!("{}rd", date.day),
        ("en", d) => format!("{d}th"),
        ("fr", 1) => "1er".to_string(),
        (_, d) => d.to_string(),
    };
    template
        .replace("{dd}", &format!("{:02}", date.day))
        .replace("{dth}", &ordinal)
        .replace("{d}", &date.day.to_string())
        .replace("{mm}", &format!("{:02}", date.month))
        .replace("{m}", &date.month.to_string())
        .replace("{yyyy}", &date.year.to_string())
        .replace("{yy}", &format!("{:02}", date.year % 100))
        .replace("{month}", locale.months[month])
        .replace("{mon}", locale.months_short[month])
}

/// Whole rupees in words, Indian style ("One Lakh Twenty Three Thousand Four Hundred Fifty
/// Six"), as the "amount in words" line of an Indian tax invoice prints them.
pub fn indian_words(rupees: u64) -> String {
    const ONES: [&str; 20] = [
        "Zero",
        "One",
        "Two",
        "Three",
        "Four",
        "Five",
        "Six",
        "Seven",
        "Eight",
        "Nine",
        "Ten",
        "Eleven",
        "Twelve",
        "Thirteen",
        "Fourteen",
        "Fifteen",
        "Sixteen",
        "Seventeen",
        "Eighteen",
        "Nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety",
    ];
    fn below_100(n: u64) -> String {
        match n {
            0..=19 => ONES[n as usize].to_string(),
            _ if n.is_multiple_of(10) => TENS[n as usize / 10].to_string(),
            _ => format!("{} {}", TENS[n as usize / 10], ONES[n as usize % 10]),
        }
    }
    if rupees == 0 {
        return ONES[0].to_string();
    }
    let mut parts = Vec::new();
    for (unit, name) in [
        (10_000_000, "Crore"),
        (100_000, "Lakh"),
        (1_000, "Thousand"),
    ] {
        let n = rupees / unit % 100;
        if n > 0 {
            parts.push(format!("{} {name}", below_100(n)));
        }
    }
    if !(rupees / 100).is_multiple_of(10) {
        parts.push(format!("{} Hundred", ONES[(rupees / 100 % 10) as usize]));
    }
    if !rupees.is_multiple_of(100) {
        parts.push(below_100(rupees % 100));
    }
    parts.join(" ")
}
