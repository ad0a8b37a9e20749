//! The workflow engine (Step Functions): starting an execution, and answering a Task that waits
//! for a token.

use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ErrorKind;
use crate::model::run::TaskToken;
use crate::Error;

/// Whether a workflow start created the execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Started {
    /// The start was accepted: a new execution, or (Step Functions answers an identical start
    /// of a still-running Standard execution idempotently) the same one again.
    New,
    /// An execution with that name existed already (a duplicate start): not an error.
    AlreadyExists,
}

/// The workflow engine.
pub trait Workflow: Send + Sync {
    /// Starts the execution named `name` (a run id, a reprocess id) with `input` (ids and
    /// pointers only).
    fn start(
        &self,
        name: &str,
        input: &Value,
    ) -> impl Future<Output = Result<Started, Error>> + Send;
    /// Whether the execution named `name` still runs: `false` once it ended (in any way) and
    /// when there is none.
    fn running(&self, name: &str) -> impl Future<Output = Result<bool, Error>> + Send;
    /// Whether an execution named `name` was ever started (running or ended): a start of it
    /// again could only answer `AlreadyExists`.
    fn exists(&self, name: &str) -> impl Future<Output = Result<bool, Error>> + Send;
}

/// The answer to a workflow Task that waits for a token (Step Functions' `SendTaskSuccess` /
/// `SendTaskFailure`).
pub trait TaskCallback: Send + Sync {
    /// Resumes the waiting Task with `output`. `Conflict.ReviewExpired` when the workflow no
    /// longer waits on that token (Step Functions' `TaskTimedOut` / `InvalidToken`).
    fn succeed(
        &self,
        token: &TaskToken,
        output: &Value,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// Fails the waiting Task with `error` (its name is the Task's error); errors as
    /// [`TaskCallback::succeed`].
    fn fail(
        &self,
        token: &TaskToken,
        error: ErrorKind,
        cause: &str,
    ) -> impl Future<Output = Result<(), Error>> + Send;
}
