use std::collections::BTreeMap;

use docket_core::config::PipelineConfig;
use docket_core::model::fields::FieldName;
use docket_core::ocr::OcrDocument;

use crate::score::score;
use crate::set::{Expected, Invoice};

fn invoice(lines: &[&str], fields: [(FieldName, Option<&str>); 5]) -> Invoice {
    Invoice {
        id: "test/one".into(),
        set: "test".into(),
        expected: Expected {
            source: "this test".into(),
            licence: "Apache-2.0".into(),
            language: "en".into(),
            country: "GB".into(),
            layout: None,
            fields: fields
                .into_iter()
                .map(|(f, v)| (f, v.map(str::to_string)))
                .collect::<BTreeMap<_, _>>(),
            issuer_also: vec![],
        },
        ocr: OcrDocument::from_lines(lines, 0.99),
        embedded: None,
    }
}

const CLEAR: &[&str] = &[
    "Northwind Traders Ltd",
    "INVOICE",
    "Invoice No: NW-2026-1187",
    "Invoice Date: 2026-11-12",
    "Total: EUR 756.00",
];

fn right(number: &str) -> [(FieldName, Option<&str>); 5] {
    [
        (FieldName::Issuer, Some("Northwind Traders Ltd")),
        (FieldName::InvoiceNumber, Some(number)),
        (FieldName::InvoiceDate, Some("2026-11-12")),
        (FieldName::TotalAmount, Some("756.00")),
        (FieldName::Currency, Some("EUR")),
    ]
}

#[test]
fn a_clear_invoice_read_right_is_auto_approved_without_error() {
    let s = score(
        &invoice(CLEAR, right("NW-2026-1187")),
        &PipelineConfig::builtin(),
    );
    assert_eq!(s.decision, "auto_approve");
    assert!(s.fields.iter().all(|f| f.right), "{s:?}");
    assert!(!s.silent_error);
}

#[test]
fn an_auto_approved_invoice_with_a_wrong_field_is_a_silent_error() {
    let s = score(
        &invoice(CLEAR, right("NW-2026-1188")),
        &PipelineConfig::builtin(),
    );
    assert_eq!(s.decision, "auto_approve");
    let number = &s.fields[1];
    assert_eq!(number.field, FieldName::InvoiceNumber);
    assert!(!number.right);
    assert!(s.silent_error);
}

#[test]
fn a_field_the_invoice_does_not_show_is_right_only_when_nothing_is_found() {
    let mut fields = right("NW-2026-1187");
    fields[1].1 = None;
    let s = score(&invoice(CLEAR, fields), &PipelineConfig::builtin());
    assert!(!s.fields[1].right, "a number found where none is printed");

    let without: Vec<&str> = CLEAR
        .iter()
        .copied()
        .filter(|l| !l.contains("No:"))
        .collect();
    let s = score(&invoice(&without, fields), &PipelineConfig::builtin());
    assert!(s.fields[1].right);
    assert_eq!(s.decision, "needs_review", "a missing number is a review");
}

/// Issue 14's rule: no auto-approved invoice of the labelled set has a wrong field. The set is
/// checked to be there (and read whole) before the absence of silent errors is asserted.
#[test]
fn no_labelled_invoice_is_auto_approved_with_a_wrong_field() {
    let report = crate::evaluate(&crate::default_dir(), &PipelineConfig::builtin())
        .expect("the labelled set loads (make eval-ocr writes missing OCR)");
    let count = |set: &str| report.sets.get(set).map_or(0, |s| s.invoices);
    assert!(count("real") >= 25, "only {} real invoices", count("real"));
    assert!(
        count("synthetic") >= 40,
        "only {} rendered invoices",
        count("synthetic")
    );
    let silent: Vec<_> = report
        .invoices
        .iter()
        .filter(|i| i.silent_error)
        .map(|i| &i.id)
        .collect();
    assert!(
        silent.is_empty(),
        "auto-approved with a wrong field: {silent:?}\n{}",
        report.text(true)
    );
}

/// The e-invoices the set's PDFs carry (Factur-X, ZUGFeRD 1 and 2) are read, and where they
/// disagree with the page a person is asked: none of them is auto-approved with a disagreement.
#[test]
fn the_e_invoices_of_the_labelled_set_are_read_and_a_disagreement_is_never_approved() {
    let report = crate::evaluate(&crate::default_dir(), &PipelineConfig::builtin())
        .expect("the labelled set loads");
    let carrying: Vec<_> = report
        .invoices
        .iter()
        .filter(|i| i.embedded.is_some())
        .collect();
    assert!(
        carrying.len() >= 18,
        "only {} e-invoices read",
        carrying.len()
    );
    assert!(carrying.iter().any(|i| i.decision == "auto_approve"));
    let disputed: Vec<_> = carrying.iter().filter(|i| !i.disputed.is_empty()).collect();
    assert!(
        !disputed.is_empty(),
        "the set has attachments that disagree with their page"
    );
    for invoice in disputed {
        assert_ne!(invoice.decision, "auto_approve", "{}", invoice.id);
    }
}
