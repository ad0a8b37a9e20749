//! Embedded e-invoices: real Factur-X and ZUGFeRD PDFs of the evaluation set, and PDFs built
//! here around one attachment to show each rule of the reader.

use std::collections::BTreeMap;

use miniz_oxide::deflate::compress_to_vec_zlib;

use super::*;
use crate::model::fields::FieldName;

fn real(id: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/invoices/real/{id}/document.pdf",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn read(raw: &[u8]) -> EmbeddedInvoice {
    match from_document(raw) {
        Embedded::Read(invoice) => invoice,
        other => panic!("no e-invoice read: {other:?}"),
    }
}

fn fields(pairs: [(FieldName, &str); 5]) -> BTreeMap<FieldName, String> {
    pairs.into_iter().map(|(k, v)| (k, v.to_string())).collect()
}

use FieldName::{Currency, InvoiceDate, InvoiceNumber, Issuer, TotalAmount};

#[test]
fn factur_x_of_a_real_pdf_states_its_five_fields() {
    let invoice = read(&real("facturx-le-fournisseur"));
    assert_eq!(invoice.syntax, Syntax::Cii);
    assert_eq!(
        invoice.fields,
        fields([
            (Issuer, "LE FOURNISSEUR"),
            (InvoiceNumber, "F20260023"),
            (InvoiceDate, "2026-01-31"),
            (TotalAmount, "104.90"),
            (Currency, "EUR"),
        ])
    );
    assert_eq!(invoice.sha256.len(), 64);
}

#[test]
fn zugferd_1_deflated_behind_an_indirect_length_and_in_the_clear() {
    // Kraxi: `/Length 20 0 R` and FlateDecode, in a PDF with object streams.
    let kraxi = read(&real("mustang-kraxi"));
    assert_eq!(kraxi.syntax, Syntax::Zugferd1);
    assert_eq!(kraxi.fields[&TotalAmount], "1005.55");
    assert_eq!(kraxi.fields[&InvoiceDate], "2014-07-11");
    // Lieferant: the XML as it is, no filter.
    let lieferant = read(&real("zugferd-lieferant-comfort"));
    assert_eq!(lieferant.fields[&Issuer], "Lieferant GmbH");
    assert_eq!(lieferant.fields[&InvoiceNumber], "471102");
}

#[test]
fn zugferd_release_candidate_and_a_pound_invoice() {
    let rc = read(&real("zugferd-gnuaccounting-de"));
    assert_eq!(rc.syntax, Syntax::Zugferd1);
    assert_eq!(rc.fields[&InvoiceNumber], "RE-20140519/499");
    assert_eq!(rc.fields[&Issuer], "usegroup Inh. Jochen Stärk");
    let gbp = read(&real("zugferd-rohstoff-gbp"));
    assert_eq!(gbp.fields[&Currency], "GBP");
    assert_eq!(gbp.fields[&TotalAmount], "521.91");
}

#[test]
fn a_pdf_without_an_attachment_and_a_document_that_is_no_pdf_carry_nothing() {
    assert_eq!(
        from_document(&real("invoice2data-amazon-de")),
        Embedded::Absent
    );
    assert_eq!(from_document(b"\x89PNG\r\n\x1a\n"), Embedded::Absent);
    assert_eq!(
        from_document(&pdf(&[&stream("", CII.as_bytes())])[1..]),
        Embedded::Absent
    );
}

const CII: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
  xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
  xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">
  <rsm:ExchangedDocument>
    <ram:ID>FX-7</ram:ID><ram:TypeCode>380</ram:TypeCode>
    <ram:IssueDateTime><udt:DateTimeString format="102">20260131</udt:DateTimeString></ram:IssueDateTime>
  </rsm:ExchangedDocument>
  <rsm:SupplyChainTradeTransaction>
    <ram:IncludedSupplyChainTradeLineItem>
      <ram:SpecifiedLineTradeSettlement><ram:SpecifiedTradeSettlementLineMonetarySummation>
        <ram:LineTotalAmount>99.00</ram:LineTotalAmount>
      </ram:SpecifiedTradeSettlementLineMonetarySummation></ram:SpecifiedLineTradeSettlement>
    </ram:IncludedSupplyChainTradeLineItem>
    <ram:ApplicableHeaderTradeAgreement>
      <ram:BuyerTradeParty><ram:Name>Buyer SA</ram:Name></ram:BuyerTradeParty>
      <ram:SellerTradeParty><ram:Name>Müller &amp; Söhne
        GmbH</ram:Name></ram:SellerTradeParty>
    </ram:ApplicableHeaderTradeAgreement>
    <ram:ApplicableHeaderTradeSettlement>
      <ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
      <ram:SpecifiedTradeSettlementHeaderMonetarySummation>
        <ram:GrandTotalAmount>1180.00</ram:GrandTotalAmount>
        <ram:TotalPrepaidAmount>200.00</ram:TotalPrepaidAmount>
        <ram:DuePayableAmount>980.0000</ram:DuePayableAmount>
      </ram:SpecifiedTradeSettlementHeaderMonetarySummation>
    </ram:ApplicableHeaderTradeSettlement>
  </rsm:SupplyChainTradeTransaction>
