//! A bulk reprocess's batch: new runs of the next generation beside the old ones, audited with
//! the reason, started once however often the batch runs.

use super::*;
use crate::ids::Tenant;
use crate::reprocess::{manifest_key, plan, to_jsonl, Batch, Order, Request, Requester, Start};
use crate::review::identity::Operator;
use crate::steps::reprocess;

/// A reprocess of `acme`'s documents under the built-in config.
fn request(w: &World) -> Request {
    Request {
        tenant: Tenant::parse("acme").unwrap(),
        prefix: None,
        since: None,
        config_fingerprint: w.ctx.config.fingerprint(),
        reason: "the total rule changed".into(),
        reocr: false,
    }
}

/// A deadline far enough away for any batch.
fn later(w: &World) -> time::OffsetDateTime {
    w.ctx.clock.now() + time::Duration::hours(1)
}

/// A batch reprocessing the document of `ocr_ready` (already run to completion) under the
/// built-in config.
async fn completed_and_batched(w: &World) -> (RunInput, Batch) {
    let first = w.ocr_ready().await;
    let (status, _) = w.run(&first).await.unwrap();
    assert_eq!(status, "completed");
    let current = w.ports.store.run(&first.run_id).await.unwrap().unwrap();
    let request = request(w);
    let runs = [current];
    let items = plan(
        &request,
        |r| w.ctx.layout.ocr(&r.tenant, &r.document_id, &r.run_id),
        [(&first.run_id, &runs[..])],
    );
    let order = Order {
        reprocess_id: request.id(),
        reason: request.reason.clone(),
        requested_by: Requester {
            operator: "olivia".into(),
            principal: "arn:aws:sts::000000000000:assumed-role/docket-operator/olivia".into(),
        },
        config_fingerprint: request.config_fingerprint.clone(),
    };
    (first, Batch { items, order })
}

