//! Throttling bursts: DynamoDB refusing 30 % of its requests from the drop on, and Lambda 30 % of
//! its invokes once every upload has its execution; every document completes, each effect once.
//!
//! Lambda's throttling goes on only then because a throttled invoke of ingest by its queue's
//! poller leaves the batch hidden for the visibility timeout (180 s, as on AWS), which at 0.3 a
//! delivery would decide this test's time; that path has a test of its own (an upload whose
//! ingest invoke is throttled waits in its queue). Here the Tasks' invokes are throttled. So that
//! there are Tasks left to throttle (a run whose upload was ingested at once is over in seconds,
//! long before an upload redelivered after DynamoDB's refusals has its execution), the local
//! Textract holds every job until Lambda's throttling is on ([`HeldJobs`]): each run then still
//! has its notification, Validate and Route to invoke.

use std::time::{Duration, Instant};

use docket_core::ids::{DocumentId, RunId};
use docket_e2e::stack::{s, Stack};
use docket_e2e::util;
use reqwest::Method;
use serde_json::{json, Value};

use crate::faults::{assert_each_fired, FaultsOn};
use crate::{drop_invoices, duplicates, patient_stack, settle, Read, RUN_DEADLINE};

#[tokio::test]
async fn throttling_bursts_of_dynamodb_and_lambda_at_probability_0_3_complete_every_document() {
    let stack = patient_stack().await;
    let dynamodb = json!([
        {"service": "dynamodb", "region": "us-east-1", "probability": 0.3,
         "error": {"statusCode": 400, "code": "ProvisionedThroughputExceededException"}}
    ]);
    let lambda = json!([
        {"service": "lambda", "operation": "Invoke", "region": "us-east-1", "probability": 0.3,
         "error": {"statusCode": 429, "code": "TooManyRequestsException"}}
    ]);
    let on = FaultsOn::on(&stack, dynamodb, None).await;
    let held = HeldJobs::hold().await;
    let (_, documents) = drop_invoices(&stack, 8, Read::AsJobs).await;
    executions_started(&stack, &documents).await;
    let lambda_on = FaultsOn::on(&stack, lambda, None).await;
    for d in &documents {
        let statuses: Vec<String> = stack.runs(d).await.iter().map(|r| s(r, "status")).collect();
        assert_eq!(
            statuses,
            ["started"],
            "{d}: held in OCR until Lambda's throttling is on"
        );
    }
    held.release().await;
    let outcomes = settle(&stack, &documents, RUN_DEADLINE * 2).await;
    let chaos_fired = on.chaos_fired();
    eprintln!("faults fired: {chaos_fired:?}");
    lambda_on.off().await;
    on.off().await;
    assert_each_fired(
        "Chaos-API",
        &[
            "dynamodb ProvisionedThroughputExceededException".into(),
            "lambda TooManyRequestsException".into(),
        ],
        &chaos_fired,
    );

    let mut problems = Vec::new();
    for o in &outcomes {
        problems.extend(duplicates(&stack, o).await);
        let statuses: Vec<String> = o.runs.iter().map(|r| s(r, "status")).collect();
        if statuses != ["completed"] {
            let errors: Vec<String> = o.runs.iter().map(|r| s(r, "error")).collect();
            problems.push(format!("{}: {statuses:?}, errors {errors:?}", o.document));
        }
    }
    assert_eq!(outcomes.len(), documents.len(), "no document lost");
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Waits (bounded) until every one of `documents` has an execution.
async fn executions_started(stack: &Stack, documents: &[DocumentId]) {
    let until = Instant::now() + RUN_DEADLINE;
    loop {
        let names = stack.execution_names().await;
        let waiting: Vec<&DocumentId> = documents
            .iter()
            .filter(|d| !names.iter().any(|n| n.starts_with(&RunId::prefix_of(d))))
            .collect();
        if waiting.is_empty() {
            return;
        }
        assert!(
            Instant::now() < until,
            "no execution after {RUN_DEADLINE:?} for {waiting:?}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// How long a page of a held job lasts: longer than anything this test waits for. Let go, a
/// job ends within a second (the local Textract reads its setting again). The hold lasts until
/// every execution has started (at most `RUN_DEADLINE`, 180 s): within the tests' OCR wait and
/// poll loop (60 s, then 90 polls 2 s apart), so no run gives up on its job.
const HELD_SECONDS_PER_PAGE: f64 = 3600.0;

/// The local Textract's jobs held (a simulated duration of an hour a page) while this lives;
/// [`HeldJobs::release`], or dropping it (a panic included), puts the previous duration back,
/// and the held jobs end.
struct HeldJobs {
    previous: Value,
    live: bool,
}

impl HeldJobs {
    async fn hold() -> HeldJobs {
        let previous =
            util::textract_scale(Method::GET, &Value::Null).await["secondsPerPage"].clone();
        let change = json!({"secondsPerPage": HELD_SECONDS_PER_PAGE});
        util::textract_scale(Method::POST, &change).await;
        HeldJobs {
            previous,
            live: true,
        }
    }

    async fn release(mut self) {
        self.live = false;
        util::textract_scale(Method::POST, &self.restore()).await;
    }

    /// The change that puts the previous duration back.
    fn restore(&self) -> Value {
        json!({"secondsPerPage": self.previous})
    }
}

impl Drop for HeldJobs {
    fn drop(&mut self) {
        if !self.live {
            return;
        }
        let released = util::block_on_aside(util::textract_scale(Method::POST, &self.restore()));
        if released.is_err() {
            eprintln!("cleanup: letting the held Textract jobs go panicked; check /_docket/textract/scale");
        }
    }
}
