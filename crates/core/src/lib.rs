//! docket's pure domain. No AWS types and no I/O: the steps of the pipeline are written here,
//! generic over the narrow ports of [`ports`], and tested with the in-memory adapters of
//! [`memory`]. The AWS adapters live in `docket-aws`; the Lambdas in `lambdas/` only wire the two.
#![warn(missing_docs)]

pub mod admission;
pub mod admitted;
pub mod audit;
pub mod config;
pub mod deploys;
pub mod diff;
pub mod doctype;
pub mod einvoice;
pub mod error;
pub mod extract;
pub mod ids;
pub mod ledger;
pub mod memory;
pub mod model;
pub mod ocr;
pub mod pages;
pub mod ports;
pub mod read_budget;
pub mod redelivery;
pub mod reprocess;
pub mod review;
pub mod saga;
pub mod steps;
pub mod validate;

pub use error::{Error, Family};
