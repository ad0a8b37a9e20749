//! What `audit verify` reports: the entry each chain error names (the operator starts there), and
//! the checkpoint's own checks. Written against mutants `make mutants` found unkilled.

use crate::audit::*;
use crate::ids::{DocumentId, Tenant};

fn chain(name: &str, n: u64) -> (DocumentId, Vec<AuditEntry>) {
    let doc = DocumentId::new(&Tenant::parse("acme").unwrap(), name);
    let mut entries: Vec<AuditEntry> = Vec::new();
    for i in 0..n {
        let prev = entries.last().map(AuditEntry::checkpoint);
        let draft = AuditDraft::new("docket/test", &format!("step.{i}"), None);
        entries.push(seal(&doc, prev.as_ref(), format!("t{i}"), draft));
    }
    (doc, entries)
}

#[test]
fn each_chain_error_names_the_first_entry_at_fault() {
    assert_eq!(ChainError::Tampered { seq: 3 }.seq(), 3);
    assert_eq!(ChainError::BrokenLink { seq: 4 }.seq(), 4);
    assert_eq!(ChainError::CheckpointMismatch { seq: 5 }.seq(), 5);
    assert_eq!(ChainError::ForeignEntry { seq: 6 }.seq(), 6);
    assert_eq!(
        ChainError::Gap {
            expected: 2,
            found: 7
        }
        .seq(),
        2
    );
    // A truncation names the first missing entry, not the last one present.
    assert_eq!(
        ChainError::Truncated {
            last: 3,
            checkpoint: 9
        }
        .seq(),
        4
    );
}

#[test]
fn a_checkpoint_whose_hash_differs_from_its_entry_is_a_mismatch_at_that_entry() {
    let (doc, entries) = chain("v.pdf", 3);
    let mut checkpoint = entries[1].checkpoint();
    assert_eq!(verify(&doc, &entries, Some(&checkpoint)), Ok(()));
    checkpoint.hash = entries[0].hash.clone();
    assert_eq!(
        verify(&doc, &entries, Some(&checkpoint)),
        Err(ChainError::CheckpointMismatch { seq: 2 })
    );
}

#[test]
fn an_entry_of_another_documents_chain_is_foreign() {
    let (doc, _) = chain("v.pdf", 1);
    let (_, other) = chain("other.pdf", 1);
    assert_eq!(
        verify(&doc, &other, None),
        Err(ChainError::ForeignEntry { seq: 1 })
    );
}
