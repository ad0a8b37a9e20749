//! Writes the sample documents `make demo` drops into the inbox (`samples/`), from known text:
//! `cargo run -p docket-e2e --example samples -- samples`.

use docket_e2e::render::{pdf, pdf_with_xml, png_of};

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "samples".into()));
    std::fs::create_dir_all(&dir).unwrap();
    let northwind = [
        "Northwind Traders Ltd",
        "INVOICE",
        "Invoice No: NW-2026-1187",
        "Invoice Date: 2026-11-12",
        "Office chairs 4 x 189.00",
        "Total: EUR 756.00",
    ];
    let contoso = [
        "Contoso Pharmaceuticals Inc",
        "INVOICE",
        "Invoice Number: CP-88412",
        "Date: November 3, 2026",
        "Lab supplies",
        "Amount Due: USD 2,310.75",
    ];
    let ambiguous = [
        "Fabrikam Logistics GmbH",
        "INVOICE",
        "Invoice No: FL-5521",
        "Invoice Date: 03/04/2026",
        "Freight Hamburg - Lyon",
        "Total: EUR 1.980,00",
    ];
    let no_total = [
        "Tailspin Toys SA",
        "INVOICE",
        "Invoice No: TT-0042",
        "Invoice Date: 2026-10-30",
        "Thank you for your business",
    ];
    // A Factur-X invoice whose attached XML states another total than its page prints (the
    // digits swapped): the page's other fields are confirmed, the total goes to a person.
    let wingtip = [
        "Wingtip Toys SARL",
        "FACTURE",
        "Facture No: WT-2026-0310",
        "Date de facture: 2026-11-20",
        "Jouets en bois 12 x 104,50",
        "Total TTC: 1254,00 EUR",
    ];
    let wingtip_xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
  xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
  xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">
  <rsm:ExchangedDocument>
    <ram:ID>WT-2026-0310</ram:ID>
    <ram:TypeCode>380</ram:TypeCode>
    <ram:IssueDateTime><udt:DateTimeString format="102">20261120</udt:DateTimeString></ram:IssueDateTime>
  </rsm:ExchangedDocument>
  <rsm:SupplyChainTradeTransaction>
    <ram:ApplicableHeaderTradeAgreement>
      <ram:SellerTradeParty><ram:Name>Wingtip Toys SARL</ram:Name></ram:SellerTradeParty>
    </ram:ApplicableHeaderTradeAgreement>
    <ram:ApplicableHeaderTradeSettlement>
      <ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
      <ram:SpecifiedTradeSettlementHeaderMonetarySummation>
        <ram:GrandTotalAmount>1245.00</ram:GrandTotalAmount>
        <ram:DuePayableAmount>1245.00</ram:DuePayableAmount>
      </ram:SpecifiedTradeSettlementHeaderMonetarySummation>
    </ram:ApplicableHeaderTradeSettlement>
  </rsm:SupplyChainTradeTransaction>
</rsm:CrossIndustryInvoice>"#;
    let write = |name: &str, bytes: Vec<u8>| std::fs::write(dir.join(name), bytes).unwrap();
    write("northwind-invoice.pdf", pdf(&[&northwind]));
    write("contoso-invoice.png", png_of(&pdf(&[&contoso])));
    write("fabrikam-ambiguous-date.pdf", pdf(&[&ambiguous]));
    write("tailspin-no-total.pdf", pdf(&[&no_total]));
    write(
        "wingtip-factur-x.pdf",
        pdf_with_xml(&[&wingtip], "factur-x.xml", wingtip_xml),
    );
    write(
        "meeting-notes.txt",
        b"Not an invoice: notes from Tuesday's meeting.\n".to_vec(),
    );
}
