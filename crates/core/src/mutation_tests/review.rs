//! Review input limits and the steps' clock at their edges. Written against mutants
//! `make mutants` found unkilled.

use time::OffsetDateTime;

use crate::ids::Tenant;
use crate::review::{ReviewDecision, Reviewer, MAX_TEXT_CHARS};
use crate::steps::Clock;

#[test]
fn a_rejection_reason_of_exactly_the_limit_is_accepted_and_one_more_is_refused() {
    let reviewer = Reviewer::new("alice", Tenant::parse("acme").unwrap()).unwrap();
    let now = OffsetDateTime::UNIX_EPOCH;
    let at_limit = "x".repeat(MAX_TEXT_CHARS);
    assert!(ReviewDecision::reject(&reviewer, &at_limit, now).is_ok());
    let over = "x".repeat(MAX_TEXT_CHARS + 1);
    assert!(ReviewDecision::reject(&reviewer, &over, now).is_err());
}

#[test]
fn the_clock_writes_audit_times_in_rfc_3339() {
    let clock = Clock::Fixed(OffsetDateTime::UNIX_EPOCH);
    assert_eq!(clock.now_rfc3339(), "1970-01-01T00:00:00Z");
}
