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
