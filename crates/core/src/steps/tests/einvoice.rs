//! An upload that carries an e-invoice: validate reads it from the raw upload, takes what the
//! page confirms, names a disagreement, and records what it read in the audit entry.

use super::*;
use crate::model::fields::FieldName;
use crate::validate::{ValidationReport, EMBEDDED_MISMATCH, LOW_CONFIDENCE};

const KEY: &str = "inbox/acme/2026/facturx.pdf";

/// A PDF whose one object is an embedded file: a Cross Industry Invoice for `total`.
fn factur_x(total: &str) -> Vec<u8> {
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
  xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100">
  <rsm:ExchangedDocument><ram:ID>INV-2026-0042</ram:ID>
    <ram:IssueDateTime><ram:DateTimeString format="102">20261102</ram:DateTimeString></ram:IssueDateTime>
  </rsm:ExchangedDocument>
  <rsm:SupplyChainTradeTransaction>
    <ram:ApplicableHeaderTradeAgreement>
      <ram:SellerTradeParty><ram:Name>ACME Supplies Ltd</ram:Name></ram:SellerTradeParty>
    </ram:ApplicableHeaderTradeAgreement>
    <ram:ApplicableHeaderTradeSettlement><ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
      <ram:SpecifiedTradeSettlementHeaderMonetarySummation>
        <ram:DuePayableAmount>{total}</ram:DuePayableAmount>
      </ram:SpecifiedTradeSettlementHeaderMonetarySummation>
    </ram:ApplicableHeaderTradeSettlement>
  </rsm:SupplyChainTradeTransaction>
</rsm:CrossIndustryInvoice>"#
    );
    let mut pdf = format!(
        "%PDF-1.7\n1 0 obj\n<< /Type /EmbeddedFile /Subtype /text#2Fxml /Length {} >>\nstream\n",
        xml.len()
    )
    .into_bytes();
    pdf.extend(xml.as_bytes());
    pdf.extend(b"\nendstream\nendobj\n%%EOF\n");
    pdf
}

async fn validated(w: &World, pdf: &[u8], page_confidence: f64) -> (RunInput, ValidationReport) {
    validated_at(w, KEY, pdf, page_confidence).await
}

async fn validated_at(
    w: &World,
    key: &str,
    upload: &[u8],
    page_confidence: f64,
) -> (RunInput, ValidationReport) {
    w.script_ocr(key, ocr_of(&invoice_lines("1,234.50"), page_confidence));
    let input = w.input_of(
        &w.ingest(&w.upload(key, upload, "2026-11-30T10:00:00Z"))
            .await,
    );
    let normalized = w.ocr(&input).await.unwrap();
    let validated = validate::run(&w.ports, &w.ctx, &input, &normalized).await;
    let report = match validated {
        Ok(v) => w.json(&v.report).await,
        Err(e) => panic!("validate: {e}"),
    };
    (input, serde_json::from_value(report).unwrap())
}

#[tokio::test]
async fn a_page_read_in_doubt_is_approved_on_what_its_attachment_states_and_it_prints() {
    let w = world();
    let pdf = factur_x("1234.50");
    // At 0.6 the page alone would go to a person (every field below the threshold).
    let (input, report) = validated(&w, &pdf, 0.6).await;
    assert_eq!(report.decision, crate::validate::Decision::AutoApprove);
    let fields = &report.extraction.fields;
    assert_eq!(fields[&FieldName::TotalAmount].value, "1234.50");
    assert!(fields.values().all(|f| f.confidence >= 0.99), "{fields:?}");

    let entries = w.entries(&input.document_id).await;
    let validation = entries
        .iter()
        .find(|e| e.draft.action == "validation.completed")
        .expect("validation's entry");
    let embedded = report.extraction.embedded.as_ref().expect("the attachment");
    assert_eq!(validation.draft.input_hashes["embedded"], embedded.sha256);
    assert_eq!(validation.draft.detail["embedded"], "cii");
}

#[tokio::test]
async fn an_attachment_that_states_another_total_than_the_page_reads_goes_to_a_person() {
    let w = world();
    let (input, report) = validated(&w, &factur_x("12.34"), 0.97).await;
    let crate::validate::Decision::NeedsReview { reasons } = &report.decision else {
        panic!("{:?}", report.decision);
    };
    let codes: Vec<_> = reasons.iter().map(|r| (r.code.as_str(), r.field)).collect();
    let total = Some(FieldName::TotalAmount);
    assert_eq!(codes, [(EMBEDDED_MISMATCH, total), (LOW_CONFIDENCE, total)]);
    // The page's reading stays; the attachment's is in the report for the reviewer.
    assert_eq!(
        report.extraction.value(FieldName::TotalAmount),
        Some("1234.50")
    );
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::AwaitingReview);
}

#[tokio::test]
async fn an_upload_without_an_attachment_is_validated_on_its_page_alone() {
    let w = world();
    let plain = b"%PDF-1.7\n1 0 obj\n<< /Type /Page /MediaBox [0 0 595 842] >>\nendobj\n%%EOF\n";
    let (input, report) = validated(&w, plain, 0.97).await;
    assert_eq!(report.decision, crate::validate::Decision::AutoApprove);
    assert!(report.extraction.embedded.is_none());
    let entries = w.entries(&input.document_id).await;
    let validation = entries
        .iter()
        .find(|e| e.draft.action == "validation.completed")
        .unwrap();
    assert!(!validation.draft.input_hashes.contains_key("embedded"));
    assert!(validation.draft.detail.get("embedded").is_none());
}

#[tokio::test]
async fn an_image_upload_is_not_read_whole_for_an_attachment() {
    let w = world();
    // A PNG whose bytes happen to hold an e-invoice's: an image carries no attachment.
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(factur_x("12.34"));
    let key = "inbox/acme/2026/scan.png";
    let (_, report) = validated_at(&w, key, &png, 0.97).await;
    assert!(report.extraction.embedded.is_none());
    assert_eq!(report.decision, crate::validate::Decision::AutoApprove);
    // Ingest read it whole once (its type, its pages); validate only its first bytes.
    assert_eq!(w.ports.blobs.whole_reads("raw", key), 1);
    // A PDF is read whole by validate too.
    let w = world();
    validated(&w, &factur_x("1234.50"), 0.97).await;
    assert_eq!(w.ports.blobs.whole_reads("raw", KEY), 2);
}