</rsm:CrossIndustryInvoice>"#;

/// A PDF of the given objects, numbered from 1.
fn pdf(objects: &[&[u8]]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    for (i, o) in objects.iter().enumerate() {
        out.extend(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend(*o);
        out.extend(b"\nendobj\n");
    }
    out.extend(b"%%EOF\n");
    out
}

/// A stream object: `entries` in its dictionary, `data` as its content, its length direct.
fn stream(entries: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {entries} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend(data);
    out.extend(b"\nendstream");
    out
}

const EMBEDDED_FILE: &str = "/Type /EmbeddedFile /Subtype /text#2Fxml";

#[test]
fn the_attachment_is_inflated_and_its_header_totals_read_not_a_line_s() {
    let deflated = compress_to_vec_zlib(CII.as_bytes(), 6);
    let raw = pdf(&[
        b"<< /Type /Catalog >>",
        &stream("/Filter /FlateDecode", b"not an attachment"),
        &stream(
            &format!("{EMBEDDED_FILE} /Filter [/FlateDecode]"),
            &deflated,
        ),
    ]);
    let invoice = read(&raw);
    assert_eq!(
        invoice.fields,
        fields([
            (Issuer, "Müller & Söhne GmbH"),
            (InvoiceNumber, "FX-7"),
            (InvoiceDate, "2026-01-31"),
            // What is due, not the grand total before the prepayment, nor a line's total.
            (TotalAmount, "980.00"),
            (Currency, "EUR"),
        ])
    );
    assert_eq!(invoice.sha256, crate::ids::sha256_hex(CII.as_bytes()));
}

#[test]
fn an_xml_subtype_alone_marks_an_attachment_and_a_wrong_length_is_passed_by() {
    // No `/Type` (optional in PDF), a `/Length` that is one short: read up to `endstream`.
    let mut object = format!(
        "<< /Subtype /application#2Fxml /Length {} >>\nstream\r\n",
        CII.len() - 1
    )
    .into_bytes();
    object.extend(CII.as_bytes());
    object.extend(b"\r\nendstream");
    assert_eq!(read(&pdf(&[&object])).fields[&InvoiceNumber], "FX-7");
}

#[test]
fn an_attachment_under_another_filter_a_predictor_or_past_the_limit_is_not_read() {
    let hex: String = CII.bytes().map(|b| format!("{b:02x}")).collect();
    let other = stream(
        &format!("{EMBEDDED_FILE} /Filter /ASCIIHexDecode"),
        hex.as_bytes(),
    );
    assert_eq!(from_document(&pdf(&[&other])), Embedded::Absent);
    let chained = stream(
        &format!("{EMBEDDED_FILE} /Filter [/FlateDecode /ASCIIHexDecode]"),
        &compress_to_vec_zlib(hex.as_bytes(), 6),
    );
    assert_eq!(from_document(&pdf(&[&chained])), Embedded::Absent);
    let predicted = stream(
        &format!("{EMBEDDED_FILE} /Filter /FlateDecode /DecodeParms << /Predictor 12 >>"),
        &compress_to_vec_zlib(CII.as_bytes(), 6),
    );
    assert_eq!(from_document(&pdf(&[&predicted])), Embedded::Absent);
    // A deflate bomb: a few kilobytes that inflate past the limit.
    let mut huge = CII.as_bytes().to_vec();
    huge.extend(std::iter::repeat_n(b' ', MAX_ATTACHMENT_BYTES));
    let bomb = stream(
        &format!("{EMBEDDED_FILE} /Filter /FlateDecode"),
        &compress_to_vec_zlib(&huge, 9),
    );
    assert!(bomb.len() < 64 * 1024);
    assert_eq!(from_document(&pdf(&[&bomb])), Embedded::Absent);
    // The same attachment within the limit is read: the limit is what refused it.
    let fits = stream(
        &format!("{EMBEDDED_FILE} /Filter /FlateDecode"),
        &compress_to_vec_zlib(CII.as_bytes(), 9),
    );
    assert!(matches!(from_document(&pdf(&[&fits])), Embedded::Read(_)));
}

#[test]
fn an_xml_attachment_that_cannot_be_read_is_named_and_another_file_is_not() {
    let broken = stream(
        EMBEDDED_FILE,
        b"<?xml version=\"1.0\"?><rsm:CrossIndustryInvoice>",
    );
    let Embedded::Unreadable(why) = from_document(&pdf(&[&broken])) else {
        panic!("read");
    };
    // Where, not what: the attachment's text is the document's and stays out of the record.
    assert_eq!(
        why.to_string(),
        "the embedded XML is not well-formed at 1:23"
    );
    let latin1 = stream(EMBEDDED_FILE, b"<?xml version=\"1.0\"?><a>M\xfcller</a>");
    assert_eq!(
        from_document(&pdf(&[&latin1])),
        Embedded::Unreadable(Unreadable::NotUtf8)
    );
    // A DTD (entities a hostile file could expand) is refused, not followed.
    let dtd = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE a [<!ENTITY x \"y\">]>{}",
        &CII[38..]
    );
    assert_eq!(
        from_document(&pdf(&[&stream(EMBEDDED_FILE, dtd.as_bytes())])),
        Embedded::Unreadable(Unreadable::Refused("a DTD"))
    );
    // An attached image is no unreadable e-invoice; another XML is no e-invoice.
    let image = stream(
        "/Type /EmbeddedFile /Subtype /image#2Fpng",
        b"\x89PNG\r\n\x1a\n",
    );
    assert_eq!(from_document(&pdf(&[&image])), Embedded::Absent);
    let other = stream(
        EMBEDDED_FILE,
        b"<?xml version=\"1.0\"?><order><id>7</id></order>",
    );
    assert_eq!(from_document(&pdf(&[&other])), Embedded::Absent);
    // An unreadable attachment before a readable one: the readable one.
    let good = stream(EMBEDDED_FILE, CII.as_bytes());
    assert!(matches!(
        from_document(&pdf(&[&broken, &good])),
        Embedded::Read(_)
    ));
}

#[test]
fn a_value_out_of_its_form_is_left_out_and_a_credit_note_s_total_too() {
    let xml = CII
        .replace("20260131", "20260231")
        .replace("980.0000", "980.0050")
        .replace(
            "<ram:InvoiceCurrencyCode>EUR",
            "<ram:InvoiceCurrencyCode>Euro",
        );
    let invoice = read(&pdf(&[&stream(EMBEDDED_FILE, xml.as_bytes())]));
    assert_eq!(
        invoice.fields.keys().copied().collect::<Vec<_>>(),
        vec![Issuer, InvoiceNumber]
    );
    let credit = CII.replace("<ram:TypeCode>380", "<ram:TypeCode>381");
    let invoice = read(&pdf(&[&stream(EMBEDDED_FILE, credit.as_bytes())]));
    assert!(!invoice.fields.contains_key(&TotalAmount));
    assert_eq!(invoice.fields[&InvoiceNumber], "FX-7");
}

#[test]
fn a_ubl_invoice_is_read_by_its_own_names() {
    let ubl = r#"<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:ID>UBL-12</cbc:ID><cbc:IssueDate>2025-03-04</cbc:IssueDate>
  <cbc:DocumentCurrencyCode>NOK</cbc:DocumentCurrencyCode>
  <cac:AccountingSupplierParty><cac:Party>
    <cac:PartyName><cbc:Name>Fjord</cbc:Name></cac:PartyName>
    <cac:PartyLegalEntity><cbc:RegistrationName>Fjord Handel AS</cbc:RegistrationName></cac:PartyLegalEntity>
  </cac:Party></cac:AccountingSupplierParty>
  <cac:LegalMonetaryTotal><cbc:PayableAmount currencyID="NOK">1250</cbc:PayableAmount></cac:LegalMonetaryTotal>
</Invoice>"#;
    let invoice = read(&pdf(&[&stream(EMBEDDED_FILE, ubl.as_bytes())]));
    assert_eq!(invoice.syntax, Syntax::Ubl);
    assert_eq!(
        invoice.fields,
        fields([
            (Issuer, "Fjord Handel AS"),
            (InvoiceNumber, "UBL-12"),
            (InvoiceDate, "2025-03-04"),
            (TotalAmount, "1250.00"),
            (Currency, "NOK"),
        ])
    );
}

#[test]
fn no_more_than_max_attachments_are_decoded() {
    let image = stream(
        "/Type /EmbeddedFile /Subtype /image#2Fpng",
        b"\x89PNG\r\n\x1a\n",
    );
    let invoice = stream(EMBEDDED_FILE, CII.as_bytes());
    let with_images = |images: usize| {
        let mut objects: Vec<&[u8]> = vec![&image; images];
        objects.push(&invoice);
        from_document(&pdf(&objects))
    };
    assert!(matches!(
        with_images(MAX_ATTACHMENTS - 1),
        Embedded::Read(_)
    ));
    assert_eq!(with_images(MAX_ATTACHMENTS), Embedded::Absent);
}
