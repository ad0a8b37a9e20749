//! Values in tables: the total row under a column of amounts.

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
