//! Unit tests of the ids: their shapes, derivations and the inbox key rules; `edges` pins the
//! shapes at their edges.

use super::*;
use serde_json::json;

fn source(v: &str) -> SourceVersion {
    SourceVersion {
        version_id: v.into(),
        sha256: "ab".repeat(32),
    }
}

#[test]
fn document_id_is_stable_per_tenant_and_key_and_distinct_otherwise() {
    let acme = Tenant::parse("acme").unwrap();
    let globex = Tenant::parse("globex").unwrap();
    assert_eq!(
        DocumentId::new(&acme, "a.pdf"),
        DocumentId::new(&acme, "a.pdf")
    );
    assert_ne!(
        DocumentId::new(&acme, "a.pdf"),
        DocumentId::new(&acme, "b.pdf")
    );
    assert_ne!(
        DocumentId::new(&acme, "a.pdf"),
        DocumentId::new(&globex, "a.pdf")
    );
    assert!(DocumentId::parse(DocumentId::new(&acme, "a.pdf").as_str()).is_ok());
}

#[test]
fn run_id_changes_with_version_config_and_generation_only() {
    let doc = DocumentId::new(&Tenant::parse("acme").unwrap(), "a.pdf");
    let base = RunId::new(&doc, &source("v1"), "cfg-1", 0);
    assert_eq!(base, RunId::new(&doc, &source("v1"), "cfg-1", 0));
    for other in [
        RunId::new(&doc, &source("v2"), "cfg-1", 0),
        RunId::new(&doc, &source("v1"), "cfg-2", 0),
        RunId::new(&doc, &source("v1"), "cfg-1", 1),
    ] {
        assert_ne!(base, other);
    }
    // The content hash does not name the run: the same bytes uploaded again are a new version.
    let same_bytes_other_hash = SourceVersion {
        version_id: "v1".into(),
        sha256: "cd".repeat(32),
    };
    assert_eq!(base, RunId::new(&doc, &same_bytes_other_hash, "cfg-1", 0));
}

