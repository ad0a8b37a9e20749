//! Real-world layouts, in small: other languages' labels and months, labels read without their
//! accents, the number after the title, rows of amounts, the amount to pay, contested dates,
//! currencies (the issuer from evidence: `issuers.rs`).

use super::*;

#[test]
fn dutch_french_spanish_and_italian_labels_and_months_are_read() {
    let nl = run(&[
        "Van Dijk Installatietechniek B.V.",
        "FACTUUR",
        "Factuurnummer: 2026-0317",
        "Factuurdatum: 14 maart 2026",
        "Vervaldatum: 13 april 2026",
        "Subtotaal € 1.000,00",
        "Te betalen € 1.210,00",
    ]);
    let fr = run(&[
        "Boulangerie Lefèvre SARL",
        "N° de facture : F-2026-88",
        "Date de facture : 3 février 2026",
        "Montant HT 100,00 €",
        "Net à payer 120,00 €",
    ]);
    let es = run(&[
        "Suministros Ibéricos S.A.",
        "Número de factura: A-1207",
        "Fecha de factura: 5 de mayo de 2026",
        "Base imponible 200,00 €",
        "Total a pagar 242,00 €",
    ]);
    let it = run(&[
        "Ferramenta Rossi S.r.l.",
        "Numero fattura: 118/2026",
        "Data fattura: 9 giugno 2026",
        "Totale imponibile 500,00 €",
        "Totale documento 610,00 €",
    ]);
    let got = |x: &Extraction| {
        FieldName::ALL.map(|f| value(x, f).map(str::to_string).unwrap_or_default())
    };
    assert_eq!(
        got(&nl),
        [
            "Van Dijk Installatietechniek B.V.",
            "2026-0317",
            "2026-03-14",
            "1210.00",
            "EUR"
        ]
    );
    assert_eq!(
        got(&fr),
        [
            "Boulangerie Lefèvre SARL",
            "F-2026-88",
            "2026-02-03",
            "120.00",
            "EUR"
        ]
    );
    assert_eq!(
        got(&es),
        [
            "Suministros Ibéricos S.A.",
            "A-1207",
            "2026-05-05",
            "242.00",
            "EUR"
        ]
    );
    assert_eq!(
        got(&it),
        [
            "Ferramenta Rossi S.r.l.",
            "118/2026",
            "2026-06-09",
            "610.00",
            "EUR"
        ]
    );
}

