//! Values in tables and beside labels of another document: the total row under a column of
//! amounts, the invoice's own currency beside the tax's, an associated invoice's number and
//! date.

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
