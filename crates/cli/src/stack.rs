//! The deployment a command talks to: its outputs and clients.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use docket_aws::dynamodb::{DynamoStore, Tables};
use docket_aws::ledger::DynamoLedger;
use docket_aws::s3::S3Blobs;
use docket_aws::saga::DynamoJournal;

pub struct Stack {
    pub outputs: BTreeMap<String, String>,
    pub blobs: S3Blobs,
    pub store: DynamoStore,
    pub ledger: DynamoLedger,
    /// The saga journal (`None` for a stack deployed before it had one).
    pub journal: Option<DynamoJournal>,
}

impl Stack {
    pub async fn load(path: &Path) -> anyhow::Result<Stack> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "reading {} (deploy first: make deploy-local)",
                path.display()
            )
        })?;
        let outputs: BTreeMap<String, String> =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        let sdk = docket_aws::load_config().await;
        let get = |name: &str| {
            outputs
                .get(name)
                .cloned()
                .with_context(|| format!("stack output {name} missing in {}", path.display()))
        };
        let tables = Tables {
            runs: get("RunsTable")?,
            documents: get("DocumentsTable")?,
            audit: get("AuditTable")?,
            checkpoints: get("AuditCheckpointsTable")?,
            ledger: get("LedgerTable")?,
        };
        let store = DynamoStore::new(&sdk, tables.clone());
        let journal = outputs
            .get("SagaJournalTable")
            .map(|table| DynamoJournal::new(store.client().clone(), table));
        Ok(Stack {
            blobs: S3Blobs::new(&sdk),
            ledger: DynamoLedger::new(store.client().clone(), &tables.ledger),
            journal,
            store,
            outputs,
        })
    }

    pub fn out(&self, name: &str) -> anyhow::Result<&str> {
        self.outputs
            .get(name)
            .map(String::as_str)
            .with_context(|| format!("stack output {name} missing"))
    }

    /// The ARN of execution `name` of the state machine the output `machine` names
    /// (`StateMachineArn`: a run's, named by its run id; `BulkReprocessStateMachineArn`: a
    /// reprocess's, named by its id).
    pub fn execution_arn(&self, machine: &str, name: &str) -> anyhow::Result<String> {
        Ok(docket_aws::sfn::execution_arn(self.out(machine)?, name))
    }

    /// Invokes the function the output `function` names with `payload`, with the caller's
    /// credentials (IAM decides who may): its answer, `Err` holding it when the function failed
    /// (`errorType`, `errorMessage`).
    pub async fn invoke(
        &self,
        function: &str,
        payload: &serde_json::Value,
    ) -> anyhow::Result<Result<serde_json::Value, serde_json::Value>> {
        let function = self.out(function)?;
        let lambda = aws_sdk_lambda::Client::new(&docket_aws::load_config().await);
        let out = lambda
            .invoke()
            .function_name(function)
            .payload(aws_sdk_lambda::primitives::Blob::new(payload.to_string()))
            .send()
            .await
            .with_context(|| format!("invoking {function}"))?;
        let body = out
            .payload()
            .map(|b| b.as_ref().to_vec())
            .unwrap_or_default();
        let answer =
            serde_json::from_slice(&body).with_context(|| format!("the answer of {function}"))?;
        Ok(match out.function_error() {
            None => Ok(answer),
            Some(_) => Err(answer),
        })
    }
}

/// Prints `value` as JSON, or `text` for people.
pub fn print(output: crate::Output, value: &serde_json::Value, text: impl FnOnce() -> String) {
    match output {
        crate::Output::Json => println!("{}", serde_json::to_string_pretty(value).unwrap()),
        crate::Output::Text => println!("{}", text()),
    }
}
