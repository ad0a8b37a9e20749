//! Unit tests of the audit chain: sealing, verification, checkpoints; `reports` pins what each
//! chain error names.

use super::*;
use crate::ids::Tenant;
use serde_json::json;

fn chain(n: usize) -> (DocumentId, Vec<AuditEntry>) {
    let doc = DocumentId::new(&Tenant::parse("acme").unwrap(), "a.pdf");
    let mut entries: Vec<AuditEntry> = Vec::new();
    for i in 0..n {
        let prev = entries.last().map(AuditEntry::checkpoint);
        let draft = AuditDraft::new("docket/test", &format!("step.{i}"), None)
            .input("raw", "ab")
            .detail(json!({"i": i}));
        entries.push(seal(
            &doc,
            prev.as_ref(),
            format!("2026-11-30T00:00:0{i}Z"),
            draft,
        ));
    }
    (doc, entries)
}

#[test]
fn a_sealed_chain_verifies_against_its_checkpoint() {
    let (doc, entries) = chain(4);
    assert_eq!(entries[0].prev_hash, GENESIS);
    assert_eq!(entries[3].seq, 4);
    assert_eq!(
        verify(&doc, &entries, Some(&entries[3].checkpoint())),
        Ok(())
    );
}

#[test]
fn an_edited_entry_is_named() {
    let (doc, mut entries) = chain(4);
    entries[1].draft.actor = "mallory".into();
    assert_eq!(
        verify(&doc, &entries, None),
        Err(ChainError::Tampered { seq: 2 })
    );
}

#[test]
fn an_edited_and_rehashed_entry_breaks_the_next_link() {
    let (doc, mut entries) = chain(4);
    entries[1].draft.action = "forged".into();
    entries[1].hash = entries[1].compute_hash();
    assert_eq!(
        verify(&doc, &entries, None),
        Err(ChainError::BrokenLink { seq: 3 })
    );
}

#[test]
fn a_deleted_entry_is_a_gap_at_its_place() {
    let (doc, mut entries) = chain(4);
    entries.remove(2);
    assert_eq!(
        verify(&doc, &entries, None),
        Err(ChainError::Gap {
            expected: 3,
            found: 4
        })
    );
}

#[test]
fn reordered_entries_are_a_gap_at_the_first_misplaced_one() {
    let (doc, mut entries) = chain(4);
    entries.swap(1, 2);
    assert_eq!(
        verify(&doc, &entries, None),
        Err(ChainError::Gap {
            expected: 2,
            found: 3
        })
    );
}

#[test]
fn a_truncated_tail_is_caught_only_by_the_checkpoint() {
    let (doc, mut entries) = chain(4);
    let checkpoint = entries[3].checkpoint();
    entries.truncate(2);
    assert_eq!(verify(&doc, &entries, None), Ok(()));
    assert_eq!(
        verify(&doc, &entries, Some(&checkpoint)),
        Err(ChainError::Truncated {
            last: 2,
            checkpoint: 4
        })
    );
}

#[test]
fn hashes_do_not_depend_on_field_order_in_storage() {
    let (_, entries) = chain(1);
    let stored = serde_json::to_string(&entries[0]).unwrap();
    let back: AuditEntry = serde_json::from_str(&stored).unwrap();
    assert_eq!(back.compute_hash(), entries[0].hash);
}

mod reports;
