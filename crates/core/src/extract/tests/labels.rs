//! How labels are read as printed: the invoice's own label over another document's or the
//! tax's, compounds written with a hyphen, the ordinal sign read as a look-alike, month names
//! without accents, a number marker glued to its number; and the currency when the document's
//! mentions disagree.

use super::*;

#[test]
fn the_invoices_currency_wins_over_the_currency_its_tax_is_booked_in() {
    let x = run(&[
        "Rohstoff AG",
        "Rechnungsnummer: 47110815",
        "Währung der Umsatzsteuerbuchung : EUR",
        "Rechnungswährung : GBP",
        "Zahlbetrag 521,91",
    ]);
    assert_eq!(value(&x, FieldName::Currency), Some("GBP"));
    assert_close(confidence(&x, FieldName::Currency), 0.99);
}

#[test]
fn a_bookings_confirmation_or_reservation_number_is_no_invoice_number() {
    // A hotel's folio: `Number` alone would take the booking's.
    for line in [
        "Confirmation Number: 80087193",
        "Reservation No. : 24191929",
        "Reservierungsnummer: 856001825/1",
    ] {
        let x = run(&["Hampton Inn", line, "Total 2,375.80"]);
        assert_eq!(value(&x, FieldName::InvoiceNumber), None, "{line}");
    }
    let x = run(&[
        "Hampton Inn",
        "Folio Number: 107917",
        "Confirmation Number: 80087193",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("107917"));
}

#[test]
fn an_associated_invoices_number_and_date_are_not_the_invoices() {
    let x = run(&[
        "Le Fournisseur SARL",
        "N° de facture associée : F20260003",
        "Date de facture associée : 01/01/2026",
        "N° de facture : F20260023",
        "Date de facture : 31/01/2026",
        "Net à payer 104,90 €",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("F20260023"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-01-31"));
    let x = run(&[
        "Acme Supply Ltd",
        "Credit Note",
        "Original Invoice Number: INV-0991",
        "Original Invoice Date: 2 January 2026",
        "Invoice Number: CN-1002",
        "Invoice Date: 15 January 2026",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("CN-1002"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-01-15"));
}

#[test]
fn a_compound_label_written_with_a_hyphen_is_the_label() {
    let x = run(&[
        "Musterlieferant GmbH",
        "Beleg-Nr : R87654321012345",
        "Beleg-Datum : 06.08.2013",
        "Leistungs-Datum : 05.08.2013",
        "Endbetrag 518,99 EUR",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2013-08-06"));
    // `Belegdatum`, not the generic `Datum` beside other dates.
    assert_close(confidence(&x, FieldName::InvoiceDate), 0.99);
}

#[test]
fn the_ordinal_sign_read_as_a_look_alike_still_makes_the_label() {
    for line in [
        "N2 Factura: A-2025/932",
        "Factura n2 A-2025/932",
        "Factura no A-2025/932",
    ] {
        let x = run(&["Suministros Ibéricos S.A.", line]);
        assert_eq!(
            value(&x, FieldName::InvoiceNumber),
            Some("A-2025/932"),
            "{line}"
        );
    }
    // A digit glued to the `N` is the number's, not the sign's.
    let x = run(&["Suministros Ibéricos S.A.", "Factura N2026/17"]);
    assert_ne!(value(&x, FieldName::InvoiceNumber), Some("026/17"));
}

#[test]
fn mentions_that_disagree_give_the_issuers_countrys_currency() {
    let x = run(&[
        "WS Retail Services Pvt. Ltd.",
        "Bangalore, Karnataka, India - 560067",
        "Invoice No: BLR-982590",
        "Price is inclusive of Promotional Discount of Rs -40.00",
        "Grand Total = 319.00",
        "PL: | Pack: Bx | S$: $132415345",
    ]);
    assert_eq!(value(&x, FieldName::Currency), Some("INR"));
    // `Rs` names the rupee alone: only the disagreement lowers the confidence.
    assert_close(
        confidence(&x, FieldName::Currency),
        0.99 * CURRENCY_CONFLICT,
    );
}

#[test]
fn a_symbol_that_names_several_currencies_is_less_sure_than_one_that_names_one() {
    for (total, code, factor) in [
        ("Total: $ 100.00", "USD", SYMBOL_ALONE),
        ("Total: 100,00 €", "EUR", 1.0),
        ("Total: £100.00", "GBP", 1.0),
    ] {
        let x = run(&["Acme Ltd", "Invoice No: 1", total]);
        assert_eq!(value(&x, FieldName::Currency), Some(code), "{total}");
        assert_close(confidence(&x, FieldName::Currency), 0.99 * factor);
    }
}

#[test]
fn a_dollar_sign_is_the_dollar_of_the_country_the_page_names_else_a_guess() {
    for (address, code, factor) in [
        // `NZ$` makes `$` a name of the New Zealand dollar too.
        ("Auckland 1061, New Zealand", "NZD", CURRENCY_SYMBOL),
        // A New Zealand GST number, a Canadian province and postal code, a city.
        ("GST No: 104-299-202", "NZD", CURRENCY_SYMBOL),
        ("Montréal, QC H2Z 1J4", "CAD", CURRENCY_SYMBOL),
        ("Takapuna, Auckland", "NZD", CURRENCY_SYMBOL),
        // No dollar of Switzerland's: the config's pick, a guess.
        ("8001 Zürich, Schweiz", "USD", SYMBOL_OF_ANOTHER_COUNTRY),
        ("Seattle, WA 98109, United States", "USD", CURRENCY_SYMBOL),
        ("Seattle, WA 98109", "USD", CURRENCY_SYMBOL),
        // No country named: the config's pick is a guess.
        ("Seattle", "USD", SYMBOL_ALONE),
    ] {
        let x = run(&["Acme Ltd", address, "Invoice No: 1", "Total: $ 100.00"]);
        assert_eq!(value(&x, FieldName::Currency), Some(code), "{address}");
        assert_close(confidence(&x, FieldName::Currency), 0.99 * factor);
    }
    // The document says which dollar, wherever its issuer is.
    for (note, code) in [
        ("All prices are in US dollars.", "USD"),
        ("Amounts in NZD", "NZD"),
    ] {
        let x = run(&[
            "Acme Pty Ltd",
            "Sydney NSW 2000, Australia",
            "Invoice No: 1",
            "Total: $ 100.00",
            note,
        ]);
        assert_eq!(value(&x, FieldName::Currency), Some(code), "{note}");
        assert_close(confidence(&x, FieldName::Currency), 0.99 * CURRENCY_SYMBOL);
    }
    // A symbol that names one currency is what it names wherever the issuer is.
    let x = run(&["Acme Ltd", "Auckland, New Zealand", "Total: 100,00 €"]);
    assert_close(confidence(&x, FieldName::Currency), 0.99);
}

#[test]
fn the_french_sum_to_pay_is_the_amount_to_pay() {
    let x = run(&[
        "Free SAS",
        "Facture n°562044387 du 02 Juillet 2015",
        "Total facture 24.99 5.00 29.99",
        "Somme à payer 29.99 € TTC",
        "Total facture 24.99 29.99",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("29.99"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99);
}

#[test]
fn month_names_are_read_without_their_accents() {
    for (line, date) in [
        ("Rechnung Nr. 4711 vom 11. Marz 2014", "2014-03-11"),
        ("Date de facture : 3 fevrier 2026", "2026-02-03"),
        ("Date de facture : 15 aout 2026", "2026-08-15"),
        ("Date de facture : 1 decembre 2025", "2025-12-01"),
    ] {
        let x = run(&["Acme SARL", line]);
        assert_eq!(value(&x, FieldName::InvoiceDate), Some(date), "{line}");
    }
}

#[test]
fn the_german_amount_or_contribution_to_pay_is_the_total() {
    let x = run(&[
        "Versicherungsverein Musterstadt a.G.",
        "Beitragsrechnung Nr. 00.123.456.7 11. März 2014",
        "vierteljährlicher Beitrag inklusive 19 % Versicherungsteuer 220,00 €",
        "zu zahlender Beitrag 440,00 €",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("440.00"));
}

#[test]
fn a_receipts_gesamt_is_its_total() {
    // An Austrian bar's receipt: `Gesamt` alone heads the amount.
    let x = run(&[
        "Rechnung Nr.: 1900016675",
        "3 Glühwein 0,25 5,40 16,20",
        "Gesamt: 43,10",
        "Kartenzahlung 43,10",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("43.10"));
}

#[test]
fn a_hotels_folio_number_is_its_bills_number_unless_an_invoice_number_is_printed() {
    let x = run(&["Room No. 153", "Folio No. 49358", "Total 641.25"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("49358"));
    assert_close(confidence(&x, FieldName::InvoiceNumber), 0.99);

    let x = run(&["Folio No. 49358", "Invoice No. 2019-0831", "Total 641.25"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("2019-0831"));
}

#[test]
fn a_part_number_behind_a_slash_belongs_to_the_invoice_number() {
    let x = run(&["Invoice No : 030405755 / 1", "Total 1,568.18"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("030405755/1"));

    // A date or a longer word after the slash is another value.
    let x = run(&[
        "Rechnung: JI20018793 / 16.05.2022 Seite 1/2",
        "Gesamt 10,00",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("JI20018793"));
    let x = run(&["Invoice No: 4711 / 2026", "Total 10.00"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("4711"));
}

#[test]
fn iso_codes_of_smaller_and_former_currencies_name_the_currency() {
    for (line, code) in [
        ("Ukupno / Total HRK 3,563.84", "HRK"),
        ("Total THB 1,250.00", "THB"),
        ("Amount Due KES 4,800.00", "KES"),
    ] {
        let x = run(&["Invoice No: 4711", line]);
        assert_eq!(value(&x, FieldName::Currency), Some(code), "{line}");
        assert_close(confidence(&x, FieldName::Currency), 0.99);
    }
}

#[test]
fn a_number_marker_alone_under_a_stacked_title_names_the_number_for_a_person_to_check() {
    // `FACTURE`, the date, then `nº 2023-6013` (the OCR reading `n®`), each on its own line.
    let x = run(&["PACANO FACTURE", "HOTEL PARIS 20/09/2023", "n® 2023-6013"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("2023-6013"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * MARKER_NUMBER,
    );

    // A marker before a date, a line with more words, or a word that is no marker names no
    // number.
    let x = run(&[
        "FACTURE",
        "N° 20/09/2023",
        "Chambre n° 12 vue mer",
        "Chambre 12",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), None);
}

#[test]
fn a_date_with_a_month_name_and_a_two_digit_year_is_of_this_century_less_surely() {
    for (line, want, factor) in [
        ("Invoice date 29-Nov-19", "2019-11-29", TWO_DIGIT_YEAR),
        ("Invoice date 29 Nov 2019", "2019-11-29", 1.0),
        ("Invoice date 26.10.22", "2022-10-26", TWO_DIGIT_YEAR),
    ] {
        let x = run(&["Acme Ltd", line, "Total 10.00 EUR"]);
        assert_eq!(value(&x, FieldName::InvoiceDate), Some(want), "{line}");
        assert_close(confidence(&x, FieldName::InvoiceDate), 0.99 * factor);
    }
}

#[test]
fn a_month_name_one_slip_off_with_a_full_year_is_read_less_surely() {
    for (line, want) in [
        ("Invoice date 31st Januray 2020", Some("2020-01-31")),
        ("Invoice date Febuary 3, 2021", Some("2021-02-03")),
        ("Invoice date 3 Dezmber 2021", Some("2021-12-03")),
        // A two-digit year with a misspelt word is too little to go on.
        ("Invoice date 31 Januray 20", None),
        // `Mario Kart 7 3DS`: a name, not `marzo`; no year follows it.
        ("Invoice date Mario Kart 7 3DS", None),
    ] {
        let x = run(&["Acme Ltd", line, "Total 10.00 EUR"]);
        assert_eq!(value(&x, FieldName::InvoiceDate), want, "{line}");
        if want.is_some() {
            assert_close(
                confidence(&x, FieldName::InvoiceDate),
                0.99 * MISSPELT_MONTH,
            );
        }
    }
}

#[test]
fn a_compound_label_matches_with_an_abbreviations_dot_before_its_hyphen() {
    for line in ["Rechnungs-Nr. HA007", "Rechnungs.-Nr. HA007"] {
        let x = run(&["Acme GmbH", line, "Gesamt 10,00 EUR"]);
        assert_eq!(value(&x, FieldName::InvoiceNumber), Some("HA007"), "{line}");
        assert_close(confidence(&x, FieldName::InvoiceNumber), 0.99);
    }
}

#[test]
fn a_code_of_capitals_alone_behind_an_invoice_numbers_own_label_is_read_less_surely() {
    let x = run(&["Eurowings GmbH", "Buchungscode / Rechnungsnummer: NFCZMQ"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("NFCZMQ"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * LETTERS_ONLY,
    );
    // Behind a generic label, or too short, or not all capitals: no number.
    for line in ["Nummer: PENDING", "Invoice No: TBD", "Invoice No: Pending"] {
        let x = run(&["Acme GmbH", line]);
        assert_eq!(value(&x, FieldName::InvoiceNumber), None, "{line}");
    }
}

#[test]
fn a_tax_invoices_document_number_is_its_invoice_number() {
    let x = run(&["Tax Invoice COPY Page 1/2", "Document Number 9235321787"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("9235321787"));
    assert_close(confidence(&x, FieldName::InvoiceNumber), 0.99);
}

#[test]
fn a_dateline_without_its_comma_names_a_place_of_the_pages_addresses() {
    // The place is an address's of the page, not the address itself.
    let x = run(&[
        "Medienpilot GmbH & Co. KG * Am Saueracker 23 * 91244 Reichenschwand Reichenschwand 04.07.2023",
        "Leistungszeitraum 01.06.2023 - 30.06.2023",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2023-07-04"));
    assert_close(confidence(&x, FieldName::InvoiceDate), 0.99 * DATELINE);
    for lines in [
        ["Acme GmbH, 91244 Reichenschwand", "Hamburg 04.07.2023"],
        [
            "Acme GmbH, Am Saueracker 23",
            "91244 Reichenschwand 04.07.2023",
        ],
    ] {
        let x = run(&lines);
        assert_close(
            confidence(&x, FieldName::InvoiceDate),
            0.99 * DATE_UNLABELLED,
        );
    }
}

#[test]
fn a_number_marker_glued_to_its_number_is_not_part_of_it() {
    for (line, number) in [
        ("Handelsrechnung (380) Nr.471102 vom 05.03.2018", "471102"),
        ("Invoice No:INV-17 of 05/03/2018", "INV-17"),
        // A word that only begins like a marker is the number's own.
        ("Invoice NO.A7-2 of 05/03/2018", "A7-2"),
        ("Invoice Nordic.7 of 05/03/2018", "Nordic.7"),
    ] {
        let x = run(&["Grundbesitz GmbH & Co.", line, "Total EUR 502,63"]);
        assert_eq!(value(&x, FieldName::InvoiceNumber), Some(number), "{line}");
    }
}