#[test]
fn run_id_is_a_valid_execution_name_and_knows_its_document() {
    let doc = DocumentId::new(&Tenant::parse("acme").unwrap(), "a.pdf");
    let run = RunId::new(&doc, &source("v1"), "cfg-1", 0);
    assert!(run.as_str().len() <= 80);
    assert!(run
        .as_str()
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    assert_eq!(run.document_id(), doc);
    assert_eq!(RunId::parse(run.as_str()).unwrap(), run);
    assert!(RunId::parse("d00-rzz").is_err());
}

#[test]
fn operation_ids_differ_per_step_and_effect_and_fit_textract_tokens() {
    let doc = DocumentId::new(&Tenant::parse("acme").unwrap(), "a.pdf");
    let run = RunId::new(&doc, &source("v1"), "cfg-1", 0);
    let ocr = OperationId::new(&run, "ocr", None);
    assert_eq!(ocr, OperationId::new(&run, "ocr", None));
    assert_ne!(ocr, OperationId::new(&run, "route", None));
    assert_ne!(ocr, OperationId::new(&run, "ocr", Some("x")));
    assert!(ocr.as_str().len() <= 64);
}

#[test]
fn canonical_json_ignores_key_order_and_whitespace() {
    let a: Value = serde_json::from_str(r#"{"b": [1, {"y":2,"x":1}], "a": "s"}"#).unwrap();
    let b = json!({"a": "s", "b": [1, {"x": 1, "y": 2}]});
    assert_eq!(canonical_json(&a), r#"{"a":"s","b":[1,{"x":1,"y":2}]}"#);
    assert_eq!(params_fingerprint(&a), params_fingerprint(&b));
    assert_ne!(
        params_fingerprint(&a),
        params_fingerprint(&json!({"a": "t"}))
    );
}

#[test]
fn event_keys_are_decoded_plus_as_space_and_percent_escapes() {
    assert_eq!(
        decode_event_key("inbox/acme/my+file.pdf").unwrap(),
        "inbox/acme/my file.pdf"
    );
    assert_eq!(
        decode_event_key("inbox/acme/a%2Bb.pdf").unwrap(),
        "inbox/acme/a+b.pdf"
    );
    assert_eq!(
        decode_event_key("inbox/acme/x%2Fy.pdf").unwrap(),
        "inbox/acme/x/y.pdf"
    );
    assert_eq!(
        decode_event_key("inbox/acme/r%C3%A9sum%C3%A9.pdf").unwrap(),
        "inbox/acme/résumé.pdf"
    );
    assert!(decode_event_key("inbox/acme/%zz").is_err());
    assert!(decode_event_key("inbox/acme/%ff.pdf").is_err());
}

#[test]
fn inbox_keys_with_format_characters_are_refused_naming_the_code_point() {
    for (c, name) in [
        ('\u{202E}', "U+202E"),
        ('\u{2066}', "U+2066"),
        ('\u{200F}', "U+200F"),
        ('\u{200B}', "U+200B"),
        ('\u{2060}', "U+2060"),
        ('\u{FEFF}', "U+FEFF"),
        ('\u{00AD}', "U+00AD"),
        ('\u{E0041}', "U+E0041"),
    ] {
        let key = format!("inbox/acme/invoice{c}fdp.pdf");
        match parse_inbox_key(&key) {
            Err(Error::BadKey(why)) => assert!(why.contains(name), "{why}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    // Neighbours of the ranges are ordinary characters.
    for ok in ['\u{00AC}', '\u{00AE}', '\u{2029}', '\u{2070}', 'é', '日'] {
        assert!(
            parse_inbox_key(&format!("inbox/acme/a{ok}.pdf")).is_ok(),
            "{ok:?}"
        );
    }
}

#[test]
fn composed_and_decomposed_names_are_one_document() {
    let composed = parse_inbox_key("inbox/acme/r\u{E9}sum\u{E9}.pdf").unwrap();
    let decomposed = parse_inbox_key("inbox/acme/re\u{301}sume\u{301}.pdf").unwrap();
    assert_ne!(composed.key, decomposed.key, "the stored keys stay apart");
    assert_eq!(composed.logical_key, decomposed.logical_key);
    assert_eq!(decomposed.logical_key, "r\u{E9}sum\u{E9}.pdf");
    assert_eq!(
        DocumentId::new(&composed.tenant, &composed.logical_key),
        DocumentId::new(&decomposed.tenant, &decomposed.logical_key)
    );
}

#[test]
fn inbox_keys_name_a_tenant_and_reject_traversal_and_empty_segments() {
    let k = parse_inbox_key("inbox/acme/2026/inv 1.pdf").unwrap();
    assert_eq!(k.tenant.as_str(), "acme");
    assert_eq!(k.logical_key, "2026/inv 1.pdf");
    for bad in [
        "inbox/acme/../globex/x.pdf",
        "inbox/acme//x.pdf",
        "inbox/acme/./x.pdf",
        "inbox//x.pdf",
        "inbox/acme",
        "inbox/acme/",
        "other/acme/x.pdf",
        "inbox/ACME/x.pdf",
        "inbox/acme/x\u{0}.pdf",
    ] {
        assert!(
            matches!(parse_inbox_key(bad), Err(Error::BadKey(_))),
            "{bad}"
        );
    }
}

mod edges;

#[test]
fn an_encoded_key_decodes_to_itself() {
    for key in [
        "inbox/acme/my file.pdf",
        "inbox/acme/a+b%c.pdf",
        "inbox/acme/résumé (1).png",
        "inbox/acme/x~y_z-1.2.pdf",
    ] {
        let encoded = encode_event_key(key);
        assert!(!encoded.contains(' '), "{encoded}");
        assert_eq!(decode_event_key(&encoded).unwrap(), key);
    }
    assert_eq!(
        encode_event_key("inbox/acme/my file+1.pdf"),
        "inbox/acme/my+file%2B1.pdf"
    );
}
