//! The reprocess function as the bulk state machine's Map calls it: each Task's payload built by
//! the Task's own `Parameters` in `statemachines/bulk-reprocess.asl.json` and its answer kept by
//! the Task's `ResultSelector`, so that a field one side renames fails here.

use docket_core::ids::Tenant;
use docket_core::reprocess::{Order, Request, Requester};
use time::Duration;

use super::*;
use crate::handlers::reprocess;

const BULK: &str = include_str!("../../../../../statemachines/bulk-reprocess.asl.json");

/// A state of the Map's item processor.
fn item_state(name: &str) -> Value {
    let asl: Value = serde_json::from_str(BULK).unwrap();
    asl["States"]["Reprocess"]["ItemProcessor"]["States"][name].clone()
}

/// Calls the reprocess function as the Task `name` does in the child execution `state`, and
/// returns the state after the Task (its `ResultSelector` at its `ResultPath`, `$` if none).
async fn call(w: &World, name: &str, state: &Value, deadline: time::OffsetDateTime) -> Value {
    let task = item_state(name);
    let request = parse(template(&task["Parameters"]["Payload"], state)).unwrap();
    let answer = reprocess::handle(&w.ports, &w.ctx, request, deadline)
        .await
        .unwrap_or_else(|Failure(e)| panic!("{name}: {e}"));
    let kept = template(&task["ResultSelector"], &json!({ "Payload": answer }));
    match task["ResultPath"].as_str() {
        None => kept,
        Some(path) => {
            let mut state = state.clone();
            state[path.strip_prefix("$.").unwrap()] = kept;
            state
        }
    }
}

/// A batch of one item, as the Map's `ItemBatcher` writes it: the next generation of the
/// document `ingested` started.
async fn batch(w: &World) -> Value {
    let run = w.ingested("inbox/acme/again.png", 0.97).await["run"].clone();
    let request = Request {
        tenant: Tenant::parse("acme").unwrap(),
        prefix: None,
        since: None,
        config_fingerprint: w.ctx.config.fingerprint(),
        reason: "the total rule changed".into(),
        reocr: true,
    };
    let order = Order {
        reprocess_id: request.id(),
        reason: request.reason.clone(),
        requested_by: Requester {
            operator: "olivia".into(),
            principal: "arn:aws:sts::111122223333:assumed-role/docket-operator/olivia".into(),
        },
        config_fingerprint: request.config_fingerprint.clone(),
    };
    let item = json!({
        "documentId": run["documentId"], "tenant": run["tenant"], "fromRunId": run["runId"],
        "raw": run["raw"], "sha256": run["sha256"], "sourceOrder": run["sourceOrder"],
        "generation": 1,
    });
    json!({ "Items": [item], "BatchInput": order })
}

#[tokio::test]
async fn a_batch_starts_its_runs_then_holds_its_slot_while_they_work() {
    let w = world();
    let state = batch(&w).await;
    let later = w.ctx.clock.now() + Duration::minutes(2);

    let state = call(&w, "StartRuns", &state, later).await;
    assert_eq!(state["started"], 1, "{state}");
    assert_eq!(item_state("StartRuns")["Next"], "AwaitRuns");
    assert_eq!(item_state("AwaitRuns")["Next"], "CheckRuns");
    let checked = call(&w, "CheckRuns", &state, later).await;

    // The new run is started, not ended: the Choice goes back to waiting.
    let choice = item_state("RunsDone");
    let variable = choice["Choices"][0]["Variable"].as_str().unwrap();
    assert_eq!(variable, "$.pace.done");
    assert_eq!(checked["pace"], json!({"working": 1, "done": false}));
    assert_eq!(choice["Default"], "AwaitRuns");
    assert_eq!(choice["Choices"][0]["BooleanEquals"], true);

    // A batch that waited past the pacing limit ends anyway.
    let mut stuck = state.clone();
    let since = w.ctx.clock.now() - docket_core::steps::reprocess::PACING_LIMIT;
    stuck["at"] = since
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap()
        .into();
    let checked = call(&w, "CheckRuns", &stuck, later).await;
    assert_eq!(checked["pace"], json!({"working": 1, "done": true}));
    assert_eq!(item_state("Paced")["Type"], "Succeed");
}

#[tokio::test]
async fn a_batch_at_its_deadline_asks_for_the_retry_the_map_makes() {
    let w = world();
    let state = batch(&w).await;
    let task = item_state("StartRuns");
    let request = parse(template(&task["Parameters"]["Payload"], &state)).unwrap();
    let now = w.ctx.clock.now();

    let Failure(e) = reprocess::handle(&w.ports, &w.ctx, request, now + reprocess::DEADLINE_MARGIN)
        .await
        .unwrap_err();

    assert_eq!(e.name(), "Transient.InProgress", "{e}");
    let retried = task["Retry"].as_array().unwrap().iter().any(|r| {
        r["ErrorEquals"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == e.name())
    });
    assert!(retried, "StartRuns retries {}", e.name());
    let executions = w.ports.workflow.executions.lock().unwrap().len();
    assert_eq!(executions, 1, "only the upload's run");
}
