//! The pipeline end to end (issue "The pipeline end to end"): documents dropped in the inbox of the
//! stack deployed to LocalStack (`scripts/test-local.sh` deploys it) come out as `result.json`.

mod accounts_payable;
mod across_deploy;
mod audit;
mod audit_digest;
mod config;
mod deploy;
mod duplicates;
mod exactly_once;
mod forgery;
mod happy;
mod hostile;
mod infra;
mod ingest_queue;
mod invoices;
mod lost_ack;
mod metrics;
mod obligations;
mod privacy;
mod quotas;
mod receipt_timeout;
mod reprocess;
mod review;
mod review_pages;
mod saga;
mod sweeper;

/// The deployed route's sweep with `olderThanSeconds: 0` (`sweeper.rs`) relays and redelivers
/// every record of the stack, other tests' too. It holds this lock to write; a test that counts
/// its deployed run's publications at the wire holds it to read, so that no such sweep adds one.
pub(crate) static SWEEPS: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// `quotas.rs` lowers the local Textract's quotas and docket's to match, and checks that the
/// provider refuses nothing. A test that calls Textract directly (past docket's admission)
/// holds this lock to read, so that none of its calls lands in that window.
pub(crate) static TEXTRACT: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());
