//! The Validate Task's wait: validate ends it for a document it approves, and hands its token
//! to the review task of one that needs a person.

use super::*;
use crate::steps::validate::{validate_and_wait, Wait};

impl World {
    /// Ingests `key` (the OCR reading every line at `confidence`), runs OCR, then validate as
    /// the Validate Task invokes it, with `tok`, twice when `twice` (a retried invocation).
    async fn validate_waiting(
        &self,
        key: &str,
        confidence: f64,
        tok: &str,
        twice: bool,
    ) -> Validated {
        let v = self.validated(key, "99.00", confidence).await;
        let wait = Wait {
            token: token(tok),
            timeout_seconds: 3600,
        };
        for _ in 0..1 + usize::from(twice) {
            let again = validate_and_wait(&self.ports, &self.ctx, &v.input, &v.ocr, wait.clone());
            assert_eq!(again.await.expect("validate").decision, v.decision);
        }
        v
    }
}

#[tokio::test]
async fn validate_ends_the_wait_of_a_document_it_approves_with_its_report_and_no_review() {
    let w = world();

    let v = w.validate_waiting(CLEAR, 0.97, "tok-auto", false).await;

    assert_eq!(v.decision, "auto_approve");
    let calls = w.ports.callback.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].0, "tok-auto");
    let approved = approved_of(&calls[0]);
    assert_eq!(approved.report, v.report);
    assert_eq!(approved.review, None);
    // The state machine reads `$.review`: it is there, as null.
    let output = calls[0].1.as_ref().unwrap();
    assert_eq!(output.get("review"), Some(&Value::Null), "{output}");
    assert!(w.ports.reviews.list(None, None).await.unwrap().is_empty());
}

#[tokio::test]
async fn validate_hands_the_wait_of_a_document_that_needs_a_person_to_its_review_task_once() {
    let w = world();

    let v = w.validate_waiting(BLURRY, 0.55, "tok-review", true).await;

    assert_eq!(v.decision, "needs_review");
    assert!(
        w.ports.callback.calls.lock().unwrap().is_empty(),
        "the wait goes on"
    );
    let tasks = w.ports.reviews.list(None, None).await.unwrap();
    assert_eq!(tasks.len(), 1, "a retried validation finds its task");
    assert_eq!((&tasks[0].report, &tasks[0].ocr), (&v.report, &v.ocr));
    let stored = w
        .ports
        .reviews
        .token(&tasks[0].task_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.expose(), "tok-review");
    assert_eq!(w.entries_of(&v.input, "review.opened").await.len(), 1);
    assert_eq!(
        w.entries_of(&v.input, "validation.completed").await.len(),
        1
    );

    // and the reviewer's approval ends the same wait, with the same report
    let decided = w.decide(&alice(), &tasks[0].task_id, &approve(&[])).await;
    assert_eq!(decided.expect("decided").status, ReviewStatus::Decided);
    let calls = w.ports.callback.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0, "tok-review");
    let approved = approved_of(&calls[0]);
    assert_eq!(approved.report, v.report);
    assert_eq!(approved.review.expect("reviewed").reviewer, "alice@acme");
}
