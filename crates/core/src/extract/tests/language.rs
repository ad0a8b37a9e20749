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

#[test]
fn an_estonian_invoice_is_read_by_its_own_labels() {
    // A caterer's `Arve`: its number, date and total behind Estonian labels, the due date, the
    // net sum and the payment reference beside them.
    let x = run(&[
        "Arve nr 1615",
        "Klient:",
        "FLIIS TRADE OU",
        "Kuupäev: 17.04.2026",
        "Tähtaeg: 24.04.2026",
        "Viitenumber: 2027455402124",
        "Summa käibemaksuta: 2151.81",
        "Käibemaks (24%): 516.43",
        "Kokku (EUR): 2 668.24",
    ]);
    assert_eq!(x.language.as_deref(), Some("et"));
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("1615"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-04-17"));
    assert_eq!(value(&x, FieldName::TotalAmount), Some("2668.24"));
    assert_ne!(value(&x, FieldName::Issuer), Some("FLIIS TRADE OU"));
    // A credit note's title names its number.
    let x = run(&["Kreeditarve LKR824191", "Tasumisele kuulub -6,39"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("LKR824191"));
    assert_eq!(value(&x, FieldName::TotalAmount), Some("-6.39"));
}
