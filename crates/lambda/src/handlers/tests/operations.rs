//! The operators' endpoint of review-api: `POST /operations/{id}/resolution`, by the verified
//! operator only.

use super::*;
use docket_core::ledger::LedgerStatus;
use docket_core::model::step::Step;
use docket_core::ports::Ledger;

const OLIVIA: &str = "arn:aws:sts::111122223333:assumed-role/docket-operator/olivia";

impl World {
    /// An upload read as a job (a TIFF: `key` ends with `.tif`) whose OCR start kept losing its
    /// answers until the operation was unresolved: its run id and operation id.
    async fn unresolved(&self, key: &str) -> (String, String) {
        let state = self.ingested(key, 0.97).await;
        *self.ports.ocr.lose_start_answers.lock().unwrap() = 10;
        for _ in 0..self.ctx.config.ledger.max_ambiguous_attempts {
            let start = parse(payload("StartOcr", &state)).unwrap();
            assert!(ocr::handle(&self.ports, &self.ctx, start).await.is_err());
        }
        let run = state["run"]["runId"].as_str().unwrap().to_string();
        let op = Step::Ocr.operation(&RunId::parse(&run).unwrap());
        let rec = self.ports.store.ledger.get(&op).await.unwrap().unwrap();
        assert_eq!(rec.status, LedgerStatus::Unresolved, "the setup's premise");
        (run, op.as_str().to_string())
    }
}

#[tokio::test]
async fn only_an_operator_resolves_an_operation_and_only_once() {
    let w = world();
    let (run, op) = w.unresolved("inbox/acme/lost.tif").await;
    let path = format!("/operations/{op}/resolution");
    let body = json!({"runId": run, "note": "no Textract job with that token; re-uploaded"});

    let unsigned = w.api(None, "POST", &path, body.clone()).await;
    let reviewer = w.api(Some(ALICE), "POST", &path, body.clone()).await;
    let smuggled = json!({"runId": run, "note": "x", "resolvedBy": "mallory"});
    let forged = w.api(Some(OLIVIA), "POST", &path, smuggled).await;
    let (first, resolved) = w.api(Some(OLIVIA), "POST", &path, body.clone()).await;
    let (second, refused) = w.api(Some(OLIVIA), "POST", &path, body).await;
    let as_reviewer = w.api(Some(OLIVIA), "GET", "/tasks", json!(null)).await;

    assert_eq!((unsigned.0, reviewer.0, forged.0), (403, 403, 400));
    assert_eq!(first, 200, "{resolved}");
    assert_eq!(resolved["resolvedBy"], "olivia");
    assert_eq!(resolved["runWas"], "unresolved");
    assert_eq!(
        (second, refused["error"].as_str()),
        (409, Some("Conflict.AlreadyDecided"))
    );
    assert_eq!(as_reviewer.0, 403, "an operator is not a reviewer");
    let run = w
        .ports
        .store
        .run(&RunId::parse(&run).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.status, RunStatus::Resolved);
}

#[tokio::test]
async fn only_an_operator_starts_a_reprocess_and_it_names_the_signed_operator() {
    use docket_core::model::run::ObjectRef;
    use docket_core::ports::BlobStore;
    use docket_core::reprocess::{manifest_key, Request};

    let w = world();
    let request = Request {
        tenant: docket_core::ids::Tenant::parse("acme").unwrap(),
        prefix: None,
        since: None,
        config_fingerprint: w.ctx.config.fingerprint(),
        reason: "the total rule changed".into(),
        reocr: false,
    };
    let body = json!({"request": request, "batchSize": 20, "toleratedFailurePercentage": 0});
    let manifest = ObjectRef::new(&w.ctx.layout.derived_bucket, manifest_key(&request.id()));
    let without_manifest = w
        .api(Some(OLIVIA), "POST", "/reprocesses", body.clone())
        .await;
    w.ports
        .blobs
        .put(&manifest, b"{}\n".to_vec(), "application/jsonl")
        .await
        .unwrap();

    let unsigned = w.api(None, "POST", "/reprocesses", body.clone()).await;
    let reviewer = w
        .api(Some(ALICE), "POST", "/reprocesses", body.clone())
        .await;
    let mut smuggled = body.clone();
    smuggled["requestedBy"] = json!({"operator": "mallory", "principal": OLIVIA});
    let forged = w.api(Some(OLIVIA), "POST", "/reprocesses", smuggled).await;
    let (first, started) = w
        .api(Some(OLIVIA), "POST", "/reprocesses", body.clone())
        .await;
    let (second, again) = w.api(Some(OLIVIA), "POST", "/reprocesses", body).await;

    assert_eq!(without_manifest.0, 400, "{}", without_manifest.1);
    assert_eq!((unsigned.0, reviewer.0, forged.0), (403, 403, 400));
    assert_eq!(first, 200, "{started}");
    assert_eq!(
        (&started["started"], &started["requestedBy"]["operator"]),
        (&json!(true), &json!("olivia"))
    );
    assert_eq!((second, &again["started"]), (200, &json!(false)));
    let executions = w.ports.bulk.executions.lock().unwrap().clone();
    assert_eq!(executions.len(), 1, "one bulk execution: {executions:?}");
    let input = &executions[request.id().as_str()];
    assert_eq!(input["requestedBy"]["operator"], "olivia");
    assert_eq!(input["requestedBy"]["principal"], OLIVIA);
}
