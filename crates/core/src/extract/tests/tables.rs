//! Values in tables: the total row under a column of amounts, a header row whose column names
//! have lower-case words or name other fields' exclusions.

use super::*;

/// A totals table: `Endbetrag` heads the third column (words sit a twentieth apart).
fn totals_table(last: &str) -> OcrDocument {
    placed(&[
        (0.1, 0.05, "Acme GmbH | Europa-Allee 19 | 60486 Frankfurt"),
        (0.1, 0.40, "Nettobetrag MwSt Endbetrag"),
        (0.1, 0.42, "321,40 61,07 382,47"),
        (0.1, 0.44, "127,59 8,93 136,52"),
        (0.1, 0.46, &format!("448,99 70,00 {last}")),
    ])
}

#[test]
fn a_column_of_amounts_gives_its_total_row_when_it_sums_the_rows_above() {
    let x = extract(&totals_table("518,99"), &rules());
    assert_eq!(value(&x, FieldName::TotalAmount), Some("518.99"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99 * BELOW_LABEL);

    // Rows that do not add up: the first, for a person to check.
    let x = extract(&totals_table("500,00"), &rules());
    assert_eq!(value(&x, FieldName::TotalAmount), Some("382.47"));
    assert_close(
        confidence(&x, FieldName::TotalAmount),
        0.99 * BELOW_LABEL * ROWS_UNDER_LABEL,
    );
}

#[test]
fn a_header_row_reads_its_columns_whatever_else_it_names() {
    // Lower-case words in column names, and another column (`PO Number`) that the number's
    // labels exclude: `Invoice ID` and `Número de factura` still head their columns.
    let doc = placed(&[
        (0.1, 0.05, "Marrowfield Consulting Group Inc."),
        (
            0.1,
            0.19,
            "Invoice ID Date of Issue Due Date PO Number Grand Total",
        ),
        (
            0.1,
            0.21,
            "INV-96633 6/17/2025 7/17/2025 0142240 $10,310.08",
        ),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("INV-96633"));
    let doc = placed(&[
        (0.1, 0.05, "Arrietxe y Valdeoro S.L.U."),
        (
            0.1,
            0.18,
            "Numero de factura Fecha Vencimiento Código de cliente Liquido a percibir",
        ),
        (0.1, 0.20, "2025-A7333 05/06/25 CLI-8999 15.116,49 EUR"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("2025-A7333"));

    // A sentence is no header row, with or without its full stop.
    let doc = placed(&[
        (0.1, 0.05, "Acme GmbH"),
        (
            0.1,
            0.68,
            "Please quote the invoice number with your payment",
        ),
        (0.1, 0.70, "IBAN DE28 7001 0080 9999 9999 99"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), None);
}

#[test]
fn a_settled_invoice_gives_the_amount_it_was_for_not_its_zero_balance() {
    // A hotel's folio paid at checkout: the breakdown's and the balance's zeros come later, and
    // `Balance Due` is a preferred label; the amount the invoice was for is the total.
    let x = run(&[
        "Invoice No: 030405755",
        "Total 1,568.18 1,568.18",
        "Total Other 0.00 0.00",
        "Balance Due 0.00",
    ]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1568.18"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99);

    // Nothing but zeros: the invoice is for nothing, and says so.
    let x = run(&["Invoice No: 4711", "Amount Due: 0.00"]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("0.00"));
}

#[test]
fn a_total_row_naming_one_value_wins_over_a_later_row_that_does_not_add_up() {
    let breakdown = "Total Rooms 1,302.75 91.18";
    let x = run(&["Total 1,568.18 1,568.18", breakdown]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1568.18"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99);

    // The breakdown alone: its last amount, for a person to check.
    let x = run(&[breakdown]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("91.18"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99 * AMOUNT_IN_ROW);
}

#[test]
fn a_total_below_zero_is_for_a_person_to_check() {
    let x = run(&["Montant total / total amount -2,375.80"]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("-2375.80"));
    assert_close(
        confidence(&x, FieldName::TotalAmount),
        0.99 * NEGATIVE_TOTAL,
    );
}

#[test]
fn two_total_rows_of_a_page_naming_different_amounts_are_a_guess() {
    // The items' total, then a tax table's total row (central and state tax, their sum).
    let items = "Total 2 NOS 2,928.00";
    let x = run(&[items, "Total 7.50 320.25 320.25 640.50"]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("640.50"));
    assert_close(
        confidence(&x, FieldName::TotalAmount),
        0.99 * TOTAL_CONTESTED,
    );

    // The same amount twice (a summary repeating the total) is no contest.
    let x = run(&[items, "Total 2,928.00"]);
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99);
}

#[test]
fn a_value_whose_word_shares_its_room_with_the_next_is_for_a_person() {
    // Tesseract read `INV-2026-100770` as `INV-2026-1007` with `70` inside its box: the number
    // as read is short of its last digits, and three invoices read alike were refused as
    // duplicates downstream. Its confidence must send it to review.
    let split = |overlap: bool| {
        let mut doc = placed(&[
            (0.1, 0.05, "Northwind Traders Ltd"),
            (0.1, 0.10, "Invoice No: INV-2026-1007 70"),
        ]);
        let words = &mut doc.pages[0].lines[1].words;
        words[2].bbox.width = 0.30;
        words[3].bbox.left = if overlap { 0.46 } else { 0.52 };
        extract(&doc, &rules())
    };
    let x = split(true);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("INV-2026-1007"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * OVERLAPPING_WORDS,
    );
    // The same words apart: read as it stands.
    let x = split(false);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("INV-2026-1007"));
    assert_close(confidence(&x, FieldName::InvoiceNumber), 0.99);
}

#[test]
fn words_sharing_room_inside_the_value_or_with_a_leader_of_dots_lack_nothing() {
    // Tesseract drew `...Oct`'s box over `31, 2023` too, and a leader of dots under the date's
    // first word: the date holds every word of it, and dots hold nothing it could lack.
    let date = |leader_overlaps: bool, box_over_rest: bool| {
        let mut doc = placed(&[
            (0.1, 0.05, "Northwind Traders Ltd"),
            (0.1, 0.10, "Invoice date ........ Oct 31, 2023"),
        ]);
        let words = &mut doc.pages[0].lines[1].words;
        let (oct_left, oct_right) = (words[3].bbox.left, words[5].bbox.right());
        if leader_overlaps {
            words[2].bbox.width = oct_left + 0.02 - words[2].bbox.left;
        }
        if box_over_rest {
            words[3].bbox.width = oct_right - oct_left;
        }
        extract(&doc, &rules())
    };
    for (leader, over) in [(true, false), (false, true), (true, true)] {
        let x = date(leader, over);
        assert_eq!(value(&x, FieldName::InvoiceDate), Some("2023-10-31"));
        assert_close(confidence(&x, FieldName::InvoiceDate), 0.99);
    }
    // A word of letters outside the value in its room still discounts it.
    let mut doc = placed(&[
        (0.1, 0.05, "Northwind Traders Ltd"),
        (0.1, 0.10, "Invoice date Oct 31, 2023 Berlin"),
    ]);
    let words = &mut doc.pages[0].lines[1].words;
    words[5].bbox.left = words[4].bbox.left + 0.005;
    let x = extract(&doc, &rules());
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * OVERLAPPING_WORDS,
    );
}

/// An OCR of `lines` at 0.99 with the last word of line `unsure` read at 0.4.
fn doubted(lines: &[&str], unsure: usize) -> Extraction {
    let mut doc = OcrDocument::from_lines(lines, 0.99);
    if let Some(word) = doc.pages[0].lines[unsure].words.last_mut() {
        word.confidence = 0.4;
    }
    extract(&doc, &rules())
}

#[test]
fn a_total_that_its_net_at_a_printed_rate_gives_is_read_right_whatever_the_ocr_doubted() {
    let net = "Nettobetrag (zzgl. 19,00% MwSt.) 376,37";
    let x = doubted(&["Acme GmbH", net, "Summe gesamt 447,88"], 2);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("447.88"));
    assert_close(confidence(&x, FieldName::TotalAmount), CONFIRMED_READING);
    // No rate printed, or a net that does not give it: the OCR's doubt stands.
    let x = doubted(
        &["Acme GmbH", "Nettobetrag 376,37", "Summe gesamt 447,88"],
        2,
    );
    assert_close(confidence(&x, FieldName::TotalAmount), 0.4);
    let other = "Nettobetrag (zzgl. 19,00% MwSt.) 376,50";
    let x = doubted(&["Acme GmbH", other, "Summe gesamt 447,88"], 2);
    assert_close(confidence(&x, FieldName::TotalAmount), 0.4);
}

#[test]
fn a_total_written_out_in_words_confirms_a_row_that_does_not_add_up() {
    let lines = |words: &'static str| {
        [
            "Storeji Pvt Ltd",
            "TOTAL: 67.59 309.00",
            "Amount in Words:",
            words,
        ]
    };
    let x = doubted(&lines("Three Hundred And Nine only"), 1);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("309.00"));
    assert_close(confidence(&x, FieldName::TotalAmount), CONFIRMED_READING);
    // Words naming another amount confirm nothing: the row stays a guess.
    let x = doubted(&lines("Three Hundred And Ten only"), 1);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("309.00"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.4 * AMOUNT_IN_ROW);
}

#[test]
fn the_total_in_words_picks_the_total_row_and_the_tax_in_words_confirms_nothing() {
    let lines = [
        "DILIP TYRES",
        "Total NOS 2,928.00",
        "Amount Chargeable (in words)",
        "INR Two Thousand Nine Hundred Twenty Eight Only",
        "HSN/SAC Taxable Central Tax State Tax Total",
        "Total 7.50 320.25 320.25 640.50",
        "Tax Amount (in words) : INR Six Hundred Forty and Fifty paise Only",
    ];
    let x = run(&lines);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("2928.00"));
    // The words settle which of the two `Total` rows is the invoice's: no contest.
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99);
    // Without the amount in words, the later row wins, as totals close a document; the tax
    // written out in words does not vouch for it.
    let x = doubted(&[lines[0], lines[1], lines[4], lines[5], lines[6]], 3);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("640.50"));
    assert!(confidence(&x, FieldName::TotalAmount) < 0.4 + 1e-9);
}

