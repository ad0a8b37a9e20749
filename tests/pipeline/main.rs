//! The pipeline end to end (issue "The pipeline end to end"): documents dropped in the inbox of the
//! stack deployed to LocalStack (`scripts/test-local.sh` deploys it) come out as `result.json`.

mod accounts_payable;
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
mod lost_ack;
mod obligations;
mod privacy;
mod review;
mod saga;
mod sweeper;
