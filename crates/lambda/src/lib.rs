//! What every docket Lambda shares, and each function's handler, so that a `main.rs` only sets
//! up tracing, builds its [`Deps`] once from the environment and [`serve`]s its handler:
//!
//! - [`logs`]: JSON logs whose every line in a step carries documentId, runId and operationId;
//!   [`metrics`]: business and operations metrics as CloudWatch EMF lines.
//! - [`runtime`]: one invocation — the payload parsed, each step run in the span of its ids
//!   ([`run_step`]), a taxonomy error reported under its stable name as the Lambda `errorType`
//!   (what the state machine's Retry/Catch match), the answer serialized.
//! - [`deps`]: the AWS adapters, built once, as the ports bundle the steps take;
//!   [`deps::Extra`] what only some functions have (and only they need the configuration of).
//! - [`events`]: S3's EventBridge "Object Created" detail; the other event types come from
//!   `aws_lambda_events`.
//! - [`handlers`]: one module per function (`review` is review-callback); [`review_api`]: the
//!   review-api function, the HTTP API behind its function URL.
//!
//! # `recursion_limit` in every binary
//!
//! Each `lambdas/<name>/src/main.rs` sets `#![recursion_limit = "256"]`: the handler's future
//! (runtime → traced span → step → SDK calls) is deep enough that computing its layout in a
//! release build exceeds rustc's default query depth of 128. The attribute only applies to the
//! crate it is written in, so each binary's root carries it.

pub mod deps;
pub mod events;
pub mod handlers;
pub mod logs;
pub mod metrics;
pub mod review_api;
pub mod runtime;

#[cfg(test)]
mod fixtures;

pub use deps::Deps;
pub use logs::{init_tracing, span};
pub use runtime::{
    answer, parse, run_context, run_step, serve, serve_with_deadline, traced, Failure,
};
