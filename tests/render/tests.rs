use std::process::Command;

use super::*;

/// The text poppler's `pdftotext` reads from `pdf`, in content-stream order (`-raw`, which
/// also reads a rotated stamp whole).
fn text_of(pdf: &[u8], name: &str) -> String {
    let path =
        std::env::temp_dir().join(format!("docket-render-{}-{name}.pdf", std::process::id()));
    std::fs::write(&path, pdf).unwrap();
    let out = Command::new("pdftotext")
        .args(["-raw", "-enc", "UTF-8"])
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils) must be installed");
    std::fs::remove_file(&path).ok();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn accents_and_currency_signs_read_back_from_every_font() {
    let line = "Café Müller Straße Señor à è ö ä ü: € 1.234,56 £12.00 ₹1,23,456.00 (N°)";
    let mut page = Page::a4();
    for (i, font) in Font::ALL.into_iter().enumerate() {
        page.text(40.0, 60.0 + 30.0 * i as f32, font.at(11.0), line);
    }
    let text = text_of(&document(&[page]), "accents");
    assert_eq!(text.matches(line).count(), 4, "{text}");
}

#[test]
fn right_aligned_runs_end_at_their_x() {
    let mut page = Page::a4();
    page.text_right(500.0, 100.0, Font::Helvetica.at(10.0), "1.234,56 €");
    let placed = page.placed();
    assert!((placed[0].right - 500.0).abs() < 1e-3);
    assert!(page.collisions().is_empty());
    page.text(470.0, 102.0, Font::Helvetica.at(10.0), "x");
    assert_eq!(page.collisions().len(), 1);
}

#[test]
fn stamps_rules_and_speckles_make_a_valid_page() {
    let mut page = Page::new(300.0, 200.0);
    page.frame(10.0, 10.0, 280.0, 180.0, 0.5)
        .line(10.0, 50.0, 290.0, 50.0, 0.3)
        .stamp(150.0, 100.0, 20.0, 18.0, "BETAALD")
        .speckle([(20.0, 20.0, 1.0), (200.0, 150.0, 0.8)], 0.4);
    let pdf = document(&[page.clone(), page]);
    assert!(text_of(&pdf, "stamp").contains("BETAALD"));
    assert_eq!(png_of(&pdf)[..4], *b"\x89PNG");
}

#[test]
fn an_attached_xml_file_is_listed_by_poppler_and_read_as_an_e_invoice() {
    let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
  xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100">
  <rsm:ExchangedDocument><ram:ID>WT-310</ram:ID></rsm:ExchangedDocument>
</rsm:CrossIndustryInvoice>"#;
    let pdf = pdf_with_xml(
        &[&["Wingtip Toys SARL", "Facture No WT-310"]],
        "factur-x.xml",
        xml,
    );
    let path = std::env::temp_dir().join(format!("docket-render-{}-xml.pdf", std::process::id()));
    std::fs::write(&path, &pdf).unwrap();
    let listed = Command::new("pdfdetach")
        .arg("-list")
        .arg(&path)
        .output()
        .expect("pdfdetach (poppler-utils) must be installed");
    std::fs::remove_file(&path).ok();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(
        listed.contains("1 embedded files") && listed.contains("factur-x.xml"),
        "{listed}"
    );
    assert!(text_of(&pdf, "xml").contains("Facture No WT-310"));
    let docket_core::einvoice::Embedded::Read(invoice) = docket_core::einvoice::from_document(&pdf)
    else {
        panic!("no e-invoice read");
    };
    let number = docket_core::model::fields::FieldName::InvoiceNumber;
    assert_eq!(invoice.fields[&number], "WT-310");
}
