//! Uploads that cannot be documents: each gets its named error, a quarantine copy with the reason,
//! an audit entry, and no run or derived output; the raw object stays.

use docket_core::ids::DocumentId;
use docket_e2e::stack::{tenant, Stack};

struct Case {
    name: &'static str,
    body: Vec<u8>,
    error: &'static str,
}

/// Uploads `case` and checks it was quarantined; returns the reasons recorded with the copy and in
/// the audit entry.
async fn assert_quarantined(stack: &Stack, tenant: &str, case: &Case) -> [String; 2] {
    let key = format!("inbox/{tenant}/{}", case.name);
    let document = if case.error == "Business.BadKey" {
        DocumentId::for_rejected_key(&key)
    } else {
        Stack::document_id(tenant, case.name)
    };
    let version = stack.upload(&key, case.body.clone()).await;

    let chain = stack
        .wait_for_action(&document, "document.quarantined")
        .await;

    let entry = chain
        .iter()
        .find(|e| e.draft.action == "document.quarantined")
        .unwrap();
    assert_eq!(entry.draft.detail["error"], case.error, "{}", case.name);
    let quarantine = format!("quarantine/{document}/{version}");
    let copy = stack
        .s3
        .head_object()
        .bucket(stack.out("RawBucket"))
        .key(&quarantine)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{}: no quarantine copy: {e:?}", case.name));
    let metadata = copy.metadata().unwrap();
    assert_eq!(metadata["docket-error"], case.error);
    assert!(!metadata["docket-reason"].is_empty());
    let raw = stack
        .s3
        .head_object()
        .bucket(stack.out("RawBucket"))
        .key(&key)
        .version_id(&version)
        .send()
        .await;
    assert!(raw.is_ok(), "{}: the raw object stays", case.name);
    assert!(
        stack.runs(&document).await.is_empty(),
        "{}: no run",
        case.name
    );
    let derived = stack
        .keys(stack.out("DerivedBucket"), &format!("{tenant}/{document}/"))
        .await;
    assert!(
        derived.is_empty(),
        "{}: no derived output {derived:?}",
        case.name
    );
    let audited = entry.draft.detail["reason"].as_str().unwrap_or_default();
    [metadata["docket-reason"].clone(), audited.to_string()]
}

#[tokio::test]
async fn hostile_uploads_are_quarantined_with_their_named_error() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let limits = docket_core::config::PipelineConfig::builtin().limits;
    let mut huge = b"%PDF-1.7\n".to_vec();
    huge.resize(limits.max_document_bytes as usize + 1, b' ');
    // One page object more than the limit, in the clear: ingest counts them.
    let mut long = b"%PDF-1.7\n1 0 obj << /Type /Pages >> endobj\n".to_vec();
    for n in 0..=limits.max_pages {
        long.extend(format!("{} 0 obj << /Type /Page /Parent 1 0 R >> endobj\n", n + 2).bytes());
    }
    let cases = [
        Case {
            name: "empty.txt",
            body: vec![],
            error: "Business.EmptyDocument",
        },
        Case {
            name: "zero.pdf",
            body: vec![],
            error: "Business.EmptyDocument",
        },
        Case {
            name: "header-only.pdf",
            body: b"%PDF-1.7\n".to_vec(),
            error: "Business.EmptyDocument",
        },
        Case {
            name: "renamed.pdf",
            body: b"PK\x03\x04 this is a zip, not a pdf".to_vec(),
            error: "Business.UnsupportedDocumentType",
        },
        Case {
            name: "huge.pdf",
            body: huge,
            error: "Business.DocumentTooLarge",
        },
        Case {
            name: "long.pdf",
            body: long,
            error: "Business.TooManyPages",
        },
        Case {
            name: "../escape.pdf",
            body: b"%PDF-1.7\n% a real-looking header".to_vec(),
            error: "Business.BadKey",
        },
        Case {
            name: "a b+c/résumé ünïcode.pdf",
            body: b"GIF89a not a supported type".to_vec(),
            error: "Business.UnsupportedDocumentType",
        },
    ];

    for case in &cases {
        assert_quarantined(&stack, &tenant, case).await;
    }
}

#[tokio::test]
async fn keys_with_unicode_format_characters_are_quarantined_naming_the_code_point() {
    let stack = Stack::load().await;
    let tenant = tenant();
    // U+202E (right-to-left override) shows `invoice\u{202E}fdp.exe` as "invoiceexe.pdf"; the
    // body is a valid PDF header, so only the key is refused.
    for (name, code_point) in [
        ("invoice\u{202E}fdp.exe", "U+202E"),
        ("in\u{200B}voice.pdf", "U+200B"),
    ] {
        let case = Case {
            name,
            body: b"%PDF-1.7\n% a real-looking header".to_vec(),
            error: "Business.BadKey",
        };
        for reason in assert_quarantined(&stack, &tenant, &case).await {
            assert!(reason.contains(code_point), "{name:?}: {reason}");
        }
    }
}
