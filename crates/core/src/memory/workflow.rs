//! The workflow engine: executions, and the callbacks to Tasks that wait for a token.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use serde_json::Value;

use crate::ports::{Started, Workflow};
use crate::Error;

/// A workflow engine that records executions by name.
#[derive(Debug, Default)]
pub struct MemoryWorkflow {
    /// Execution name → input.
    pub executions: Mutex<BTreeMap<String, Value>>,
    /// Names of executions that ended (a test ends them; every other started one runs).
    pub ended: Mutex<BTreeSet<String>>,
    /// Errors the next starts fail with, first first (nothing is started).
    pub fail_starts: Mutex<Vec<Error>>,
    /// Every start asked for, repeats and failures included.
    pub start_calls: Mutex<usize>,
}

impl Workflow for MemoryWorkflow {
    async fn start(&self, name: &str, input: &Value) -> Result<Started, Error> {
        *self.start_calls.lock().unwrap() += 1;
        let mut failing = self.fail_starts.lock().unwrap();
        if !failing.is_empty() {
            return Err(failing.remove(0));
        }
        drop(failing);
        let mut executions = self.executions.lock().unwrap();
        if executions.contains_key(name) {
            return Ok(Started::AlreadyExists);
        }
        executions.insert(name.to_string(), input.clone());
        Ok(Started::New)
    }

    async fn exists(&self, name: &str) -> Result<bool, Error> {
        Ok(self.executions.lock().unwrap().contains_key(name))
    }

    async fn running(&self, name: &str) -> Result<bool, Error> {
        let started = self.executions.lock().unwrap().contains_key(name);
        Ok(started && !self.ended.lock().unwrap().contains(name))
    }
}

/// Task callbacks as recorded calls: (token, `Ok(output)` or `Err(error name)`). Tokens in
/// `closed` answer `Conflict.ReviewExpired`, as Step Functions does after the Task timed out.
#[derive(Debug, Default)]
pub struct MemoryCallback {
    /// Every accepted callback, in order.
    pub calls: Mutex<Vec<(String, Result<Value, String>)>>,
    /// Tokens the workflow no longer waits on.
    pub closed: Mutex<Vec<String>>,
}

impl MemoryCallback {
    fn call(
        &self,
        token: &crate::model::run::TaskToken,
        what: Result<Value, String>,
    ) -> Result<(), Error> {
        if self
            .closed
            .lock()
            .unwrap()
            .iter()
            .any(|t| t == token.expose())
        {
            return Err(Error::ReviewExpired("TaskTimedOut".into()));
        }
        self.calls
            .lock()
            .unwrap()
            .push((token.expose().to_string(), what));
        Ok(())
    }
}

impl crate::ports::TaskCallback for MemoryCallback {
    async fn succeed(
        &self,
        token: &crate::model::run::TaskToken,
        output: &Value,
    ) -> Result<(), Error> {
        self.call(token, Ok(output.clone()))
    }

    async fn fail(
        &self,
        token: &crate::model::run::TaskToken,
        error: crate::error::ErrorKind,
        _cause: &str,
    ) -> Result<(), Error> {
        self.call(token, Err(error.name().to_string()))
    }
}
