//! Real-world layouts, in small: other languages' labels and months, labels read without their
//! accents, the issuer from evidence (sender lines, the addressee's window, a second mention, a
//! domain), the number after the title, rows of amounts, the amount to pay, contested dates.

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
fn addressee_lines_are_not_taken_for_the_issuer() {
    for first in [
        "ATTN: Globex Limited",
        "Factuuradres",
        "Delivery Address:",
        "Herrn",
    ] {
        let x = run(&[first, "Globex Corporation", "Initech", "Invoice No: 7"]);
        assert_eq!(
            value(&x, FieldName::Issuer),
            Some("Initech"),
            "after {first}"
        );
    }
}

#[test]
fn a_sender_line_names_the_issuer_and_the_window_below_it_is_the_addressee() {
    let doc = placed(&[
        (0.1, 0.14, "Acme GmbH | Europa-Allee 19 | 60486 Frankfurt"),
        (0.1, 0.16, "Beispiel AG"),
        (0.1, 0.18, "Feldstraße 34"),
        (0.1, 0.20, "54321 Hinterhausen"),
        (0.1, 0.30, "Rechnung RE-1001"),
        (0.1, 0.50, "Lieferung an Beispiel AG, Werk 2"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Acme GmbH"));
    // The customer, named twice, would tie with the sender if its window counted.
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("RE-1001"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * TITLE_NUMBER,
    );
}

#[test]
fn a_name_without_a_legal_form_that_its_sender_line_and_a_second_line_name_is_sure() {
    let page = |letterhead: &'static str| {
        placed(&[
            (0.1, 0.14, "acmeshop.io | Somestreet 42 | 08155 Some city"),
            (0.1, 0.15, "Beispiel AG"),
            (0.1, 0.17, "54321 Hinterhausen"),
            (0.65, 0.14, letterhead),
            (0.65, 0.15, "Somestreet 42"),
            (0.1, 0.25, "Rechnung RE1001"),
        ])
    };
    // The letterhead repeats the name, lower case as the sender line prints it.
    let x = extract(&page("acmeshop.io"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("acmeshop.io"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    // Named by its sender line alone: a guess.
    let x = extract(&page("Phone: 06661556"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("acmeshop.io"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_GUESSED);
}

#[test]
fn a_footer_line_of_parts_heads_no_addressee_block() {
    // A shop's bill: the buyer at the top, the seller's legal name only in the footer, under a
    // line of register data written like a sender line.
    let doc = placed(&[
        (0.1, 0.16, "Globex Consulting GmbH"),
        (0.1, 0.18, "Friedrichstrasse 123"),
        (0.1, 0.30, "Rechnungsnr. 6002298172"),
        (
            0.1,
            0.90,
            "Registergericht: Amtsgericht Dresden HRB 16246 | Ust.-IdNr.: DE195033395 | Steuer-Nr.: 202/107/09526",
        ),
        (0.1, 0.92, "Acme GmbH E-Mail: info@acme.de Commerzbank"),
        (0.1, 0.93, "Am Brauhaus 5 Telefon: +49 351 3395-60"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Acme GmbH"));
}

#[test]
fn an_issuer_named_once_beside_another_company_is_contested() {
    // No label, no sender line: the customer's block comes first, the seller sits at the right.
    let doc = placed(&[
        (0.1, 0.13, "Adatum Corporation"),
        (0.1, 0.15, "Station Road 21"),
        (0.8, 0.13, "Cronus Trading Ltd"),
        (0.1, 0.30, "Invoice No: 103767"),
    ]);
    let x = extract(&doc, &rules());
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_CONTESTED);

    // The seller's web domain and a second mention settle it.
    let doc = placed(&[
        (0.1, 0.13, "Adatum Corporation"),
        (0.1, 0.15, "Station Road 21"),
        (0.8, 0.13, "Cronus Trading Ltd"),
        (0.8, 0.15, "www.cronus.example.com"),
        (0.1, 0.30, "Invoice No: 103767"),
        (
            0.1,
            0.92,
            "Cronus Trading Ltd, registered in England 0123456",
        ),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Cronus Trading Ltd"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
}

#[test]
fn a_company_named_inside_a_sentence_is_cut_to_its_name() {
    let doc = placed(&[
        (0.4, 0.08, "Amazon Web Services Invoice"),
        (0.4, 0.15, "Invoice Number: 42183017"),
        (
            0.1,
            0.84,
            "Check the statement attached at the end of this Invoice Amazon Web Services, Inc.",
        ),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Amazon Web Services, Inc.")
    );
}

#[test]
fn a_label_word_that_starts_a_company_name_is_not_its_label() {
    let x = run(&["Lieferant GmbH", "Rechnungsnummer 471102"]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Lieferant GmbH"));
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
fn seller_and_buyer_blocks_give_the_seller_and_never_a_label_or_the_buyer() {
    let x = run(&[
        "Handelsrechnung Nr. 47110815 vom 31.10.2018",
        "Verkäufer:",
        "Nummer : 12345676",
        "Rohstoff AG Salzgitter",
        "Marktstr. 153",
        "Käufer/Leistungsempfänger:",
        "Nummer : 75969813",
        "Metallbau Leipzig GmbH & Co. KG",
        "Pappelallee 15",
        "Zahlbetrag 521,91",
    ]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Rohstoff AG"));
    // The buyer's block (past its reference line) is left out: no runner-up.
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("47110815"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2018-10-31"));
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * DATE_WITH_NUMBER,
    );

    // A label line (`Name:`) after the seller's label is no name.
    let x = run(&["Verkaufer", "Name:", "Invoice No: 5"]);
    assert_eq!(value(&x, FieldName::Issuer), None);
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
fn a_web_domain_set_apart_by_ocr_still_vouches_for_the_issuer() {
    let doc = placed(&[
        (0.1, 0.11, "Beaufortin Plomberie SAS"),
        (0.1, 0.17, "Email accounts @ beaufortin-plomberie.example"),
        (0.6, 0.11, "Sauvaget Menuiserie SARL"),
        (0.1, 0.22, "N° facture FAC75944"),
    ]);
    assert_clear_issuer(&doc, "Beaufortin Plomberie SAS");
}

#[test]
fn a_customer_named_under_the_billing_label_is_never_the_issuer_elsewhere_either() {
    let doc = placed(&[
        (0.1, 0.06, "Dubreuilh & Rocheblave SAS"),
        (0.1, 0.09, "106 rue des Tanneurs"),
        (0.1, 0.23, "Adresse de facturation:"),
        (0.1, 0.24, "Menuiserie Sauvaget EURL"),
        (0.1, 0.25, "41 allée des Erables"),
        (0.6, 0.24, "Menuiserie Sauvaget EURL"),
        (0.1, 0.30, "N° facture 202609-554"),
    ]);
    assert_clear_issuer(&doc, "Dubreuilh & Rocheblave SAS");
}

#[test]
fn each_label_of_a_line_of_addressee_labels_heads_its_own_block() {
    // `Livré à` is the fourth word of its line (words sit a twentieth apart): its block at 0.25.
    let mut doc = placed(&[
        (0.1, 0.06, "Dubreuilh & Rocheblave SAS"),
        (0.1, 0.09, "106 rue des Tanneurs"),
        (0.1, 0.23, "Adresse de facturation: Livré à:"),
        (0.1, 0.24, "Menuiserie Sauvaget EURL"),
        (0.1, 0.25, "41 allée des Erables"),
        (0.25, 0.24, "Atelier Sauvaget SARL"),
        (0.25, 0.25, "12 quai du Port"),
        (0.1, 0.30, "N° facture 202609-554"),
    ]);
    doc.pages[0].lines[2].words[3].bbox.left = 0.25;
    assert_clear_issuer(&doc, "Dubreuilh & Rocheblave SAS");
}

#[test]
fn a_city_and_its_postcode_are_no_sender_line() {
    let doc = placed(&[
        (0.1, 0.05, "Bhandarkar Enterprises LLP"),
        (0.6, 0.08, "Mysuru - 570001"),
        (0.1, 0.30, "Tax Invoice No: TI-1"),
    ]);
    assert_clear_issuer(&doc, "Bhandarkar Enterprises LLP");
}

#[test]
fn one_name_with_two_spellings_of_its_legal_form_is_one_name() {
    let doc = placed(&[
        (0.1, 0.05, "PAYMENT RECEIPT"),
        (0.1, 0.13, "Hotel Details Check In Check Out Rooms"),
        (0.1, 0.54, "Oravel Stays Pvt. Ltd."),
        (0.1, 0.66, "New Delhi - 110001"),
        (0.4, 0.75, "Oravel Stays Private Limited"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(
        value(&x, FieldName::Issuer).map(|v| v.starts_with("Oravel Stays")),
        Some(true)
    );
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
}