/// A page of rows (`top`, words) whose words stand where given (`(left, word)`), each 0.04 wide.
fn spaced(rows: &[(f64, &[(f64, &str)])]) -> OcrDocument {
    let texts: Vec<String> = rows
        .iter()
        .map(|(_, words)| words.iter().map(|w| w.1).collect::<Vec<_>>().join(" "))
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut doc = OcrDocument::from_lines(&texts, 0.99);
    for (line, (top, words)) in doc.pages[0].lines.iter_mut().zip(rows) {
        line.bbox.left = words[0].0;
        line.bbox.width = words[words.len() - 1].0 + 0.04 - words[0].0;
        line.bbox.top = *top;
        for (word, &(left, _)) in line.words.iter_mut().zip(words.iter()) {
            word.bbox.left = left;
            word.bbox.width = 0.04;
            word.bbox.top = *top;
        }
    }
    doc
}

#[test]
fn a_column_that_a_title_names_alone_numbers_the_invoice_less_surely() {
    let header: &[(f64, &str)] = &[
        (0.07, "Klant"),
        (0.24, "Order"),
        (0.53, "Factuur"),
        (0.575, "datum"),
        (0.73, "Factuur"),
        (0.84, "Vervaldatum"),
    ];
    let row: &[(f64, &str)] = &[
        (0.07, "SCONL0303"),
        (0.24, "SCONL0004"),
        (0.53, "8-9-2022"),
        (0.72, "VF1005193039"),
        (0.84, "22-9-2022"),
    ];
    let x = extract(&spaced(&[(0.33, header), (0.35, row)]), &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("VF1005193039"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * TITLE_NUMBER * BELOW_LABEL * TITLE_COLUMN,
    );
    // A title that begins a column's name (`Invoice total`) names no column of numbers.
    let header: &[(f64, &str)] = &[(0.1, "Customer"), (0.4, "Invoice"), (0.445, "total")];
    let row: &[(f64, &str)] = &[(0.1, "K-1"), (0.4, "1234")];
    let x = extract(&spaced(&[(0.33, header), (0.35, row)]), &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), None);
}

