//! The end-to-end tests of docket against local AWS (LocalStack), and what they share.
//!
//! Layout: one test binary per area, each a `main.rs` with one module per subject (as ripgrep's
//! `tests/`); what more than one binary needs lives in this library.
//!
//! - `localaws/`: what our LocalStack extension must emulate (DynamoDB, Lambda as processes,
//!   Textract, the Chaos API, CloudFormation's Step Functions versions, SDK fault injection).
//! - `pipeline/`: documents through the deployed stack, end to end.
//! - `soak/`: Chaos-API throttling bursts and a 100-document soak with mixed faults (one test at
//!   a time, after `pipeline/`).
//! - `lint/`: the state machines, the template and docket-core's module graph, read as data; no
//!   AWS.
//! - `benches/`: figures, not pass/fail (`make bench`, `make bench-local`).
//! - `examples/samples.rs`: the sample documents of `make demo`.
//! - `examples/render_invoices.rs`: writes the synthetic evaluation invoices
//!   (`fixtures/invoices/synthetic/`) from [`invoices`].
//! - `testfn/`: a tiny Lambda for the executor tests; `fixtures/`: real event JSON.
//!
//! The library: [`util`] (SDK config for LocalStack, unique names, the Chaos API, workspace builds,
//! percentiles), [`stack`] (the deployed stack's outputs, clients, waits and reads), [`reviewers`]
//! (assumed reviewer sessions and the `docket` CLI), [`function`] (the test function deployed to
//! the local Lambda), [`resource`] (what a test creates is deleted when it ends), [`render`]
//! (documents from known text), [`invoices`] (the synthetic evaluation set, rendered from varied
//! layouts and languages), [`cost`] (AWS's prices and the bill of a usage) and [`metering`] (a
//! stretch of work's usage, read at the wire and from the functions' logs), and [`scale`] (a
//! discrete-event simulation of the OCR admission under AWS's quotas, SCALE.md).

pub mod cost;
pub mod function;
pub mod invoices;
pub mod metering;
pub mod render;
pub mod resource;
pub mod reviewers;
pub mod scale;
pub mod stack;
pub mod util;
