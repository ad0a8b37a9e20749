use std::collections::HashMap;
use std::process::Command;

use super::date::Date;
use super::format::{date, indian_words, number, rate};
use super::*;

/// The text poppler's `pdftotext` reads from `pdf`, its whitespace (no-break spaces too)
/// collapsed to single spaces.
fn text_of(pdf: &[u8], name: &str) -> String {
    let path =
        std::env::temp_dir().join(format!("docket-invoice-{}-{name}.pdf", std::process::id()));
    std::fs::write(&path, pdf).unwrap();
    let out = Command::new("pdftotext")
        .args(["-enc", "UTF-8"])
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils) must be installed");
    std::fs::remove_file(&path).ok();
    assert!(out.status.success(), "pdftotext failed on {name}");
    collapse(&String::from_utf8(out.stdout).unwrap())
}

fn collapse(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || c == '\u{a0}')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_seed_gives_the_same_invoices_and_another_seed_other_ones() {
    let (first, again, other) = (generate(7, 12), generate(7, 12), generate(8, 12));
    for ((a, b), c) in first.iter().zip(&again).zip(&other) {
        assert_eq!(a.pdf(), b.pdf(), "{}", a.id);
        assert_eq!(a.expected(), b.expected(), "{}", a.id);
        assert_eq!(a.id, c.id);
        assert_ne!(a.fields, c.fields, "{}", a.id);
    }
}

#[test]
fn an_invoice_is_the_same_however_many_are_drawn() {
    let few = generate(SEED, 5);
    let all = generate(SEED, COUNT);
    for (a, b) in few.iter().zip(&all) {
        assert_eq!(a.pdf(), b.pdf(), "{}", a.id);
    }
}

#[test]
fn every_expected_value_is_in_the_documents_text() {
    for seed in [SEED, 2] {
        for invoice in generate(seed, COUNT) {
            let text = text_of(&invoice.pdf(), &invoice.id);
            let shown = &invoice.shown;
            let mut wanted = vec![
                &shown.issuer,
                &shown.invoice_number,
                &shown.invoice_date,
                &shown.total_amount,
            ];
            wanted.extend(&shown.currency);
            wanted.extend(&invoice.issuer_also);
            for value in wanted {
                assert!(
                    text.contains(&collapse(value)),
                    "seed {seed} {}: {value:?} not in {text}",
                    invoice.id
                );
            }
        }
    }
}

#[test]
fn the_expected_fields_are_in_normalized_form() {
    for invoice in generate(SEED, COUNT) {
        let expected = serde_json::to_value(invoice.expected()).unwrap();
        let fields = &expected["fields"];
        let date = fields["invoice_date"].as_str().unwrap();
        assert!(date.len() == 10 && date.as_bytes()[4] == b'-', "{date}");
        let total = fields["total_amount"].as_str().unwrap();
        let (whole, cents) = total.split_once('.').unwrap();
        assert!(
            whole.bytes().all(|b| b.is_ascii_digit()) && cents.len() == 2,
            "{total}"
        );
        assert_eq!(fields["currency"], invoice.locale.currency);
        assert_eq!(expected["licence"], "Apache-2.0");
    }
}

#[test]
fn languages_layouts_and_two_page_invoices_spread_over_the_set() {
    let set = generate(SEED, COUNT);
    let mut by_locale: HashMap<&str, usize> = HashMap::new();
    let mut by_layout: HashMap<&str, usize> = HashMap::new();
    for invoice in &set {
        *by_locale.entry(invoice.locale.key).or_default() += 1;
        *by_layout.entry(invoice.layout.name()).or_default() += 1;
        let (_, _, long) = plan(set.iter().position(|i| i.id == invoice.id).unwrap());
        assert_eq!(
            invoice.pages.len(),
            if long { 2 } else { 1 },
            "{}",
            invoice.id
        );
    }
    assert_eq!(by_locale.len(), locales::ALL.len());
    assert!(by_locale.values().all(|&n| n >= 5), "{by_locale:?}");
    assert_eq!(by_layout.len(), Layout::ALL.len());
    assert!(by_layout.values().all(|&n| n >= 4), "{by_layout:?}");
    assert!(set.iter().filter(|i| i.pages.len() == 2).count() >= 3);
}

