//! The page and its embedded e-invoice (`extract::embedded`): what the attachment states counts
//! where the page confirms it, and a confident reading of the page against it goes to a person.

use super::super::embedded::spells;
use super::*;
use crate::model::embedded::{EmbeddedInvoice, Syntax};
use crate::validate::{validate, Decision, EMBEDDED_MISMATCH, LOW_CONFIDENCE};
use FieldName::{Currency, InvoiceDate, InvoiceNumber, Issuer, TotalAmount};

const THRESHOLD: f64 = 0.8;

const PAGE: &[&str] = &[
    "Kraxi GmbH",
    "Hauptstraße 1, 10115 Berlin",
    "Rechnung",
    "Rechnungsnummer: 2014-03",
    "Rechnungsdatum: 11.07.2014",
    "Gesamtbetrag EUR 1.005,55",
];

fn stated(pairs: &[(FieldName, &str)]) -> EmbeddedInvoice {
    EmbeddedInvoice {
        syntax: Syntax::Cii,
        sha256: "0".repeat(64),
        fields: pairs.iter().map(|&(k, v)| (k, v.to_string())).collect(),
    }
}

fn kraxi() -> EmbeddedInvoice {
    stated(&[
        (Issuer, "Kraxi GmbH"),
        (InvoiceNumber, "2014-03"),
        (InvoiceDate, "2014-07-11"),
        (TotalAmount, "1005.55"),
        (Currency, "EUR"),
    ])
}

fn read(lines: &[&str], confidence: f64, invoice: &EmbeddedInvoice) -> Extraction {
    let doc = OcrDocument::from_lines(lines, confidence);
    with_embedded(&doc, &rules(), Some(invoice), THRESHOLD)
}

#[test]
fn values_the_page_reads_the_same_are_confirmed_at_the_attachment_s_confidence() {
    let page = read(PAGE, 0.99, &kraxi());
    let alone = read(PAGE, 0.99, &stated(&[]));
    for name in FieldName::ALL {
        assert_eq!(page.fields[&name].value, kraxi().fields[&name], "{name}");
        assert!(page.fields[&name].confidence >= EMBEDDED_ON_PAGE, "{name}");
        // Where the page has it: its line, for the review page's outline.
        assert_eq!(page.fields[&name].line, alone.fields[&name].line, "{name}");
    }
    assert!(page.disputed.is_empty());
    assert_eq!(page.embedded, Some(kraxi()));
    let report = validate(
        &page,
        &PipelineConfig::builtin().validation,
        date(2014, 7, 20),
    );
    assert_eq!(report.decision, Decision::AutoApprove);
}

#[test]
fn a_page_read_in_doubt_takes_the_attachment_s_values_where_a_line_prints_them() {
    let page = read(PAGE, 0.5, &kraxi());
    let alone = extract(&OcrDocument::from_lines(PAGE, 0.5), &rules());
    assert!(alone.fields.values().all(|f| f.confidence < THRESHOLD));
    for name in FieldName::ALL {
        assert_close(page.fields[&name].confidence, EMBEDDED_ON_PAGE);
    }
    // A value no extraction found, printed on a line all the same: that line.
    let unlabelled = ["Kraxi GmbH", "Beleg 2014-03 vom 11.07.2014", "EUR 1.005,55"];
    let page = read(&unlabelled, 0.5, &kraxi());
    assert_eq!(page.fields[&InvoiceNumber].line, 1);
    assert_close(page.fields[&InvoiceNumber].confidence, EMBEDDED_ON_PAGE);
}

#[test]
fn a_page_that_reads_another_value_keeps_it_for_a_person_or_in_doubt_yields_it() {
    let page = read(
        PAGE,
        0.99,
        &stated(&[(InvoiceNumber, "2014-03"), (TotalAmount, "99.00")]),
    );
    // The page reads 1,005.55 confidently: a dispute, the page's value kept.
    assert_eq!(page.value(TotalAmount), Some("1005.55"));
    assert_eq!(page.disputed, [TotalAmount].into());
    assert_close(page.fields[&TotalAmount].confidence, DISPUTED);
    let reasons = review_reasons(&page);
    let codes: Vec<_> = reasons.iter().map(|r| (r.code.as_str(), r.field)).collect();
    assert_eq!(
        codes,
        [
            (EMBEDDED_MISMATCH, Some(TotalAmount)),
            (LOW_CONFIDENCE, Some(TotalAmount))
        ]
    );
    assert!(reasons[0].detail.contains("1005.55") && reasons[0].detail.contains("99.00"));

    // Read in doubt, and 99.00 printed nowhere: the attachment's value, below the threshold.
    let page = read(PAGE, 0.5, &stated(&[(TotalAmount, "99.00")]));
    assert_eq!(page.value(TotalAmount), Some("99.00"));
    assert_close(page.fields[&TotalAmount].confidence, EMBEDDED_NOT_ON_PAGE);
    assert!(page.disputed.is_empty());
    let reasons = review_reasons(&page);
    assert!(reasons
        .iter()
        .any(|r| r.code == LOW_CONFIDENCE && r.field == Some(TotalAmount)));
}

