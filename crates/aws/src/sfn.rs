//! [`Workflow`] on Step Functions: the execution name is the run id (the pipeline) or the
//! reprocess id (the bulk reprocess), so a duplicate start is answered `ExecutionAlreadyExists`,
//! which is success here, and an execution is found again by its name ([`execution_arn`]).
//! Each start is logged as it is sent, with the sender's clock (`sentAtMs`): the instant a
//! pacer admitted it, which the execution's start date (the engine's clock, after transit
//! and the engine's own queueing) is not.

use aws_sdk_sfn::types::ExecutionStatus;
use aws_sdk_sfn::Client;
use docket_core::error::ErrorKind;
use docket_core::model::run::TaskToken;
use docket_core::ports::{Started, TaskCallback, Workflow};
use docket_core::Error;
use serde_json::Value;

use crate::errors::classify;

/// Executions of one state machine (or alias).
#[derive(Debug, Clone)]
pub struct SfnWorkflow {
    client: Client,
    state_machine_arn: String,
}

impl SfnWorkflow {
    /// Starts executions of `state_machine_arn` (an alias ARN in deployments).
    pub fn new(config: &aws_config::SdkConfig, state_machine_arn: String) -> Self {
        Self::with_faults(config, state_machine_arn, &crate::Faults::none())
    }

    /// Like [`SfnWorkflow::new`], with `faults` injected (tests and local runs only).
    pub fn with_faults(
        config: &aws_config::SdkConfig,
        state_machine_arn: String,
        faults: &crate::Faults,
    ) -> Self {
        let builder = aws_sdk_sfn::config::Builder::from(config);
        SfnWorkflow {
            client: Client::from_conf(crate::with_faults(builder, faults).build()),
            state_machine_arn,
        }
    }
}

impl Workflow for SfnWorkflow {
    async fn start(&self, name: &str, input: &Value) -> Result<Started, Error> {
        let sent_at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        tracing::info!(
            execution = name,
            sentAtMs = sent_at_ms,
            "starting execution"
        );
        let result = self
            .client
            .start_execution()
            .state_machine_arn(&self.state_machine_arn)
            .name(name)
            .input(input.to_string())
            .send()
            .await;
        match result {
            Ok(_) => Ok(Started::New),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_execution_already_exists()) =>
            {
                Ok(Started::AlreadyExists)
            }
            // A lost answer is safe to retry: the name makes a second start impossible.
            Err(e) => Err(classify("states StartExecution", e)),
        }
    }

    async fn running(&self, name: &str) -> Result<bool, Error> {
        Ok(self.status(name).await? == Some(ExecutionStatus::Running))
    }

    async fn exists(&self, name: &str) -> Result<bool, Error> {
        Ok(self.status(name).await?.is_some())
    }
}

impl SfnWorkflow {
    /// The status of execution `name`; `None` when there is none.
    async fn status(&self, name: &str) -> Result<Option<ExecutionStatus>, Error> {
        let result = self
            .client
            .describe_execution()
            .execution_arn(execution_arn(&self.state_machine_arn, name))
            .send()
            .await;
        match result {
            Ok(described) => Ok(Some(described.status().clone())),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_execution_does_not_exist()) =>
            {
                Ok(None)
            }
            Err(e) => Err(classify("states DescribeExecution", e)),
        }
    }
}

/// The ARN of execution `name` of `machine`: a state machine's ARN, or a version's or an
/// alias's (`...:stateMachine:NAME:QUALIFIER`). An execution started through a version or an
/// alias is named after the state machine alone, so the qualifier is dropped.
pub fn execution_arn(machine: &str, name: &str) -> String {
    let (prefix, rest) = machine
        .split_once(":stateMachine:")
        .unwrap_or((machine, ""));
    let machine_name = rest.split(':').next().unwrap_or_default();
    format!("{prefix}:execution:{machine_name}:{name}")
}

/// [`TaskCallback`] on Step Functions' `SendTaskSuccess` / `SendTaskFailure`. The token is only
/// passed to the SDK; it is never logged or put in an error message.
#[derive(Debug, Clone)]
pub struct SfnCallback {
    client: Client,
}

/// Step Functions' answers that say the workflow no longer waits on a token.
const CLOSED_TOKEN: &[&str] = &["TaskTimedOut", "InvalidToken", "TaskDoesNotExist"];

impl SfnCallback {
    /// From an SDK config, with `faults` injected (none outside tests and local runs).
    pub fn with_faults(config: &aws_config::SdkConfig, faults: &crate::Faults) -> Self {
        let builder = aws_sdk_sfn::config::Builder::from(config);
        SfnCallback {
            client: Client::from_conf(crate::with_faults(builder, faults).build()),
        }
    }
}

fn callback_error<E, R>(what: &str, e: aws_sdk_sfn::error::SdkError<E, R>) -> Error
where
    E: aws_sdk_sfn::error::ProvideErrorMetadata + std::fmt::Debug,
    R: std::fmt::Debug,
{
    match crate::errors::code(&e) {
        Some(c) if CLOSED_TOKEN.contains(&c) => Error::ReviewExpired(c.to_string()),
        _ => crate::errors::classify_effect(what, e),
    }
}

impl TaskCallback for SfnCallback {
    async fn succeed(&self, token: &TaskToken, output: &Value) -> Result<(), Error> {
        self.client
            .send_task_success()
            .task_token(token.expose())
            .output(output.to_string())
            .send()
            .await
            .map(|_| ())
            .map_err(|e| callback_error("states SendTaskSuccess", e))
    }

    async fn fail(&self, token: &TaskToken, error: ErrorKind, cause: &str) -> Result<(), Error> {
        self.client
            .send_task_failure()
            .task_token(token.expose())
            .error(error.name())
            .cause(cause)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| callback_error("states SendTaskFailure", e))
    }
}

#[cfg(test)]
mod tests {
    use super::execution_arn;

    #[test]
    fn an_execution_is_named_after_the_state_machine_whatever_started_it() {
        let machine = "arn:aws:states:us-east-1:000000000000:stateMachine:docket-pipeline";
        let execution = "arn:aws:states:us-east-1:000000000000:execution:docket-pipeline:run-1";
        assert_eq!(execution_arn(machine, "run-1"), execution);
        assert_eq!(
            execution_arn(&format!("{machine}:live"), "run-1"),
            execution
        );
        assert_eq!(execution_arn(&format!("{machine}:7"), "run-1"), execution);
    }
}
