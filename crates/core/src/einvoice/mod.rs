//! An e-invoice embedded in a PDF: the EN 16931 XML that Factur-X, ZUGFeRD and XRechnung
//! attach to the page a person reads. It states the issuer, number, date, total and currency
//! exactly, with no OCR; extraction takes a value from it only where the page confirms it
//! (`extract::embedded`), since an attachment can say something else than the page.
//!
//! - `pdf.rs`: the PDF's attached files, decoded;
//! - `cii.rs`: the five fields from the XML (Cross Industry Invoice or UBL).
//!
//! Pure: the raw document's bytes in, the stated fields out.

mod cii;
mod pdf;

pub use crate::model::embedded::{EmbeddedInvoice, Syntax};
pub use pdf::{MAX_ATTACHMENTS, MAX_ATTACHMENT_BYTES};

/// Why an attachment that is XML could not be read as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// Not UTF-8 (EN 16931 requires it).
    #[error("the embedded XML is not UTF-8")]
    NotUtf8,
    /// Not well-formed (where: the attachment's line and column; its text is the document's
    /// content and stays out of the record).
    #[error("the embedded XML is not well-formed at {0}")]
    Malformed(String),
    /// A DTD (entities a hostile file could expand) or more nodes than an e-invoice has.
    #[error("the embedded XML is refused: {0}")]
    Refused(&'static str),
}

/// What a raw document carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Embedded {
    /// No e-invoice (not a PDF, or none attached).
    Absent,
    /// An e-invoice, the first one attached.
    Read(EmbeddedInvoice),
    /// An XML attachment that could not be read, and no other e-invoice: the page is read as
    /// any other's, the reason recorded.
    Unreadable(Unreadable),
}

/// The e-invoice `raw` carries, when it is a PDF with one attached.
pub fn from_document(raw: &[u8]) -> Embedded {
    if !raw.starts_with(b"%PDF-") {
        return Embedded::Absent;
    }
    let mut unreadable = None;
    for attachment in pdf::attachments(raw) {
        match cii::read(&attachment) {
            Ok(Some(invoice)) => return Embedded::Read(invoice),
            Ok(None) => {}
            Err(e) if looks_like_xml(&attachment) => {
                unreadable.get_or_insert(e);
            }
            Err(_) => {}
        }
    }
    unreadable.map_or(Embedded::Absent, Embedded::Unreadable)
}

/// Whether an attachment begins as XML does (another file, a spreadsheet or an image, is no
/// unreadable e-invoice).
fn looks_like_xml(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes.trim_ascii_start().starts_with(b"<")
}

#[cfg(test)]
mod tests;
