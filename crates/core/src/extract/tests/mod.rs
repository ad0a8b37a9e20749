//! Extraction from whole invoices (US, UK, German, stacked, noisy) and from the lines that
//! trip each field's search up.

use super::amounts::normalize_amount;
use super::*;
use crate::config::{DateOrder, PipelineConfig};

fn rules() -> ExtractionRules {
    PipelineConfig::builtin().extraction
}

fn run(lines: &[&str]) -> Extraction {
    extract(&OcrDocument::from_lines(lines, 0.99), &rules())
}

fn value(x: &Extraction, name: FieldName) -> Option<&str> {
    x.value(name)
}

fn confidence(x: &Extraction, name: FieldName) -> f64 {
    x.fields[&name].confidence
}

fn assert_close(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() < 1e-9,
        "confidence {actual} != {expected}"
    );
}

const US: &[&str] = &[
    "Acme Supply Co.",
    "1200 Market Street, Suite 400",
    "San Francisco, CA 94103",
    "INVOICE",
    "Invoice #: INV-2026-0042",
    "Invoice Date: March 14, 2026",
    "Due Date: April 13, 2026",
    "Bill To:",
    "Globex Corporation",
    "Description Qty Unit Price Amount",
    "Consulting services 10 $120.00 $1,200.00",
    "Subtotal $1,200.00",
    "Sales Tax (8.5%) $102.00",
    "Amount Due: $1,302.00",
];

const UK: &[&str] = &[
    "BRIGHTLINE CONSULTING LTD",
    "Unit 4, 22 Canal Street",
    "Manchester M1 3HE",
    "VAT Reg No: GB 123 4567 89",
    "Tax Invoice",
    "Invoice No. BL-0911",
    "Date: 14/03/2026",
    "Net Total £2,500.00",
    "VAT @ 20% £500.00",
    "Total £3,000.00",
];

const DE: &[&str] = &[
    "Müller Maschinenbau GmbH",
    "Industriestraße 12, 70173 Stuttgart",
    "Rechnung",
    "Rechnungsnummer: RE-2026-117",
    "Rechnungsdatum: 14.03.2026",
    "Kundennummer: K-5521",
    "Zwischensumme 1.037,45 €",
    "MwSt. 19% 197,11 €",
    "Gesamtbetrag 1.234,56 €",
];

const STACKED: &[&str] = &[
    "Northwind Traders AG",
    "Bahnhofstrasse 1, 8001 Zürich",
    "INVOICE",
    "Invoice Number",
    "NW-88017",
    "Invoice Date",
    "2026-02-28",
    "Currency",
    "CHF",
    "Total Due",
    "4'850.00",
];

const SUBTOTALS: &[&str] = &[
    "Contoso Office Supplies BV",
    "Invoice ID: CT/2026/0315",
    "Date of Issue: 5 March 2026",
    "Sub Total EUR 900.00",
    "Discount EUR -50.00",
    "Total excl. VAT EUR 850.00",
    "Total VAT (21%) EUR 178.50",
    "Total EUR 1,028.50",
    "Total Hours 12",
];

const NOISY: &[&str] = &[
    "| : .",
    "Hartmann & Vos BV",
    "Keizersgracht 1OO, Amsterdam",
    "INV0ICE",
    "Invoice  No :  HV-2026/77",
    "Invoice Date: 2O26-O3-14",
    "Total   EUR   1.25O,OO",
];

#[test]
fn us_invoice_with_dollar_and_amount_due_extracts_every_field() {
    let x = run(US);
    assert_eq!(value(&x, FieldName::Issuer), Some("Acme Supply Co."));
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("INV-2026-0042"));
    // the invoice date, not the due date
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
    // the amount due, not the subtotal or a line amount
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1302.00"));
    assert_eq!(value(&x, FieldName::Currency), Some("USD"));
    assert_eq!(
        (
            x.fields[&FieldName::TotalAmount].page,
            x.fields[&FieldName::TotalAmount].line
        ),
        (1, 13)
    );
    // labelled values keep the OCR confidence; heuristics are discounted
    assert_close(confidence(&x, FieldName::InvoiceNumber), 0.99);
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    assert_close(confidence(&x, FieldName::Currency), 0.99 * CURRENCY_SYMBOL);
}

