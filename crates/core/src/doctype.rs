//! The document types docket reads, recognised by their first bytes: ingest accepts an upload
//! of one of them, validate reads a PDF whole for its e-invoice, the review page serves each with
//! its type.

/// The sniffed type of a PDF.
pub const PDF: &str = "application/pdf";

/// How many leading bytes [`sniff`] needs at most (PNG's signature).
pub const SNIFF_BYTES: u64 = 8;

/// The type of a document by its magic bytes, if it is one docket reads.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    const TYPES: &[(&[u8], &str)] = &[
        (b"%PDF-", PDF),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"II*\x00", "image/tiff"),
        (b"MM\x00*", "image/tiff"),
    ];
    TYPES
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_sniff_bytes_tell_every_type() {
        let heads: [(&[u8], &str); 5] = [
            (b"%PDF-1.7\n1 0 obj", PDF),
            (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "image/png"),
            (b"\xff\xd8\xff\xe0\0\x10JFIF", "image/jpeg"),
            (b"II*\x00\x08\0\0\0\x0e\0", "image/tiff"),
            (b"MM\x00*\0\0\0\x08\0\x0e", "image/tiff"),
        ];
        for (head, kind) in heads {
            let prefix = &head[..usize::try_from(SNIFF_BYTES).unwrap()];
            assert_eq!(sniff(head), Some(kind));
            assert_eq!(sniff(prefix), Some(kind));
        }
        assert_eq!(sniff(b"Not an invoice"), None);
    }
}