#[tokio::test]
async fn a_reprocessed_document_runs_again_as_generation_1_beside_its_first_run() {
    let w = world();
    let (first, batch) = completed_and_batched(&w).await;

    let started = reprocess::start(&w.ports, &w.ctx, &batch, later(&w))
        .await
        .unwrap();

    assert_eq!(started.len(), 1);
    let again = &started[0];
    assert_eq!((again.generation, &again.execution), (1, &Started::New));
    assert_ne!(again.run_id, first.run_id);
    let record = w.ports.store.run(&again.run_id).await.unwrap().unwrap();
    assert_eq!((record.generation, record.status), (1, RunStatus::Started));
    assert_eq!(record.raw, first.raw);
    let input: RunInput = serde_json::from_value(
        w.ports.workflow.executions.lock().unwrap()[again.run_id.as_str()]["run"].clone(),
    )
    .unwrap();
    assert!(input.source_order > first.source_order);

    let entries = w.entries(&first.document_id).await;
    let last = entries.last().unwrap();
    assert_eq!(last.draft.action, "document.reprocessed");
    assert_eq!(last.draft.run_id.as_ref(), Some(&again.run_id));
    assert_eq!(last.draft.detail["reason"], "the total rule changed");
    assert_eq!(last.draft.detail["previousRunId"], first.run_id.as_str());
    assert_eq!(last.draft.detail["requestedBy"]["operator"], "olivia");
    assert_eq!(
        last.draft.detail["requestedBy"]["principal"],
        batch.order.requested_by.principal
    );

    // The new run completes on its source version's stored OCR (no second provider job) and
    // becomes current; the first run stays as it was.
    assert_eq!(input.reuse_ocr, batch.items[0].ocr);
    let jobs = w.ports.ocr.job_count();
    let (status, result) = w.run(&input).await.unwrap();
    assert_eq!(w.ports.ocr.job_count(), jobs, "no second OCR job");
    let started = w.entries(&first.document_id).await;
    let ocr_started = started
        .iter()
        .find(|e| e.draft.action == "ocr.started" && e.draft.run_id.as_ref() == Some(&again.run_id))
        .unwrap();
    assert_eq!(ocr_started.draft.detail["reused"], true);
    let own = w
        .ctx
        .layout
        .ocr(&input.tenant, &input.document_id, &input.run_id);
    let stored = input.reuse_ocr.clone().unwrap();
    assert_eq!(
        w.json(&own).await,
        w.json(&stored).await,
        "its own copy of the OCR"
    );
    assert_eq!(status, "completed");
    assert!(result.unwrap().key.contains(again.run_id.as_str()));
    let document = w
        .ports
        .store
        .document(&first.document_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(document.current_run_id, again.run_id);
    let old = w.ports.store.run(&first.run_id).await.unwrap().unwrap();
    assert_eq!((old.generation, old.status), (0, RunStatus::Completed));
}

#[tokio::test]
async fn a_batch_run_twice_starts_and_audits_each_run_once() {
    let w = world();
    let (first, batch) = completed_and_batched(&w).await;
    reprocess::start(&w.ports, &w.ctx, &batch, later(&w))
        .await
        .unwrap();
    let entries = w.entries(&first.document_id).await.len();
    let executions = w.ports.workflow.executions.lock().unwrap().len();

    let again = reprocess::start(&w.ports, &w.ctx, &batch, later(&w))
        .await
        .unwrap();

    assert_eq!(again[0].execution, Started::AlreadyExists);
    assert_eq!(w.entries(&first.document_id).await.len(), entries);
    assert_eq!(
        w.ports.workflow.executions.lock().unwrap().len(),
        executions
    );
}

#[tokio::test]
async fn a_batch_under_an_unpublished_config_starts_nothing() {
    let w = world();
    let (first, mut batch) = completed_and_batched(&w).await;
    batch.order.config_fingerprint = "cfg-never-published".into();
    let executions = w.ports.workflow.executions.lock().unwrap().len();

    let err = reprocess::start(&w.ports, &w.ctx, &batch, later(&w))
        .await
        .unwrap_err();

    assert_eq!(err.name(), "Fatal.Internal", "{err}");
    assert_eq!(
        w.ports.workflow.executions.lock().unwrap().len(),
        executions
    );
    let chain = w.chain_of(&first.document_id).await;
    assert!(
        !chain.contains(&"document.reprocessed".to_string()),
        "{chain:?}"
    );
}

#[tokio::test]
async fn a_generation_0_item_is_refused() {
    let w = world();
    let (_, mut batch) = completed_and_batched(&w).await;
    batch.items[0].generation = 0;

    let err = reprocess::start(&w.ports, &w.ctx, &batch, later(&w))
        .await
        .unwrap_err();

    assert_eq!(err.name(), "Fatal.BadInput", "{err}");
}

#[tokio::test]
async fn with_reocr_or_another_engine_the_provider_reads_the_document_again() {
    for case in ["reocr", "another engine"] {
        let w = world();
        let (_, mut batch) = completed_and_batched(&w).await;
        match case {
            "reocr" => batch.items[0].ocr = None,
            _ => {
                let stored = batch.items[0].ocr.clone().unwrap();
                let mut document = w.json(&stored).await;
                document["engine"] = serde_json::json!("another-ocr:1");
                let bytes = serde_json::to_vec(&document).unwrap();
                w.ports
                    .blobs
                    .put(&stored, bytes, "application/json")
                    .await
                    .unwrap();
            }
        }
        let started = reprocess::start(&w.ports, &w.ctx, &batch, later(&w))
            .await
            .unwrap();
        let input: RunInput = serde_json::from_value(
            w.ports.workflow.executions.lock().unwrap()[started[0].run_id.as_str()]["run"].clone(),
        )
        .unwrap();
        let jobs = w.ports.ocr.job_count();

        let (status, _) = w.run(&input).await.unwrap();

        assert_eq!(status, "completed", "{case}");
        assert_eq!(
            w.ports.ocr.job_count(),
            jobs + 1,
            "{case}: one new provider job"
        );
    }
}

#[tokio::test]
async fn a_line_naming_another_tenants_document_fails_its_batch_after_the_others_started() {
    let w = world();
    let (first, mut batch) = completed_and_batched(&w).await;
    let mut tampered = batch.items[0].clone();
    tampered.generation = 2;
    tampered.tenant = Tenant::parse("other").unwrap();
    batch.items.push(tampered);

    let err = reprocess::start(&w.ports, &w.ctx, &batch, later(&w))
        .await
        .unwrap_err();

    assert_eq!(err.name(), "Fatal.BadInput", "{err}");
    let message = err.to_string();
    assert!(message.contains("1 of 2 items failed"), "{message}");
    assert!(message.contains(first.document_id.as_str()), "{message}");
    // The valid line's run was started, and nothing under the other tenant.
    let run = batch.items[0].run_id(&batch.order.config_fingerprint);
    assert!(w.ports.store.run(&run).await.unwrap().is_some());
    let chain = w.chain_of(&first.document_id).await;
    let reprocessed = chain
        .iter()
        .filter(|a| *a == "document.reprocessed")
        .count();
    assert_eq!(reprocessed, 1, "{chain:?}");
}

fn olivia() -> Operator {
    Operator {
        id: "olivia".into(),
        principal: "arn:aws:sts::000000000000:assumed-role/docket-operator/olivia".into(),
    }
}

/// An operator's start of a reprocess of `acme`'s documents under the built-in config.
fn asked(w: &World) -> Start {
    Start {
        request: request(w),
        batch_size: 20,
        tolerated_failure_percentage: 10,
    }
}

/// Writes the manifest of `asked` (as `docket reprocess` does before it asks review-api).
async fn write_manifest(w: &World, asked: &Start) -> ObjectRef {
    let (_, batch) = completed_and_batched(w).await;
    let manifest = ObjectRef::new(
        &w.ctx.layout.derived_bucket,
        manifest_key(&asked.request.id()),
    );
    w.ports
        .blobs
        .put(
            &manifest,
            to_jsonl(&batch.items).into_bytes(),
            "application/jsonl",
        )
        .await
        .unwrap();
    manifest
}

#[tokio::test]
async fn an_operators_reprocess_starts_one_bulk_execution_that_names_them() {
    let w = world();
    let asked = asked(&w);
    let manifest = write_manifest(&w, &asked).await;

    let begun = reprocess::begin(&w.ports, &w.ctx, &olivia(), &asked)
        .await
        .unwrap();
    let again = reprocess::begin(&w.ports, &w.ctx, &olivia(), &asked)
        .await
        .unwrap();

    assert_eq!(begun.reprocess_id, asked.request.id());
    assert_eq!(
        (&begun.execution, &again.execution),
        (&Started::New, &Started::AlreadyExists)
    );
    let executions = w.ports.bulk.executions.lock().unwrap().clone();
    assert_eq!(executions.len(), 1, "{executions:?}");
    let input = &executions[begun.reprocess_id.as_str()];
    assert_eq!(input["requestedBy"]["operator"], "olivia");
    assert_eq!(input["requestedBy"]["principal"], olivia().principal);
    assert_eq!(input["reason"], "the total rule changed");
    assert_eq!(input["manifest"]["key"], manifest.key.as_str());
    assert_eq!(input["manifest"]["bucket"], manifest.bucket.as_str());
    assert_eq!(
        (
            input["batchSize"].clone(),
            input["toleratedFailurePercentage"].clone()
        ),
        (serde_json::json!(20), serde_json::json!(10))
    );
    let order: Order = serde_json::from_value(input.clone()).unwrap();
    assert_eq!(order.reprocess_id, begun.reprocess_id);
}

#[tokio::test]
async fn a_reprocess_without_its_manifest_its_config_or_sane_limits_starts_nothing() {
    let w = world();
    let no_manifest = asked(&w);
    let err = reprocess::begin(&w.ports, &w.ctx, &olivia(), &no_manifest)
        .await
        .unwrap_err();
    assert_eq!(err.name(), "Fatal.BadInput", "{err}");
    assert!(err.to_string().contains("no manifest"), "{err}");

    let mut unpublished = asked(&w);
    unpublished.request.config_fingerprint = "cfg-never-published".into();
    write_manifest(&w, &unpublished).await;
    let err = reprocess::begin(&w.ports, &w.ctx, &olivia(), &unpublished)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no config"), "{err}");

    for (batch_size, tolerated) in [(0, 0), (1001, 0), (20, 101)] {
        let mut limits = asked(&w);
        limits.batch_size = batch_size;
        limits.tolerated_failure_percentage = tolerated;
        let err = reprocess::begin(&w.ports, &w.ctx, &olivia(), &limits)
            .await
            .unwrap_err();
        assert_eq!(
            err.name(),
            "Fatal.BadInput",
            "{batch_size} {tolerated}: {err}"
        );
    }
    assert!(w.ports.bulk.executions.lock().unwrap().is_empty());
}

#[test]
fn a_start_cannot_name_who_asked() {
    let w = world();
    let mut body = serde_json::to_value(asked(&w)).unwrap();
    body["requestedBy"] = serde_json::json!({"operator": "mallory", "principal": "x"});
    assert!(serde_json::from_value::<Start>(body).is_err());
    let mut body = serde_json::to_value(asked(&w)).unwrap();
    body["request"]["requestedBy"] = serde_json::json!("mallory");
    assert!(serde_json::from_value::<Start>(body).is_err());
}

#[tokio::test]
async fn a_batch_at_its_deadline_starts_nothing_more_and_its_retry_starts_the_rest() {
    let w = world();
    let (first, batch) = completed_and_batched(&w).await;
    let executions = w.ports.workflow.executions.lock().unwrap().len();

    let err = reprocess::start(&w.ports, &w.ctx, &batch, w.ctx.clock.now())
        .await
        .unwrap_err();

    assert_eq!(err.name(), "Transient.InProgress", "{err}");
    assert!(err.to_string().contains("0 of 1 items tried"), "{err}");
    assert_eq!(
        w.ports.workflow.executions.lock().unwrap().len(),
        executions
    );
    let chain = w.chain_of(&first.document_id).await;
    assert!(!chain.contains(&"document.reprocessed".to_string()));

    let started = reprocess::start(&w.ports, &w.ctx, &batch, later(&w))
        .await
        .unwrap();
    assert_eq!(started[0].execution, Started::New);
}

#[tokio::test]
async fn a_batch_is_paced_until_its_runs_stop_working_or_the_limit_passed() {
    let w = world();
    let (_, batch) = completed_and_batched(&w).await;
    let started = reprocess::start(&w.ports, &w.ctx, &batch, later(&w))
        .await
        .unwrap();
    let runs = [started[0].run_id.clone()];
    let now = w.ctx.clock.now();

    let working = reprocess::pace(&w.ports, &w.ctx, &runs, now).await.unwrap();
    assert_eq!((working.working, working.done), (1, false));
    let limit = now - reprocess::PACING_LIMIT;
    let stuck = reprocess::pace(&w.ports, &w.ctx, &runs, limit)
        .await
        .unwrap();
    assert_eq!(
        (stuck.working, stuck.done),
        (1, true),
        "a stuck run frees the slot"
    );

    let input: RunInput = serde_json::from_value(
        w.ports.workflow.executions.lock().unwrap()[runs[0].as_str()]["run"].clone(),
    )
    .unwrap();
    let (status, _) = w.run(&input).await.unwrap();
    assert_eq!(status, "completed");
    let receipt = reprocess::pace(&w.ports, &w.ctx, &runs, now).await.unwrap();
    assert_eq!(
        (receipt.working, receipt.done),
        (1, false),
        "a completed run whose execution still waits for its receipt works"
    );
    let ended = runs[0].as_str().to_string();
    w.ports.workflow.ended.lock().unwrap().insert(ended);
    let ended = reprocess::pace(&w.ports, &w.ctx, &runs, now).await.unwrap();
    assert_eq!((ended.working, ended.done), (0, true));
}