#[test]
fn a_title_alone_as_a_key_in_a_column_of_keys_numbers_the_invoice() {
    // `Arve saaja:` (the addressee's label) on the left, `Arve   7008605` a column right of it.
    let row: &[(f64, &str)] = &[
        (0.05, "Arve"),
        (0.09, "saaja:"),
        (0.58, "Arve"),
        (0.77, "7008605"),
    ];
    let x = extract(&spaced(&[(0.10, row)]), &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("7008605"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * TITLE_NUMBER,
    );
    // A value that starts with a title's compound (`XRechnung 1.2`, a standard's version) is
    // no key of its own.
    let row: &[(f64, &str)] = &[(0.12, "Standard:"), (0.44, "XRechnung"), (0.485, "1.2")];
    let x = extract(&spaced(&[(0.10, row)]), &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), None);
}

#[test]
fn a_label_and_its_qualifier_take_the_amount_at_the_rows_right_above_zero_first() {
    let costs: &[(f64, &str)] = &[
        (0.14, "Totaal"),
        (0.19, "gemaakte"),
        (0.24, "kosten"),
        (0.29, "(incl."),
        (0.34, "btw)"),
    ];
    let earnings: &[(f64, &str)] = &[(0.14, "Totaal"), (0.19, "jouw"), (0.24, "opbrengsten")];
    let x = extract(
        &spaced(&[
            (0.30, &[(0.14, "Factuurnummer:"), (0.24, "3904228357264")]),
            (0.66, costs),
            (0.66, &[(0.67, "€18.445,61")]),
            (0.78, earnings),
            (0.78, &[(0.67, "€-50.476,85")]),
        ]),
        &rules(),
    );
    assert_eq!(value(&x, FieldName::TotalAmount), Some("18445.61"));
    assert_close(confidence(&x, FieldName::TotalAmount), 0.99 * BESIDE_LABEL);
    // A sentence holds no label for the amount at its row's right.
    let sentence: &[(f64, &str)] = &[
        (0.14, "Totaal"),
        (0.19, "wordt"),
        (0.24, "binnen"),
        (0.29, "veertien"),
        (0.34, "dagen"),
        (0.39, "geïncasseerd."),
    ];
    let x = extract(
        &spaced(&[(0.66, sentence), (0.66, &[(0.67, "€18.445,61")])]),
        &rules(),
    );
    assert_eq!(value(&x, FieldName::TotalAmount), None);
}

