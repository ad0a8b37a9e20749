//! The shapes ids and tenants must have, at their edges: cases that `make mutants` found
//! unpinned.

use crate::ids::{DocumentId, RunId, SourceVersion, Tenant};

#[test]
fn a_tenant_may_hold_digits_and_inner_dashes_up_to_63_characters() {
    for ok in ["acme-2", "9lives", "a", &"a".repeat(63)] {
        assert!(Tenant::parse(ok).is_ok(), "{ok:?} should be a tenant");
    }
    for bad in ["", "-acme", "Acme", "ac_me", "ac.me", &"a".repeat(64)] {
        assert!(
            Tenant::parse(bad).is_err(),
            "{bad:?} should not be a tenant"
        );
    }
}

#[test]
fn a_document_id_is_d_and_24_hex_digits_and_nothing_else() {
    let id = DocumentId::new(&Tenant::parse("acme").unwrap(), "a.pdf");
    assert_eq!(DocumentId::parse(id.as_str()).unwrap(), id);
    let hex = &id.as_str()[1..];
    for bad in [
        format!("x{hex}"),           // right length and digits, wrong letter
        format!("d{}", &hex[..23]),  // one digit short
        format!("d{hex}0"),          // one digit long
        format!("d{}z", &hex[..23]), // right length, not hex
        "dzzzzzzzzzzzzzzzzzzzzzzzz".to_string(),
    ] {
        assert!(
            DocumentId::parse(&bad).is_err(),
            "{bad:?} is not a document id"
        );
    }
}

#[test]
fn a_run_id_is_its_document_id_dash_r_and_20_hex_digits() {
    let doc = DocumentId::new(&Tenant::parse("acme").unwrap(), "a.pdf");
    let source = SourceVersion {
        version_id: "v1".into(),
        sha256: "00".into(),
    };
    let run = RunId::new(&doc, &source, "cfg", 0);
    assert_eq!(RunId::parse(run.as_str()).unwrap(), run);
    assert_eq!(run.document_id(), doc);
    let (d, tail) = run.as_str().split_at(25);
    let hex = &tail[2..];
    for bad in [
        format!("x{}{tail}", &d[1..]),   // not a document id in front
        format!("{d}-x{hex}"),           // not `-r`
        format!("{d}-r{}", &hex[..19]),  // one digit short
        format!("{d}-r{}z", &hex[..19]), // not hex
        format!("{d}-r{hex}0"),          // one digit long
    ] {
        assert!(RunId::parse(&bad).is_err(), "{bad:?} is not a run id");
    }
}
