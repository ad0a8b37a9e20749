//! A bulk reprocess's batch: new runs of the next generation beside the old ones, audited with
//! the reason, started once however often the batch runs.

use super::*;
use crate::ids::Tenant;
use crate::reprocess::{plan, Batch, Order, Request};
use crate::steps::reprocess;

/// A batch reprocessing the document of `ocr_ready` (already run to completion) under the
/// built-in config.
async fn completed_and_batched(w: &World) -> (RunInput, Batch) {
    let first = w.ocr_ready().await;
    let (status, _) = w.run(&first).await.unwrap();
    assert_eq!(status, "completed");
    let current = w.ports.store.run(&first.run_id).await.unwrap().unwrap();
    let request = Request {
        tenant: Tenant::parse("acme").unwrap(),
        prefix: None,
        since: None,
        config_fingerprint: w.ctx.config.fingerprint(),
        reason: "the total rule changed".into(),
        reocr: false,
    };
    let runs = [current];
    let items = plan(
        &request,
        |r| w.ctx.layout.ocr(&r.tenant, &r.document_id, &r.run_id),
        [(&first.run_id, &runs[..])],
    );
    let order = Order {
        reprocess_id: request.id(),
        reason: request.reason.clone(),
        requested_by: "arn:aws:sts::000000000000:assumed-role/ops/alice".into(),
        config_fingerprint: request.config_fingerprint.clone(),
    };
    (first, Batch { items, order })
}

#[tokio::test]
async fn a_reprocessed_document_runs_again_as_generation_1_beside_its_first_run() {
    let w = world();
    let (first, batch) = completed_and_batched(&w).await;

    let started = reprocess::start(&w.ports, &w.ctx, &batch).await.unwrap();

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
    assert_eq!(
        last.draft.detail["requestedByClaim"],
        batch.order.requested_by
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
    reprocess::start(&w.ports, &w.ctx, &batch).await.unwrap();
    let entries = w.entries(&first.document_id).await.len();
    let executions = w.ports.workflow.executions.lock().unwrap().len();

    let again = reprocess::start(&w.ports, &w.ctx, &batch).await.unwrap();

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

    let err = reprocess::start(&w.ports, &w.ctx, &batch)
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

    let err = reprocess::start(&w.ports, &w.ctx, &batch)
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
        let started = reprocess::start(&w.ports, &w.ctx, &batch).await.unwrap();
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

    let err = reprocess::start(&w.ports, &w.ctx, &batch)
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
