use super::*;
use crate::audit::{seal, verify, AuditDraft};
use crate::ids::{DocumentId, Tenant};
use time::macros::datetime;

fn doc() -> DocumentId {
    DocumentId::new(&Tenant::parse("acme").unwrap(), "a.pdf")
}

fn chain(n: usize) -> Vec<AuditEntry> {
    let mut entries: Vec<AuditEntry> = Vec::new();
    for i in 0..n {
        let prev = entries.last().map(AuditEntry::checkpoint);
        let draft = AuditDraft::new("docket/test", &format!("step.{i}"), None);
        entries.push(seal(&doc(), prev.as_ref(), format!("t{i}"), draft));
    }
    entries
}

/// What a compromised writer does: edit entry `seq`, re-hash it and every later entry.
fn rewrite(entries: &mut [AuditEntry], seq: usize) {
    entries[seq - 1].draft.actor = "mallory".into();
    for i in seq - 1..entries.len() {
        if i > 0 {
            entries[i].prev_hash = entries[i - 1].hash.clone();
        }
        entries[i].hash = entries[i].compute_hash();
    }
}

fn digest_of(entries: &[AuditEntry], previous: Option<&Digest>, minute: u8) -> Digest {
    let mut chains = BTreeMap::new();
    if let Some(last) = entries.last() {
        chains.insert(doc().to_string(), last.checkpoint());
    }
    let time = datetime!(2026-11-30 23:00 UTC) + time::Duration::minutes(minute.into());
    Digest::new("docket-test", time, previous.map(Digest::link), chains)
}

#[test]
fn a_digest_round_trips_through_its_canonical_bytes_and_names_its_hash_in_its_key() {
    let d = digest_of(&chain(3), None, 5);
    assert_eq!(d.time, "2026-11-30T23:05:00.000Z");
    let bytes = d.canonical_bytes();
    assert_eq!(Digest::parse(&bytes), Ok(d.clone()));
    assert_eq!(d.hash(), sha256_hex(&bytes));
    assert_eq!(
        d.key(),
        format!("digests/2026-11-30T23:05:00.000Z-{}.json", d.hash())
    );
}

#[test]
fn non_canonical_bytes_are_refused() {
    let d = digest_of(&chain(1), None, 0);
    let pretty = serde_json::to_vec_pretty(&d).unwrap();
    assert!(Digest::parse(&pretty).unwrap_err().contains("canonical"));
}

#[test]
fn an_untouched_chain_matches_its_digests() {
    let entries = chain(5);
    let d1 = digest_of(&entries[..2], None, 0);
    let d2 = digest_of(&entries, Some(&d1), 15);
    assert_eq!(check_chain(&doc().to_string(), &entries, &[d2, d1]), Ok(()));
}

#[test]
fn a_rewrite_that_recomputed_the_hashes_passes_the_chain_check_but_not_the_digest() {
    let mut entries = chain(5);
    let d = digest_of(&entries, None, 0);
    rewrite(&mut entries, 2);
    let head = entries.last().unwrap().checkpoint();
    // The rewrite is invisible to the chain and its (moved) checkpoint...
    assert_eq!(verify(&doc(), &entries, Some(&head)), Ok(()));
    // ...and named by the digest: entry 5 differs, so the rewrite is somewhere in 1..=5.
    let err = check_chain(&doc().to_string(), &entries, &[d]).unwrap_err();
    assert_eq!(
        err,
        DigestMismatch::Rewritten {
            from: 1,
            to: 5,
            time: "2026-11-30T23:00:00.000Z".into()
        }
    );
    assert_eq!(err.seq(), 1);
}

#[test]
fn older_digests_narrow_the_rewrite_down_to_the_entry() {
    let mut entries = chain(5);
    let d1 = digest_of(&entries[..1], None, 0);
    let d2 = digest_of(&entries[..2], Some(&d1), 15);
    let d3 = digest_of(&entries, Some(&d2), 30);
    rewrite(&mut entries, 3);
    let err = check_chain(&doc().to_string(), &entries, &[d3, d2, d1]).unwrap_err();
    assert_eq!((err.seq(), err.to_string().contains("3..=5")), (3, true));
}

#[test]
fn a_digest_signed_after_the_rewrite_narrows_nothing() {
    // given a digest of the chain, a rewrite at entry 2, and a later digest of the rewritten
    // chain's same head
    let mut entries = chain(5);
    let before = digest_of(&entries[..1], None, 0);
    let original = digest_of(&entries, Some(&before), 15);
    rewrite(&mut entries, 2);
    let after = digest_of(&entries, Some(&original), 30);

    let err = check_chain(&doc().to_string(), &entries, &[after, original, before]);

    // then the original head is the mismatch, and only the digest before it narrows the range
    assert_eq!(
        err,
        Err(DigestMismatch::Rewritten {
            from: 2,
            to: 5,
            time: "2026-11-30T23:15:00.000Z".into()
        })
    );
}

#[test]
fn a_chain_put_back_after_a_digest_is_named_without_a_range() {
    // given a digest of the chain, a rewrite, a digest of the rewritten chain, and the
    // original chain put back
    let original = chain(5);
    let mut rewritten = original.clone();
    let first = digest_of(&original, None, 0);
    rewrite(&mut rewritten, 3);
    let second = digest_of(&rewritten, Some(&first), 15);

    let err = check_chain(&doc().to_string(), &original, &[second, first]).unwrap_err();

    assert_eq!((err.seq(), err.to_string().contains("1..=5")), (1, true));
}

#[test]
fn a_chain_cut_below_a_signed_head_is_a_truncation() {
    let entries = chain(4);
    let d = digest_of(&entries, None, 0);
    let err = check_chain(&doc().to_string(), &entries[..2], &[d]).unwrap_err();
    assert!(matches!(
        err,
        DigestMismatch::Truncated {
            last: 2,
            signed: 4,
            ..
        }
    ));
    assert_eq!(err.seq(), 3);
}

#[test]
fn a_document_no_digest_names_yet_passes() {
    let d = digest_of(&[], None, 0);
    assert!(d.chains.is_empty());
    assert_eq!(check_chain(&doc().to_string(), &chain(2), &[d]), Ok(()));
}

#[test]
fn digests_must_link_newest_first_down_to_the_first() {
    let e = chain(3);
    let d1 = digest_of(&e[..1], None, 0);
    let d2 = digest_of(&e[..2], Some(&d1), 15);
    let d3 = digest_of(&e, Some(&d2), 30);
    assert_eq!(
        check_links(&[d3.clone(), d2.clone(), d1.clone()], true),
        Ok(())
    );
    // A page of the newest ones: the oldest given may link further back.
    assert_eq!(check_links(&[d3.clone(), d2.clone()], false), Ok(()));
    assert!(check_links(&[d3.clone(), d2.clone()], true).is_err());
    // One left out in the middle is a broken link at the digest after it.
    assert_eq!(
        check_links(&[d3.clone(), d1.clone()], true),
        Err(DigestChainError::BrokenLink {
            key: d3.key(),
            expected: d1.key()
        })
    );
}
