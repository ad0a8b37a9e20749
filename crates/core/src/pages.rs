//! How many pages a raw document has, when its bytes say so plainly: ingest records it with the
//! run (`RunInput::pages`), so that a one-page document is read by the provider's synchronous
//! API (no job, no job slot, no notification to wait for: `steps::ocr`).
//!
//! A count is a hint, safe when wrong either way: a document counted as more than one page is
//! read as a job (as every document was before); one counted as one page that has more is
//! refused by the synchronous API (`UnsupportedDocumentException`), and the OCR step starts a
//! job instead. So the count is given only when it is read directly from the bytes, and is
//! `None` otherwise.

/// The page count of `bytes`, of the sniffed type `kind` (`doctype::sniff`), when the
/// bytes tell it plainly: PNG and JPEG are one page; a PDF has as many as it has page objects
/// in the clear (`None` when its objects are compressed into object streams, where page
/// objects cannot be seen); TIFF (one page per image directory) is not read: `None`.
pub fn count(bytes: &[u8], kind: &str) -> Option<u32> {
    match kind {
        "image/png" | "image/jpeg" => Some(1),
        crate::doctype::PDF => pdf_pages(bytes),
        _ => None,
    }
}

/// The page objects of a PDF, counted by their `/Type /Page` (not `/Pages`, the tree's inner
/// nodes); `None` when there is none in the clear or when object streams may hide some.
fn pdf_pages(bytes: &[u8]) -> Option<u32> {
    if contains(bytes, b"/ObjStm") {
        return None;
    }
    let mut pages = 0u32;
    let mut rest = bytes;
    while let Some(at) = find(rest, b"/Type") {
        rest = &rest[at + b"/Type".len()..];
        let value = skip_whitespace(rest);
        let Some(after) = value.strip_prefix(b"/Page") else {
            continue;
        };
        // A name ends at whitespace or a delimiter: `/Pages` and `/PageLabel` are other names.
        if after.first().is_none_or(|&b| !is_name_char(b)) {
            pages += 1;
        }
    }
    (pages > 0).then_some(pages)
}

fn skip_whitespace(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace() && *b != 0)
        .unwrap_or(bytes.len());
    &bytes[start..]
}

/// A regular character of a PDF name (not whitespace, not a delimiter).
fn is_name_char(b: u8) -> bool {
    !b.is_ascii_whitespace() && b != 0 && !b"()<>[]{}/%".contains(&b)
}

/// Where `needle` first occurs in `haystack` (also `einvoice`'s reading of a PDF).
pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdf(objects: &[&str]) -> Vec<u8> {
        let mut out = b"%PDF-1.4\n".to_vec();
        for (i, o) in objects.iter().enumerate() {
            out.extend(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
        }
        out.extend(b"%%EOF\n");
        out
    }

    #[test]
    fn images_are_one_page_and_tiff_is_not_counted() {
        assert_eq!(count(b"\x89PNG\r\n\x1a\n", "image/png"), Some(1));
        assert_eq!(count(b"\xff\xd8\xff", "image/jpeg"), Some(1));
        assert_eq!(count(b"II*\0", "image/tiff"), None);
    }

    #[test]
    fn a_pdf_counts_its_page_objects_not_its_page_tree_nor_other_names() {
        let one = pdf(&[
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /PageLabels 4 0 R >>",
        ]);
        assert_eq!(count(&one, "application/pdf"), Some(1));
        let two = pdf(&[
            "<< /Type/Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
            "<</Type/Page/Parent 1 0 R>>",
            "<< /Type\n/Page >>",
        ]);
        assert_eq!(count(&two, "application/pdf"), Some(2));
    }

    #[test]
    fn a_pdf_whose_objects_may_be_compressed_or_that_shows_no_page_is_not_counted() {
        let compressed = pdf(&["<< /Type /ObjStm /N 3 >>", "<< /Type /Page >>"]);
        assert_eq!(count(&compressed, "application/pdf"), None);
        assert_eq!(
            count(&pdf(&["<< /Type /Catalog >>"]), "application/pdf"),
            None
        );
    }
}
