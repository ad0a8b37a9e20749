//! Writes the sample documents `make demo` drops into the inbox (`samples/`), from known text:
//! `cargo run -p docket-e2e --example samples -- samples`.

use docket_e2e::render::{pdf, png_of};

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
    let write = |name: &str, bytes: Vec<u8>| std::fs::write(dir.join(name), bytes).unwrap();
    write("northwind-invoice.pdf", pdf(&[&northwind]));
    write("contoso-invoice.png", png_of(&pdf(&[&contoso])));
    write("fabrikam-ambiguous-date.pdf", pdf(&[&ambiguous]));
    write("tailspin-no-total.pdf", pdf(&[&no_total]));
    write(
        "meeting-notes.txt",
        b"Not an invoice: notes from Tuesday's meeting.\n".to_vec(),
    );
}
