//! The document's language from the words it prints, and the date order of its locale.

use super::*;

#[test]
fn a_document_is_in_the_language_it_prints_most_words_of() {
    for (lines, language) in [
        (
            &[
                "Rechnung Nr. 4711",
                "Bitte zahlen Sie den Betrag bis zum 30.04.2026",
            ][..],
            "de",
        ),
        (
            &[
                "Facture n° 17",
                "Merci de régler le montant avant le 30/04/2026",
            ][..],
            "fr",
        ),
        (
            &["Factuur 17", "Graag het bedrag voor 30-04-2026 betalen"][..],
            "nl",
        ),
        (
            &["Invoice 17", "Please pay the amount due by April 30, 2026"][..],
            "en",
        ),
    ] {
        assert_eq!(run(lines).language.as_deref(), Some(language), "{lines:?}");
    }
    // Too few words, or two languages as often: no language.
    assert_eq!(run(&["Total 17,00 EUR"]).language, None);
    assert_eq!(
        run(&["Rechnung und Betrag", "Invoice and amount"]).language,
        None
    );
}

#[test]
fn an_ambiguous_date_follows_the_locale_of_the_document() {
    let date = |lines: &[&str], rules: &ExtractionRules| {
        let x = extract(&OcrDocument::from_lines(lines, 0.99), rules);
        assert_close(
            confidence(&x, FieldName::InvoiceDate),
            0.99 * AMBIGUOUS_DATE,
        );
        x.value(FieldName::InvoiceDate).map(String::from)
    };
    // English in dollars: month first; in pounds: day first.
    let english = |amount: &str| {
        [
            "Invoice Date: 03/04/2026".to_string(),
            format!("Please pay the total amount due: {amount}"),
        ]
    };
    let us = english("$120.00");
    let us: Vec<&str> = us.iter().map(String::as_str).collect();
    assert_eq!(date(&us, &rules()).as_deref(), Some("2026-03-04"));
    let uk = english("£120.00");
    let uk: Vec<&str> = uk.iter().map(String::as_str).collect();
    assert_eq!(date(&uk, &rules()).as_deref(), Some("2026-04-03"));
    // Dollars and euros: the locale is unclear, the configured order decides (day first).
    let mixed = english("$120.00 (EUR 110.00)");
    let mixed: Vec<&str> = mixed.iter().map(String::as_str).collect();
    assert_eq!(date(&mixed, &rules()).as_deref(), Some("2026-04-03"));
    // German reads day first even where the configured fallback is month first.
    let mut month_first = rules();
    month_first.date_order = DateOrder::Mdy;
    let de = [
        "Rechnungsdatum: 03/04/2026",
        "Bitte zahlen Sie den Betrag von 120,00 EUR",
    ];
    assert_eq!(date(&de, &month_first).as_deref(), Some("2026-04-03"));
}