#[test]
fn a_row_of_amounts_after_the_total_gives_the_last_confidently_only_when_it_adds_up() {
    let x = run(&[
        "Acme Ltd",
        "Invoice No: 5",
        "Total facture 24.99 5.00 29.99",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("29.99"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99);

    let x = run(&["Acme Ltd", "Invoice No: 5", "Total 24.99 5.00 31.99"]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("31.99"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99 * AMOUNT_IN_ROW);

    let x = run(&[
        "Acme Ltd",
        "Invoice No: 5",
        "Total EUR 100.00 (incl. 19.00 VAT)",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("100.00"));
}

#[test]
fn the_amount_to_pay_wins_over_the_grand_total() {
    let x = run(&[
        "Acme Ltd",
        "Invoice No: 5",
        "Total TTC 671,15 €",
        "Acompte versé 201,00 €",
        "Net à payer 470,15 €",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("470.15"));
}

#[test]
fn labels_match_without_their_accents_as_ocr_often_reads_them() {
    let x = run(&[
        "Acme GmbH",
        "Rechnungsnummer 12",
        "Falligkeitsdatum: 01.04.2026",
        "Datum: 14.03.2026",
        "NET A PAYER 12,00 EUR",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
    assert_eq!(value(&x, FieldName::TotalAmount), Some("12.00"));
}

#[test]
fn a_generic_date_label_beside_another_date_is_contested() {
    let x = run(&[
        "Acme Ltd",
        "Invoice # RE-508 issued at 2020-11-21",
        "Delivered 2020-11-10",
        "Date: 2020-11-10",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2020-11-21"));
    let x = run(&[
        "Acme Ltd",
        "Invoice No: 5",
        "Shipped 2020-11-10",
        "Date: 2020-11-12",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2020-11-12"));
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * DATE_CONTESTED,
    );
}

#[test]
fn a_stays_dates_and_the_bookings_dates_do_not_contest_a_generic_date() {
    // A hotel's bill: the stay's arrival, and items and a payment each booked on its day.
    let bill = |payment: &str| {
        run(&[
            "Acme Hotel GmbH",
            "Rechnungsnr. 9282-52756 Datum : 02.10.18",
            "Anreise 30.09.18 Kasse : 1-409",
            "Abreise : 02.10.18",
            "30.09.18 7% Ubernachtung 1 81.00 81.00",
            "01.10.18 19% Fruehstueck 1 5.00 5.00",
            payment,
            "Total 91.00",
        ])
    };
    let x = bill("le-tout-lyon.fr du 01/10/2018 86,00 EUR");
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2018-10-02"));
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * TWO_DIGIT_YEAR,
    );
    // A date with no amount after it is not a booking's: which is the invoice's is a guess.
    let x = bill("Paid by card on 01.10.18 at reception");
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * TWO_DIGIT_YEAR * DATE_CONTESTED,
    );
}

#[test]
fn a_value_beside_its_label_in_a_column_of_its_own_is_read() {
    let doc = placed(&[
        (0.1, 0.10, "Acme GmbH | Europa-Allee 19 | 60486 Frankfurt"),
        (0.1, 0.36, "Rechnungsnr."),
        (0.1, 0.38, "Rechnungsdatum"),
        (0.25, 0.36, "30064443"),
        (0.25, 0.38, "7. Mai 2014"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("30064443"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * BESIDE_LABEL,
    );
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2014-05-07"));
}

#[test]
fn a_value_below_its_label_in_a_table_header_is_read_from_the_labels_column() {
    let doc = placed(&[
        (0.1, 0.10, "Acme GmbH | Europa-Allee 19 | 60486 Frankfurt"),
        (0.1, 0.33, "Klant Order Invoice No Date"),
        (0.1, 0.35, "SC0303 SC0444 VF1005193039 8-9-2022"),
    ]);
    // Words sit a twentieth of the width apart: `Invoice` is the third word, so its column
    // holds the third word below.
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("VF1005193039"));
    assert_close(confidence(&x, FieldName::InvoiceNumber), 0.99 * BELOW_LABEL);

    // A label inside a sentence is not a column header.
    let doc = placed(&[
        (0.1, 0.10, "Acme GmbH"),
        (
            0.1,
            0.68,
            "Please quote the invoice no. with your payment to us.",
        ),
        (0.1, 0.70, "IBAN DE28 7001 0080 9999 9999 99"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), None);
}

#[test]
fn indian_lakh_grouping_is_read_whole() {
    assert_eq!(
        normalize_amount("1,23,456.50").as_deref(),
        Some("123456.50")
    );
    assert_eq!(
        normalize_amount("12,34,56,789.00").as_deref(),
        Some("123456789.00")
    );
    let x = run(&[
        "Acme Pvt Ltd",
        "Tax Invoice No: TI-1",
        "Grand Total ₹ 1,46,131.00",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("146131.00"));
    assert_eq!(value(&x, FieldName::Currency), Some("INR"));
}

#[test]
fn a_short_series_prefix_belongs_to_the_number() {
    let x = run(&["Acme Ltd", "Invoice Number: INV 269748", "Total 10.00"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("INV269748"));
    // Not a broken number (`CP -88412`): that one stays for a person.
    let x = run(&["Acme Ltd", "Invoice Number: CP -88412", "Total 10.00"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), None);
    let x = run(&["Acme Ltd", "Invoice No: NO 12", "Total 10.00"]);
    assert_eq!(
        value(&x, FieldName::InvoiceNumber),
        None,
        "`NO` is a marker, not a series"
    );
}

#[test]
fn a_number_continued_behind_spaced_hyphens_is_one_number() {
    for (line, want) in [
        ("Rechnungsnr. _: 083 -72561", Some("083-72561")),
        (
            "Rechnungsnr. HA007 - 123123 - 37816396",
            Some("HA007-123123-37816396"),
        ),
        // A date or a word behind the hyphen is another value.
        ("Invoice No: 4711 - 21.03.2023", Some("4711")),
        ("Invoice No: 4711 - Page 1", Some("4711")),
        // A label shared with the date's: its second half is passed over.
        (
            "Rechnungsnr./-datum 6002298172 / 21.03.2023",
            Some("6002298172"),
        ),
    ] {
        let x = run(&["Acme GmbH", line, "Gesamtbetrag 10,00 EUR"]);
        assert_eq!(value(&x, FieldName::InvoiceNumber), want, "{line}");
    }
}

#[test]
fn a_document_without_a_currency_takes_its_issuers_countrys() {
    let x = run(&[
        "Acme GmbH",
        "Industriestraße 4, 60486 Frankfurt, Deutschland",
        "Gesamtbetrag 10,00",
    ]);
    assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
    assert_close(
        confidence(&x, FieldName::Currency),
        0.99 * CURRENCY_OF_COUNTRY,
    );
    // Two countries of two currencies named: no guess.
    let x = run(&[
        "Acme Ltd",
        "London, United Kingdom",
        "Ship to: Lyon, France",
        "Total 10.00",
    ]);
    assert_eq!(value(&x, FieldName::Currency), None);
}

#[test]
fn a_vat_number_names_its_country_and_a_lone_symbol_of_that_countrys_currency_is_sure() {
    // No currency printed; an Austrian VAT number (not an IBAN, not a German one's digits).
    let x = run(&["Acme GmbH", "ATU57991999", "Gesamt: 43,10"]);
    assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
    assert_close(
        confidence(&x, FieldName::Currency),
        0.99 * CURRENCY_OF_COUNTRY,
    );
    let x = run(&["Acme s.r.o.", "DIC: CZ12345678", "Celkem 100,00"]);
    assert_eq!(value(&x, FieldName::Currency), Some("CZK"));
    // An IBAN's country letters and digits are no VAT number.
    let x = run(&["Acme GmbH", "IBAN DE89370400440532013000", "Gesamt: 43,10"]);
    assert_eq!(value(&x, FieldName::Currency), None);
    // One euro sign, off the total's line: a single mention, less sure...
    let alone = run(&["Acme GmbH", "Rabatt in €:", "Gesamt: 43,10"]);
    assert_eq!(value(&alone, FieldName::Currency), Some("EUR"));
    assert_close(
        confidence(&alone, FieldName::Currency),
        0.99 * CURRENCY_ELSEWHERE,
    );
    // ...unless the issuer's country pays in it: two pieces of evidence agree.
    let agreed = run(&["Acme GmbH", "ATU57991999", "Rabatt in €:", "Gesamt: 43,10"]);
    assert_eq!(value(&agreed, FieldName::Currency), Some("EUR"));
    assert_close(
        confidence(&agreed, FieldName::Currency),
        0.99 * CURRENCY_AGREED,
    );
    // A country of another currency does not vouch for the euro.
    let other = run(&["Acme s.r.o.", "CZ12345678", "Rabatt in €:", "Celkem: 43,10"]);
    assert_eq!(value(&other, FieldName::Currency), Some("EUR"));
    assert!(confidence(&other, FieldName::Currency) < 0.99 * CURRENCY_ELSEWHERE + 1e-9);
}

#[test]
fn a_generic_number_label_gives_way_to_the_number_after_the_title() {
    let x = run(&[
        "Acme GmbH",
        "Rechnung RE-1001",
        "Nummer: 82",
        "Gesamtbetrag 10,00 EUR",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("RE-1001"));
    let x = run(&["Acme GmbH", "Nummer 50417", "Gesamtbetrag 10,00 EUR"]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("50417"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * GENERIC_NUMBER,
    );
}

#[test]
fn invoice_numbers_under_specific_labels_that_disagree_are_contested() {
    let doc = |second: &str| run(&["Acme GmbH", "Invoice No: INV-17", second, "Total 10.00 EUR"]);
    // The same number printed twice, or a generic label's other number: no contest.
    for second in ["Invoice Number INV-17", "Number: 82"] {
        let x = doc(second);
        assert_eq!(value(&x, FieldName::InvoiceNumber), Some("INV-17"));
        assert_close(confidence(&x, FieldName::InvoiceNumber), 0.99);
    }
    let x = doc("Invoice Number INV-18");
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("INV-18"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * NUMBER_CONTESTED,
    );
}

#[test]
fn an_excluded_word_inside_a_longer_label_does_not_veto_it() {
    // `Netto` is excluded from totals (net amounts), `Netto a pagare` is what is to pay.
    let x = run(&[
        "Rossi S.r.l.",
        "Numero fattura: 1",
        "Totale merce € 6350,85",
        "Netto a pagare € 6985,94",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("6985.94"));
}

#[test]
fn a_date_readable_both_ways_follows_the_order_the_documents_other_dates_show() {
    let x = run(&[
        "Acme Ltd",
        "Invoice No: 5",
        "Invoice Date: 03/04/2026",
        "Due: 25/04/2026",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-04-03"));
    assert_close(confidence(&x, FieldName::InvoiceDate), 0.99 * ORDER_SEEN);
    let x = run(&[
        "Acme Inc",
        "Invoice No: 5",
        "Invoice Date: 03/04/2026",
        "Due: 04/25/2026",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-04"));
    // Alone, it stays a guess for a person.
    let x = run(&["Acme Ltd", "Invoice No: 5", "Invoice Date: 03/04/2026"]);
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * AMBIGUOUS_DATE,
    );
}

#[test]
fn a_payment_printed_after_the_total_leaves_the_total_to_a_person() {
    let x = run(&[
        "Acme Ltd",
        "Invoice No: 5",
        "Total 2,076.76 €",
        "Deposit received 11/17/2017 623.00 €",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("2076.76"));
    assert_close(
        confidence(&x, FieldName::TotalAmount),
        0.99 * PAID_AFTER_TOTAL,
    );
    // What is left, labelled, after the payment: that is the total, surely.
    let x = run(&[
        "Acme Ltd",
        "Invoice No: 5",
        "Total 2,076.76 €",
        "Deposit 623.00 €",
        "Remaining 1,453.76 €",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1453.76"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99);
}

#[test]
fn nordic_labels_a_brazilian_real_and_an_australian_business_number_are_read() {
    let x = run(&[
        "Microsoft Ireland Operations Ltd",
        "Fakturanummer: E08007UINW",
        "Fakturadato: 08.03.2019",
        "Forfallsdato: 07.04.2019",
        "Rekeningsbedrag 671,33",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("E08007UINW"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2019-03-08"));
    assert_eq!(value(&x, FieldName::TotalAmount), Some("671.33"));
    // `R$` is the real, not a dollar.
    let x = run(&["Nortel Ltda", "Nota 48", "Valor Total R$ 59.594,48"]);
    assert_eq!(value(&x, FieldName::Currency), Some("BRL"));
    // A lone `$` beside an Australian Business Number is the Australian dollar.
    let x = run(&[
        "Centre Com Pty Ltd",
        "ABN : 16 084 165 328",
        "Total Inc GST: $3.00",
    ]);
    assert_eq!(value(&x, FieldName::Currency), Some("AUD"));
}
