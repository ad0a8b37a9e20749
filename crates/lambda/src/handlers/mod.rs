//! One module per function: its request type (what the state machine or EventBridge sends) and
//! the async fn that answers it over the function's [`crate::Deps`].

pub mod ingest;
pub mod ocr;
pub mod review;
pub mod route;
pub mod validate;
