//! The steps at their edges: size limits, the ASCII form of S3 metadata, and recording a
//! technical failure. Cases that `make mutants` found unpinned.

use super::*;

/// A PNG of exactly `len` bytes (the magic bytes, then zeros).
fn png_of(len: usize) -> Vec<u8> {
    let mut bytes = PNG.to_vec();
    bytes.resize(len, 0);
    bytes
}

/// Ingests `at` (a document at a limit) and then `over` (one unit more): the first starts a run,
/// the second is quarantined with `error` and starts none.
async fn at_limit_started_and_over_quarantined(w: &World, at: &[u8], over: &[u8], error: &str) {
    let time = "2026-11-30T10:00:00Z";
    let at_limit = w.ingest(&w.upload("inbox/acme/at", at, time)).await;
    let over = w.ingest(&w.upload("inbox/acme/over", over, time)).await;

    assert!(
        matches!(at_limit, IngestOutcome::Started { .. }),
        "{at_limit:?}"
    );
    let IngestOutcome::Quarantined { error: named, .. } = over else {
        panic!("not quarantined: {over:?}");
    };
    assert_eq!(named, error);
    assert_eq!(w.ports.workflow.executions.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_document_of_exactly_the_size_limit_is_accepted_and_one_byte_more_is_quarantined() {
    let mut w = world();
    w.ctx.config.limits.max_document_bytes = 64;
    let (at, over) = (png_of(64), png_of(65));
    at_limit_started_and_over_quarantined(&w, &at, &over, "Business.DocumentTooLarge").await;
}

/// A PDF whose `pages` page objects are in the clear (ingest counts them).
fn pdf_of_pages(pages: usize) -> Vec<u8> {
    let mut pdf = b"%PDF-1.4\n1 0 obj << /Type /Pages /Count 0 >> endobj\n".to_vec();
    for n in 0..pages {
        pdf.extend(format!("{} 0 obj << /Type /Page /Parent 1 0 R >> endobj\n", n + 2).bytes());
    }
    pdf.extend(b"%%EOF\n");
    pdf
}

#[tokio::test]
async fn a_pdf_of_exactly_the_page_limit_is_accepted_and_one_page_more_is_quarantined() {
    let mut w = world();
    w.ctx.config.limits.max_pages = 3;
    let (at, over) = (pdf_of_pages(3), pdf_of_pages(4));
    at_limit_started_and_over_quarantined(&w, &at, &over, "Business.TooManyPages").await;
}

#[tokio::test]
async fn an_upload_is_read_only_once_its_size_fits_in_the_process_read_budget() {
    let mut w = world();
    let budget = std::sync::Arc::new(crate::read_budget::ReadBudget::new(100 * 1024));
    w.ctx.reads = budget.clone();
    let event = w.upload(
        "inbox/acme/big.png",
        &png_of(60 * 1024),
        "2026-11-30T10:00:00Z",
    );

    // Another read of the same batch holds half the budget: 60 KiB do not fit beside it.
    let other = budget.hold(50 * 1024).await;
    let a_while = std::time::Duration::from_millis(50);
    let waited = tokio::time::timeout(a_while, w.ingest(&event)).await;
    assert!(waited.is_err(), "ingest read beyond its budget: {waited:?}");
    assert!(w.ports.workflow.executions.lock().unwrap().is_empty());

    drop(other);
    let outcome = w.ingest(&event).await;
    assert!(
        matches!(outcome, IngestOutcome::Started { .. }),
        "{outcome:?}"
    );
    // Nothing is held once the run has started.
    let whole = tokio::time::timeout(a_while, budget.hold(100 * 1024)).await;
    assert!(whole.is_ok(), "the read's bytes are still held");
}

#[test]
fn a_document_of_exactly_the_minimum_size_is_accepted_and_one_byte_less_is_empty() {
    assert_eq!(ingest::check_content(&png_of(16)).unwrap(), "image/png");
    assert_eq!(
        ingest::check_content(&png_of(15)).unwrap_err().name(),
        "Business.EmptyDocument"
    );
}

#[tokio::test]
async fn quarantine_metadata_is_ascii_with_everything_else_percent_encoded() {
    // given an upload too large, under a key with non-ASCII letters and a percent sign
    let mut w = world();
    w.ctx.config.limits.max_document_bytes = 64;
    let decoded = "inbox/acme/résumé 100%.png";
    let mut event = w.upload(decoded, &png_of(65), "2026-11-30T10:00:00Z");
    event.key = "inbox/acme/r%C3%A9sum%C3%A9+100%25.png".into();

    // when it is ingested
    let outcome = w.ingest(&event).await;

    // then the copy's metadata names the key with each byte outside printable ASCII, and the
    // percent sign itself, percent-encoded
    let IngestOutcome::Quarantined { quarantine, .. } = outcome else {
        panic!("not quarantined: {outcome:?}");
    };
    let meta = w.ports.blobs.metadata("raw", &quarantine.key).unwrap();
    assert_eq!(
        meta["docket-source-key"],
        "inbox/acme/r%C3%A9sum%C3%A9 100%25.png"
    );
    assert_eq!(
        meta["docket-reason"],
        "document too large: 65 bytes, limit 64"
    );
}