#[test]
fn of_two_numbers_the_page_reads_a_dispute_keeps_the_one_the_attachment_states() {
    // The title numbers the invoice, a note's label another number: the label's reading wins
    // on the page alone, the attachment sides with the title's.
    let page = [
        "Handelsrechnung Nr. E2014-03 vom 11.07.2014",
        "Bitte geben Sie die Belegnummer 2014-03 an",
        "Gesamtbetrag EUR 1.005,55",
    ];
    let alone = extract(&OcrDocument::from_lines(&page, 0.99), &rules());
    assert_eq!(alone.value(InvoiceNumber), Some("2014-03"));
    let x = read(&page, 0.99, &stated(&[(InvoiceNumber, "E2014-03")]));
    assert_eq!(x.value(InvoiceNumber), Some("E2014-03"));
    assert_eq!(x.fields[&InvoiceNumber].line, 0);
    assert_close(x.fields[&InvoiceNumber].confidence, DISPUTED);
    assert_eq!(x.disputed, [InvoiceNumber].into());
    // A number the page does not read as the invoice's leaves the page's reading in place.
    let x = read(&page, 0.99, &stated(&[(InvoiceNumber, "2014-77")]));
    assert_eq!(x.value(InvoiceNumber), Some("2014-03"));
    assert_eq!(x.disputed, [InvoiceNumber].into());
}

#[test]
fn a_value_printed_elsewhere_does_not_overrule_the_page_s_own_reading_of_the_field() {
    // The page's total read in doubt as 1,005.55; the attachment states 48.00, an item's amount
    // the page prints too: a person decides, whatever the page prints elsewhere.
    let page = [PAGE, &["Wartung 48,00"]].concat();
    let x = read(
        &page,
        0.5,
        &stated(&[(TotalAmount, "48.00"), (Issuer, "Hauptstraße")]),
    );
    assert_eq!(x.value(TotalAmount), Some("48.00"));
    assert_close(x.fields[&TotalAmount].confidence, EMBEDDED_NOT_ON_PAGE);
    // A name the page prints (here a street) is not the issuer the page reads.
    assert_close(x.fields[&Issuer].confidence, EMBEDDED_NOT_ON_PAGE);
    // With nothing read for the field, a line that prints the value confirms it.
    let x = read(&["Wartung 48,00"], 0.5, &stated(&[(TotalAmount, "48.00")]));
    assert_close(x.fields[&TotalAmount].confidence, EMBEDDED_ON_PAGE);
    // A date in ISO order without separators, which the page's reading leaves alone.
    let compact = ["Date : 20140711 - Echéance : 20140810"];
    let x = read(&compact, 0.99, &stated(&[(InvoiceDate, "2014-07-11")]));
    assert_close(x.fields[&InvoiceDate].confidence, EMBEDDED_ON_PAGE);
    let x = read(&compact, 0.99, &stated(&[(InvoiceDate, "2014-07-12")]));
    assert_close(x.fields[&InvoiceDate].confidence, EMBEDDED_NOT_ON_PAGE);
}

#[test]
fn an_issuer_with_its_legal_form_and_one_without_are_one_name_kept_with_it() {
    let page = [
        "Au bon moulin SARL",
        "Facture N° FA-2017-0010",
        "Total TTC 470,15 €",
    ];
    let x = read(&page, 0.99, &stated(&[(Issuer, "Au bon moulin")]));
    assert_eq!(x.value(Issuer), Some("Au bon moulin SARL"));
    assert!(x.disputed.is_empty());
    // Another name is a dispute, even one that begins the same.
    let x = read(&page, 0.99, &stated(&[(Issuer, "Au bon moulin Lyon")]));
    assert_eq!(x.disputed, [Issuer].into());
}

#[test]
fn an_issuer_s_name_over_two_lines_is_printed_on_the_page() {
    let page = [
        "MVM Musterhafter Versicherungsverein",
        "Musterstadt a.G.",
        "Rechnungsnummer: 00.123",
        "Gesamtbetrag EUR 440,00",
    ];
    let name = "MVM Musterhafter Versicherungsverein Musterstadt a.G.";
    let x = read(&page, 0.5, &stated(&[(Issuer, name)]));
    // The page alone reads the name's second line, in doubt: one name with the attachment's.
    let alone = extract(&OcrDocument::from_lines(&page, 0.5), &rules());
    assert_eq!(alone.value(Issuer), Some("Musterstadt a.G."));
    assert_eq!(x.value(Issuer), Some(name));
    assert_close(x.fields[&Issuer].confidence, EMBEDDED_ON_PAGE);
    assert_eq!(x.fields[&Issuer].line, 1);
    // A name the page prints on two lines that are not the page's reading of the issuer is no
    // confirmation.
    let other = "Rechnungsnummer 00.123 Gesamtbetrag";
    let x = read(&page, 0.5, &stated(&[(Issuer, other)]));
    assert_close(x.fields[&Issuer].confidence, EMBEDDED_NOT_ON_PAGE);
}

#[test]
fn a_value_is_printed_as_whole_words_whatever_its_separators() {
    assert!(spells("Rechnung RE 2014/03", "RE-2014-03"));
    assert!(spells("Nr.2014-03 vom", "2014-03"));
    assert!(spells(
        "Société Hôtelière du Pacano",
        "Societe Hoteliere du PACANO"
    ));
    assert!(!spells("Nr. 12014-03", "2014-03"));
    assert!(!spells("Nr. 2014-031", "2014-03"));
    assert!(!spells("Rechnung 42", "42"));
}

/// Why validation sends `x` to a person (it must).
fn review_reasons(x: &Extraction) -> Vec<crate::validate::Reason> {
    let report = validate(x, &PipelineConfig::builtin().validation, date(2014, 7, 20));
    let Decision::NeedsReview { reasons } = report.decision else {
        panic!("{:?}", report.decision);
    };
    reasons
}

fn date(y: i32, m: u8, d: u8) -> time::Date {
    time::Date::from_calendar_date(y, m.try_into().unwrap(), d).unwrap()
}