#[test]
fn uk_invoice_with_pound_and_invoice_no_extracts_every_field() {
    let x = run(UK);
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("BRIGHTLINE CONSULTING LTD")
    );
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("BL-0911"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
    assert_eq!(value(&x, FieldName::TotalAmount), Some("3000.00"));
    assert_eq!(value(&x, FieldName::Currency), Some("GBP"));
    assert_close(confidence(&x, FieldName::InvoiceDate), 0.99);
}

#[test]
fn german_invoice_with_european_amount_and_euro_sign_extracts_every_field() {
    let x = run(DE);
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Müller Maschinenbau GmbH")
    );
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("RE-2026-117"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1234.56"));
    assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
}

#[test]
fn values_on_the_line_after_their_labels_are_extracted_at_that_line() {
    let x = run(STACKED);
    assert_eq!(value(&x, FieldName::Issuer), Some("Northwind Traders AG"));
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("NW-88017"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-02-28"));
    assert_eq!(value(&x, FieldName::TotalAmount), Some("4850.00"));
    assert_eq!(value(&x, FieldName::Currency), Some("CHF"));
    let number = &x.fields[&FieldName::InvoiceNumber];
    assert_eq!((number.page, number.line), (1, 4));
    assert_close(number.confidence, 0.99 * NEXT_LINE);
}

#[test]
fn subtotal_net_and_tax_totals_above_the_total_are_not_taken_for_it() {
    let x = run(SUBTOTALS);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1028.50"));
    assert_eq!(x.fields[&FieldName::TotalAmount].line, 7);
    assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
    assert_close(confidence(&x, FieldName::Currency), 0.99);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("CT/2026/0315"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-05"));
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Contoso Office Supplies BV")
    );
}

#[test]
fn ocr_noise_is_repaired_in_numbers_at_a_lower_confidence() {
    // given a scan with stray marks, spacing and O for 0, and one blurry word
    let mut doc = OcrDocument::from_lines(NOISY, 0.97);
    let blurry = &mut doc.pages[0].lines[4].words[3];
    assert_eq!(blurry.text, "HV-2026/77");
    blurry.confidence = 0.62;
    // when extracted
    let x = extract(&doc, &rules());
    // then the values are right
    assert_eq!(value(&x, FieldName::Issuer), Some("Hartmann & Vos BV"));
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("HV-2026/77"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1250.00"));
    assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
    // and what was repaired or blurry carries its doubt
    assert_close(confidence(&x, FieldName::InvoiceDate), 0.97 * OCR_REPAIRED);
    assert_close(confidence(&x, FieldName::TotalAmount), 0.97 * OCR_REPAIRED);
    assert_close(confidence(&x, FieldName::InvoiceNumber), 0.62);
    assert_close(confidence(&x, FieldName::Currency), 0.97);
}

#[test]
fn a_document_without_labels_has_no_number_total_or_currency() {
    let x = run(&["Acme Widgets Ltd", "Thank you for your business"]);
    assert_eq!(
        x.fields.keys().copied().collect::<Vec<_>>(),
        vec![FieldName::Issuer]
    );
    assert_eq!(
        extract(&OcrDocument::from_lines(&[], 0.9), &rules()),
        Extraction::default()
    );
}

#[test]
fn issuer_comes_from_an_explicit_label_before_the_letterhead() {
    let x = run(&[
        "INVOICE",
        "Globex Corporation",
        "Seller: Initech Ltd, 4 Office Park",
    ]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Initech Ltd"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99);
    assert_eq!(x.fields[&FieldName::Issuer].line, 2);
}

#[test]
fn a_service_period_after_from_is_not_taken_for_the_issuer() {
    let x = run(&["Globex Ltd", "From 01/03/2026 to 31/03/2026"]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Globex Ltd"));
    assert_eq!(x.fields[&FieldName::Issuer].line, 0);
}

#[test]
fn sentences_titles_and_address_lines_are_not_taken_for_the_issuer() {
    let x = run(&[
        "Thank you for your business!",
        "TAX INVOICE",
        "12 High Street",
        "accounts@example.com",
        "Page 1 of 2",
        "Smith & Sons of London",
    ]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Smith & Sons of London"));
    assert_eq!(x.fields[&FieldName::Issuer].line, 5);
}

#[test]
fn letterhead_issuer_without_a_company_suffix_is_less_confident() {
    let x = run(&["INVOICE", "Northwind Traders", "12 Harbour Road"]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Northwind Traders"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_GUESSED);
}

#[test]
fn the_customer_after_bill_to_is_not_taken_for_the_issuer() {
    let x = run(&["Bill To:", "Globex Corporation", "Initech", "Invoice No: 7"]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Initech"));
}

#[test]
fn dates_in_every_supported_format_are_normalized_to_iso() {
    for (printed, iso) in [
        ("2026-03-14", "2026-03-14"),
        ("14/03/2026", "2026-03-14"),
        ("14.03.2026", "2026-03-14"),
        ("03/14/2026", "2026-03-14"),
        ("14 March 2026", "2026-03-14"),
        ("March 14, 2026", "2026-03-14"),
        ("14 Mar 2026", "2026-03-14"),
        ("14th Mar. 2026", "2026-03-14"),
        ("14. März 2026", "2026-03-14"),
        ("Mar 4 2026", "2026-03-04"),
        ("04.03.2026", "2026-03-04"),
    ] {
        let line = format!("Invoice Date: {printed}");
        let x = run(&[line.as_str()]);
        assert_eq!(value(&x, FieldName::InvoiceDate), Some(iso), "{printed}");
        assert_close(confidence(&x, FieldName::InvoiceDate), 0.99);
    }
}

#[test]
fn ambiguous_date_follows_the_configured_order_at_a_lower_confidence() {
    let lines = ["Date: 03/04/2026"];
    let x = run(&lines);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-04-03"));
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * AMBIGUOUS_DATE,
    );

    let mut us = rules();
    us.date_order = DateOrder::Mdy;
    let x = extract(&OcrDocument::from_lines(&lines, 0.99), &us);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-04"));
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * AMBIGUOUS_DATE,
    );
}

#[test]
fn an_impossible_date_is_kept_raw_for_validation_to_reject() {
    let x = run(&["Invoice Date: 31/02/2026"]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("31/02/2026"));
}

#[test]
fn an_unlabelled_date_on_page_one_is_a_low_confidence_fallback() {
    let x = run(&[
        "Acme Ltd",
        "Due 30/04/2026",
        "14 March 2026 Consulting 100.00",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2026-03-14"));
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * DATE_UNLABELLED,
    );
}

#[test]
fn a_letters_dateline_is_its_date_when_no_label_names_one() {
    let x = run(&[
        "Muster GmbH",
        "Finanzrate vom 01.11.2024 bis 30.11.2024",
        "München, den 04.11.2024",
    ]);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2024-11-04"));
    assert_close(confidence(&x, FieldName::InvoiceDate), 0.99 * DATELINE);

    // A date after words with digits, or followed by more text, is no dateline.
    let x = run(&[
        "Acme Ltd",
        "Unit 4, 14 March 2026",
        "London, 15 March 2026 ref 12",
    ]);
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * DATE_UNLABELLED,
    );
}

#[test]
fn amounts_in_every_supported_notation_are_normalized() {
    for (printed, normalized) in [
        ("1,234.50", "1234.50"),
        ("1.234,50", "1234.50"),
        ("1234,5", "1234.50"),
        ("1'234.50", "1234.50"),
        ("1 234,50", "1234.50"),
        ("12 345 678.00", "12345678.00"),
        ("1,234", "1234.00"),
        ("1.234.567,89", "1234567.89"),
        ("12", "12.00"),
        ("0.99", "0.99"),
        ("-50.00", "-50.00"),
    ] {
        assert_eq!(
            normalize_amount(printed).as_deref(),
            Some(normalized),
            "{printed}"
        );
    }
    for malformed in ["1.234.5", "1,23,4.5", "12.345,6,7", "1234.567", "0.125"] {
        assert_eq!(normalize_amount(malformed), None, "{malformed}");
    }
}

#[test]
fn a_malformed_total_is_kept_raw_for_validation_to_reject() {
    let x = run(&["Total Due: 1.234.5 EUR"]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1.234.5"));
    assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
}

#[test]
fn space_grouped_totals_are_read_whole() {
    let x = run(&["Montant total : 1 234,56 €"]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1234.56"));
    assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
}

#[test]
fn percentages_and_dates_on_the_total_line_are_not_the_total() {
    let x = run(&["Total (incl. 19% VAT, due 14.04.2026): 1.190,00"]);
    assert_eq!(value(&x, FieldName::TotalAmount), Some("1190.00"));
}

#[test]
fn currency_mentioned_only_elsewhere_is_less_confident() {
    let x = run(&["All amounts in CHF", "Total: 100.00"]);
    assert_eq!(value(&x, FieldName::Currency), Some("CHF"));
    assert_close(
        confidence(&x, FieldName::Currency),
        0.99 * CURRENCY_ELSEWHERE,
    );

    let x = run(&[
        "Paid in USD",
        "Fees in EUR",
        "EUR 5 bank charge",
        "Total: 100.00",
    ]);
    assert_eq!(value(&x, FieldName::Currency), Some("EUR"));
    assert_close(
        confidence(&x, FieldName::Currency),
        0.99 * CURRENCY_CONFLICT,
    );
}

#[test]
fn field_confidence_is_the_lowest_word_confidence_of_the_value() {
    let mut doc = OcrDocument::from_lines(&["Invoice Date: 14 March 2026"], 0.99);
    doc.pages[0].lines[0].words[3].confidence = 0.7; // "March"
    doc.pages[0].lines[0].words[0].confidence = 0.1; // the label does not count
    let x = extract(&doc, &rules());
    assert_close(confidence(&x, FieldName::InvoiceDate), 0.7);
}

#[test]
fn fields_on_later_pages_report_their_page_and_line() {
    let mut doc = OcrDocument::from_lines(&["Acme Widgets Ltd", "Invoice No: A-1"], 0.99);
    let mut second = OcrDocument::from_lines(&["Carried over", "Total: EUR 99.90"], 0.9);
    second.pages[0].number = 2;
    doc.pages.append(&mut second.pages);
    let x = extract(&doc, &rules());
    let total = &x.fields[&FieldName::TotalAmount];
    assert_eq!(
        (total.value.as_str(), total.page, total.line),
        ("99.90", 2, 1)
    );
    assert_close(total.confidence, 0.9);
    assert_eq!(x.fields[&FieldName::Currency].page, 2);
}

#[test]
fn odd_text_never_panics() {
    let lines = [
        "İSTANBUL ŞİRKETİ A.Ş.",
        "Total: €",
        "Invoice No:",
        "Date: 99/99/9999 ٣/٣/٢٠٢٦",
        "Total — — 1.",
        "ﬁ ß ẞ 𝟙𝟚𝟛 ,,, ... ’’’",
        "Amount Due",
    ];
    let x = run(&lines);
    assert_eq!(value(&x, FieldName::InvoiceNumber), None);
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("99/99/9999"));
}

/// A page of lines placed at (left, top), one word a twentieth of the width apart.
pub(super) fn placed(lines: &[(f64, f64, &str)]) -> OcrDocument {
    let mut doc = OcrDocument::from_lines(&lines.iter().map(|l| l.2).collect::<Vec<_>>(), 0.99);
    for (line, &(left, top, _)) in doc.pages[0].lines.iter_mut().zip(lines) {
        line.bbox.left = left;
        line.bbox.top = top;
        for (j, word) in line.words.iter_mut().enumerate() {
            word.bbox.left = left + j as f64 * 0.05;
            word.bbox.width = 0.045;
            word.bbox.top = top;
        }
    }
    doc
}

/// The issuer of `doc` is `name`, found from evidence that clearly beats any other name's.
pub(super) fn assert_clear_issuer(doc: &OcrDocument, name: &str) {
    let x = extract(doc, &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some(name));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
}

mod blocks;
mod embedded;
mod evidence;
mod issuers;
mod labels;
mod language;
mod names;
mod tables;
