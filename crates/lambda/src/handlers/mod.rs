//! One module per function: its request type (what the state machine or EventBridge sends), the
//! `Deps` its binary builds, and `handle`, which answers a request over the ports the function's
//! steps take (`docket_core::ports::Has*`: the AWS adapters of [`crate::Deps`] in the Lambda, the
//! in-memory ones in the tests).

pub mod accounts_payable;
pub mod audit_digest;
pub mod compensate;
pub mod ingest;
pub mod ocr;
pub mod ocr_notified;
pub mod reprocess;
pub mod review;
pub mod route;
pub mod validate;

#[cfg(test)]
mod tests;
