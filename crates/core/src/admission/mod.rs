//! Admission to a provider with quotas (issue 13; SCALE.md): the pure rules of the two shared
//! records through which every caller of Textract takes its turn, so that however many
//! documents arrive no quota is exceeded and none fails for it.
//!
//! - [`pacer`]: start slots `1 / rate` apart for one rate quota (calls per second), kept in one
//!   record advanced by a conditional write. A caller calls at its slot; one that finds itself
//!   later than `max_late` gives the slot up and takes another, so a one-second window never
//!   holds more calls than the quota ([`pacer::Pace::for_quota`]).
//! - [`slots`]: a semaphore of leased slots for a concurrency quota (jobs that may run at
//!   once): a holder (the run's OCR operation) takes one before its job starts and gives it
//!   back when the job ends; a slot whose lease ran out (a crashed holder) is reclaimed. Taking
//!   and giving back are idempotent per holder.
//!
//! The adapters (`docket-aws`: DynamoDB; [`crate::memory`]: in memory) apply these decisions
//! as conditional writes; the tests here check them against the quota as AWS counts it
//! (`tests/scale` simulates the whole admission).

pub mod pacer;
pub mod slots;
