//! What a browser review page asks review-api besides the task: who the caller is, the task's
//! document (a presigned URL), where its fields were read, and whether corrections would pass.

use super::*;
use docket_core::ocr::OcrDocument;
use docket_core::ports::BlobStore;
use docket_core::review::{ReviewStatus, TaskId};

const MALLORY: &str = "arn:aws:sts::111122223333:assumed-role/docket-reviewer-other/mallory";

impl World {
    /// The stored OCR of task `id`.
    async fn task_ocr(&self, id: &str) -> OcrDocument {
        let task = self.ports.reviews.get(&TaskId::parse(id).unwrap()).await;
        let bytes = self.ports.blobs.get(&task.unwrap().unwrap().ocr).await;
        serde_json::from_slice(&bytes.unwrap()).unwrap()
    }
}

#[tokio::test]
async fn a_reviewer_gets_who_they_are_the_document_url_and_the_evidence_of_their_tenants_task() {
    let w = world();
    let (_, task_id) = w.awaiting_review("inbox/acme/pages.png").await;

    let me = w.api(Some(ALICE), "GET", "/me", json!(null)).await;
    let document = format!("/tasks/{task_id}/document");
    let document = w.api(Some(ALICE), "GET", &document, json!(null)).await;
    let evidence = format!("/tasks/{task_id}/evidence");
    let evidence = w.api(Some(ALICE), "GET", &evidence, json!(null)).await;

    assert_eq!(me, (200, json!({"reviewer": "alice", "tenant": "acme"})));
    assert_eq!(
        document,
        (
            200,
            json!({
                "url": "memory://raw/inbox/acme/pages.png?versionId=v1&expiresIn=300",
                "expiresInSeconds": 300
            })
        )
    );
    // "Invoice Date: 2026-11-02" is line 3 of page 1: the date is its third word.
    let ocr = w.task_ocr(&task_id).await;
    let date_word = ocr.pages[0].lines[3].words[2].bbox;
    assert_eq!(evidence.0, 200, "{}", evidence.1);
    assert_eq!(evidence.1["pages"], json!([{"number": 1}]));
    assert_eq!(
        evidence.1["fields"]["invoice_date"],
        json!({"page": 1, "box": date_word})
    );
}

#[tokio::test]
async fn another_tenants_task_is_not_found_on_every_route_as_an_unknown_one_is() {
    let w = world();
    let (_, task_id) = w.awaiting_review("inbox/acme/hidden.png").await;
    let unknown = "rev-00000000000000000000000000000000";
    let check = json!({"set": {"invoice_date": "2026-11-02"}});

    for (method, route, body) in [
        ("GET", "document", json!(null)),
        ("GET", "evidence", json!(null)),
        ("POST", "check", check),
    ] {
        let theirs = format!("/tasks/{task_id}/{route}");
        let missing = format!("/tasks/{unknown}/{route}");
        let (status, hidden) = w.api(Some(MALLORY), method, &theirs, body.clone()).await;
        let (missing_status, missing) = w.api(Some(ALICE), method, &missing, body.clone()).await;
        let (mine, _) = w.api(Some(ALICE), method, &theirs, body).await;

        assert_eq!(
            (status, hidden["error"].as_str()),
            (404, Some("Business.ReviewNotFound")),
            "{route}: {hidden}"
        );
        assert_eq!((missing_status, &missing["error"]), (404, &hidden["error"]));
        assert!(
            !hidden.to_string().contains("memory://"),
            "{route}: {hidden}"
        );
        assert_eq!(mine, 200, "{route}");
    }
    let (_, mallory) = w.api(Some(MALLORY), "GET", "/me", json!(null)).await;
    assert_eq!(mallory, json!({"reviewer": "mallory", "tenant": "other"}));
}

#[tokio::test]
async fn a_check_answers_what_the_decision_would_and_decides_nothing() {
    let w = world();
    let (_, task_id) = w.awaiting_review("inbox/acme/checked.png").await;
    let id = TaskId::parse(&task_id).unwrap();
    let check = format!("/tasks/{task_id}/check");
    let decision = format!("/tasks/{task_id}/decision");
    let bad = json!({"invoice_date": "02/11/2026"});

    let refused = w
        .api(Some(ALICE), "POST", &check, json!({"set": bad}))
        .await;
    let unknown = json!({"set": {"due_date": "2026-12-01"}});
    let unknown = w.api(Some(ALICE), "POST", &check, unknown).await;
    let good = json!({"set": {"invoice_date": "2026-11-02", "total_amount": "99.00"}});
    let accepted = w.api(Some(ALICE), "POST", &check, good).await;

    assert_eq!(refused.0, 400, "{}", refused.1);
    assert_eq!(refused.1["error"], "Fatal.BadInput");
    assert!(refused.1["message"]
        .as_str()
        .unwrap()
        .contains("invoice_date"));
    assert!(
        !refused.1.to_string().contains("02/11/2026"),
        "no value echoed"
    );
    // the refused field named apart from the message, for the page to mark
    assert_eq!(refused.1["field"], "invoice_date", "{}", refused.1);
    assert_eq!(unknown.0, 400, "{}", unknown.1);
    assert_eq!(unknown.1["field"], "due_date", "{}", unknown.1);
    assert_eq!(accepted, (200, json!({"ok": true})));
    // Nothing was decided, sent or recorded.
    let task = w.ports.reviews.get(&id).await.unwrap().unwrap();
    assert_eq!(task.status, ReviewStatus::Pending);
    assert!(task.decision.is_none());
    assert!(w.ports.callback.calls.lock().unwrap().is_empty());
    let audit = w
        .ports
        .store
        .audit_entries(&task.document_id)
        .await
        .unwrap();
    assert!(!audit.iter().any(|e| e.draft.action.starts_with("review.a")));

    // The decision with the same corrections gets the very same refusal.
    let decided = json!({"verdict": "approve", "set": bad});
    assert_eq!(
        w.api(Some(ALICE), "POST", &decision, decided).await,
        refused
    );

    // A decided task still checks: the page shows its state beside the answer.
    let approve = json!({"verdict": "approve"});
    assert_eq!(w.api(Some(ALICE), "POST", &decision, approve).await.0, 200);
    let again = json!({"set": {"invoice_date": "2026-11-02"}});
    assert_eq!(
        w.api(Some(ALICE), "POST", &check, again).await,
        (200, json!({"ok": true}))
    );
}
