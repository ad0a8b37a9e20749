//! The operation ledger's rules at their edges. Written against mutants `make mutants` found
//! unkilled.

use crate::error::ErrorKind;
use crate::ids::{DocumentId, OperationId, RunId, SourceVersion, Tenant};
use crate::ledger::{
    apply_write, claimed_record, decide_write, LeaseRules, LedgerStatus, OperationRecord, Write,
    WriteDecision,
};
use crate::Error;

#[test]
fn only_in_progress_and_accepted_are_held_under_a_lease() {
    assert!(LedgerStatus::InProgress.is_held());
    assert!(LedgerStatus::Accepted.is_held());
    assert!(!LedgerStatus::Completed.is_held());
    assert!(!LedgerStatus::Failed.is_held());
    assert!(!LedgerStatus::Unresolved.is_held());
}

fn op() -> OperationId {
    let doc = DocumentId::new(&Tenant::parse("acme").unwrap(), "a.pdf");
    let source = SourceVersion {
        version_id: "v1".into(),
        sha256: "00".into(),
    };
    OperationId::new(&RunId::new(&doc, &source, "cfg", 0), "ocr", None)
}

/// The record after a claim (fence 1) and `write` by its holder.
fn after(write: &Write) -> OperationRecord {
    let rules = LeaseRules {
        lease_seconds: 60,
        retention_seconds: 3600,
    };
    let mut rec = claimed_record(None, &op(), "p1", 1, 100, &rules);
    assert_eq!(
        decide_write(Some(&rec), &op(), 1, write),
        Ok(WriteDecision::Apply)
    );
    apply_write(&mut rec, 1, write, 101);
    rec
}

/// A write repeated by its holder is acknowledged only if it is the very same write: the same
/// status with any other value is a different outcome, refused, never silently "already there".
fn assert_only_the_same_write_is_acknowledged(done: Write, others: &[Write]) {
    let rec = after(&done);
    assert_eq!(
        decide_write(Some(&rec), &op(), 1, &done),
        Ok(WriteDecision::AlreadyApplied),
        "{done:?} repeated"
    );
    for other in others {
        assert!(
            matches!(
                decide_write(Some(&rec), &op(), 1, other),
                Err(Error::FencedOut(_))
            ),
            "{other:?} after {done:?} must be refused"
        );
    }
}

#[test]
fn a_repeated_completion_is_acknowledged_only_with_the_same_pointer_and_hash() {
    let complete = |pointer: &str, hash: &str| Write::Complete {
        result_pointer: pointer.into(),
        result_hash: hash.into(),
    };
    assert_only_the_same_write_is_acknowledged(
        complete("s3://b/k", "h1"),
        &[complete("s3://b/other", "h1"), complete("s3://b/k", "h2")],
    );
}

#[test]
fn a_repeated_failure_is_acknowledged_only_with_the_same_error() {
    assert_only_the_same_write_is_acknowledged(
        Write::Fail {
            error: ErrorKind::OcrFailed,
        },
        &[Write::Fail {
            error: ErrorKind::Internal,
        }],
    );
}

#[test]
fn a_repeated_unresolved_mark_is_acknowledged_only_with_the_same_owner_and_next_action() {
    let mark = |owner: &str, next: &str| Write::MarkUnresolved {
        owner: owner.into(),
        next_action: next.into(),
    };
    assert_only_the_same_write_is_acknowledged(
        mark("ops", "ask the provider"),
        &[mark("someone", "ask the provider"), mark("ops", "retry")],
    );
}

#[test]
fn a_repeated_acceptance_is_acknowledged_only_with_the_same_job() {
    let accept = |job: &str| Write::Accept { job_id: job.into() };
    assert_only_the_same_write_is_acknowledged(accept("job-1"), &[accept("job-2")]);
}