#[test]
fn no_text_overlaps_other_text_or_leaves_the_page() {
    for seed in 1..=6 {
        for invoice in generate(seed, COUNT) {
            for (n, page) in invoice.pages.iter().enumerate() {
                let found = page.collisions();
                assert!(
                    found.is_empty(),
                    "seed {seed} {} page {}: {found:#?}",
                    invoice.id,
                    n + 1
                );
            }
        }
    }
}

#[test]
fn amounts_follow_each_locales_separators_and_grouping() {
    assert_eq!(number(12_345_600, ".", ",", true), "1,23,456.00");
    assert_eq!(number(1_234_567_890, ".", ",", true), "1,23,45,678.90");
    assert_eq!(number(99_900, ".", ",", true), "999.00");
    assert_eq!(number(123_456, ",", ".", false), "1.234,56");
    assert_eq!(number(123_456_705, ",", " ", false), "1 234 567,05");
    assert_eq!(number(123_456, ",", "", false), "1234,56");
    assert_eq!(number(-1_500, ",", ".", false), "-15,00");
    assert_eq!(
        (rate(2100, ","), rate(550, ","), rate(825, ".")),
        ("21".into(), "5,5".into(), "8.25".into())
    );
}

#[test]
fn dates_follow_each_locales_templates_and_month_names() {
    let d = Date {
        year: 2026,
        month: 3,
        day: 1,
    };
    let locale = |key: &str| *locales::ALL.iter().find(|l| l.key == key).unwrap();
    assert_eq!(
        date(d, "{month} {d}, {yyyy}", locale("en-us")),
        "March 1, 2026"
    );
    assert_eq!(
        date(d, "{dth} {month} {yyyy}", locale("en-gb")),
        "1st March 2026"
    );
    assert_eq!(
        date(d, "{dth} {month} {yyyy}", locale("fr")),
        "1er mars 2026"
    );
    assert_eq!(date(d, "{d}. {month} {yyyy}", locale("de")), "1. März 2026");
    assert_eq!(
        date(d, "{d} de {month} de {yyyy}", locale("es")),
        "1 de marzo de 2026"
    );
    assert_eq!(date(d, "{dd}.{mm}.{yy}", locale("de")), "01.03.26");
    assert_eq!(date(d, "{dd}-{mon}-{yyyy}", locale("en-in")), "01-Mar-2026");
}

#[test]
fn calendar_days_round_trip() {
    for days in [-1, 0, 59, 11_016, 20_513, 20_800] {
        assert_eq!(Date::from_days(days).days(), days);
    }
    assert_eq!(Date::from_days(20_513).iso(), "2026-03-01");
    assert_eq!(
        Date {
            year: 2024,
            month: 2,
            day: 28
        }
        .plus(2)
        .iso(),
        "2024-03-01"
    );
}

#[test]
fn rupees_in_words_use_lakhs_and_crores() {
    assert_eq!(
        indian_words(123_456),
        "One Lakh Twenty Three Thousand Four Hundred Fifty Six"
    );
    assert_eq!(indian_words(100_000_000), "Ten Crore");
    assert_eq!(indian_words(40), "Forty");
}

#[test]
fn currencies_show_by_symbol_by_code_or_not_at_all_and_dates_numeric_or_with_names() {
    let set = generate(SEED, COUNT);
    let codes = |i: &&Invoice| {
        let shown = i.shown.currency.as_deref();
        shown.is_some_and(|c| c.len() == 3 && c.chars().all(|c| c.is_ascii_uppercase()))
    };
    let implied = set.iter().filter(|i| i.shown.currency.is_none()).count();
    let by_code = set.iter().filter(codes).count();
    let by_symbol = set.len() - implied - by_code;
    let named = set
        .iter()
        .filter(|i| i.shown.invoice_date.chars().any(char::is_alphabetic))
        .count();
    assert!(implied >= 3 && by_code >= 5 && by_symbol >= 10);
    assert!(named >= 5 && set.len() - named >= 20);
}