#[test]
fn a_generic_date_heading_a_column_of_dates_heads_the_items_and_a_later_pages_dateline_wins() {
    let mut doc = placed(&[
        (0.1, 0.05, "Leonardo Hotel"),
        (0.1, 0.44, "Date Description Debit"),
        (0.1, 0.46, "02-10-19 Accommodation 130.00"),
        (0.1, 0.48, "03-10-19 Accommodation 200.00"),
        (0.1, 0.60, "Total 330.00"),
    ]);
    let mut last = placed(&[(0.5, 0.42, "Leonardo Hotel Amsterdam, 13-10-19")]);
    last.pages[0].number = 2;
    doc.pages.push(last.pages.remove(0));
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2019-10-13"));
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * TWO_DIGIT_YEAR * DATELINE,
    );
    // One row under `Date`: the column names one date, the invoice's.
    let doc = placed(&[
        (0.1, 0.05, "Leonardo Hotel"),
        (0.1, 0.44, "Date Description Debit"),
        (0.1, 0.46, "02-10-19 Accommodation 130.00"),
        (0.1, 0.60, "Total 130.00"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2019-10-02"));
}

#[test]
fn a_label_wrapped_over_two_lines_of_a_narrow_column_heads_it() {
    let header: &[(f64, &str)] = &[(0.6, "Steuer"), (0.75, "Preis"), (0.88, "RECHNUNGS")];
    let under: &[(f64, &str)] = &[(0.75, "Steuer"), (0.88, "BETRAG")];
    let row: &[(f64, &str)] = &[(0.6, "1.907,88"), (0.75, "190,81"), (0.88, "2.098,69")];
    let x = extract(
        &spaced(&[(0.55, header), (0.56, under), (0.58, row)]),
        &rules(),
    );
    assert_eq!(value(&x, FieldName::TotalAmount), Some("2098.69"));
    // Words of two rows that do not stand one over the other make no label.
    let header: &[(f64, &str)] = &[(0.6, "Steuer"), (0.7, "RECHNUNGS")];
    let under: &[(f64, &str)] = &[(0.6, "Steuer"), (0.88, "BETRAG")];
    let x = extract(
        &spaced(&[(0.55, header), (0.56, under), (0.58, row)]),
        &rules(),
    );
    assert_eq!(value(&x, FieldName::TotalAmount), None);
}

#[test]
fn a_browsers_print_stamp_is_no_invoice_date_but_shows_the_order_of_its_dates() {
    let doc = placed(&[
        (0.04, 0.02, "23.06.23, 11:09 Invoice | TeamGantt"),
        (0.05, 0.08, "11/5/23"),
        (0.05, 0.16, "Invoice ID #4hrb48vz"),
        (0.05, 0.26, "Subscription total (due at renewal): $48.00"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2023-05-11"));
    // The same stamp inside the page is a date like any other.
    let doc = placed(&[
        (0.04, 0.10, "23.06.23, 11:09 Invoice | TeamGantt"),
        (0.05, 0.18, "11/5/23"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2023-06-23"));
}

#[test]
fn a_print_stamp_contests_no_generic_date() {
    let bill = |stamp_top: f64| {
        placed(&[
            (0.07, 0.11, "Indeed Ireland Operations Ltd"),
            (0.07, 0.13, "Datum: 31/08/2022"),
            (0.00, stamp_top, "1 von 1 02.09.22, 16:20"),
        ])
    };
    let x = extract(&bill(0.99), &rules());
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2022-08-31"));
    assert_close(confidence(&x, FieldName::InvoiceDate), 0.99);
    // Inside the page, the other date makes a generic `Datum` a guess.
    let x = extract(&bill(0.50), &rules());
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * DATE_CONTESTED,
    );
}
