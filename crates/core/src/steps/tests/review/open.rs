//! Opening a review task, and the token staying server-side.

use super::*;

#[tokio::test]
async fn open_creates_one_pending_task_and_a_retried_open_only_stores_the_new_token() {
    // given a run awaiting review
    let w = world();
    let v = w.awaiting_review().await;

    // when the waiting Task opens its review, and a retry of the Task (a new attempt, a new
    // token, a new timeout, a minute later) opens it again
    let first = w.open(&v, "tok-1").await;
    let commits = w.commits();
    let retried = w.open_with(&w.later(60), &v, "tok-2", 7200).await.unwrap();

    // then there is one pending task of the run, showing the extracted fields and why
    // validation asked for a person, with one review.opened entry
    assert_eq!(first.task_id, crate::review::task_id_for(&v.input.run_id));
    assert_eq!(first.status, ReviewStatus::Pending);
    assert_eq!(first.tenant, v.input.tenant);
    assert_eq!(first.run_id, v.input.run_id);
    assert_eq!((&first.report, &first.ocr), (&v.report, &v.ocr));
    assert_eq!(first.document, v.input.raw);
    let total = &first.fields[&FieldName::TotalAmount];
    assert_eq!((total.value.as_str(), total.confidence), ("99.00", 0.55));
    assert!(
        matches!(total.source, FieldSource::Extracted { .. }),
        "{total:?}"
    );
    assert!(!first.reasons.is_empty());
    assert_eq!(first.created_at, "2026-11-30T12:00:00.000Z");
    assert_eq!(first.deadline, "2026-11-30T13:00:00.000Z");
    let opened = w.entries_of(&v.input, "review.opened").await;
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0].draft.detail["taskId"], first.task_id.as_str());
    assert_eq!(opened[0].draft.detail["deadline"], first.deadline.as_str());
    let codes: Vec<&str> = first.reasons.iter().map(|r| r.code.as_str()).collect();
    assert_eq!(opened[0].draft.detail["reasons"], serde_json::json!(codes));
    // and the retry keeps the task (its creation) but waits until the new deadline under
    // the new token, writing no second entry
    assert_eq!(retried.task_id, first.task_id);
    assert_eq!(retried.created_at, first.created_at);
    assert_eq!(retried.deadline, "2026-11-30T14:01:00.000Z");
    assert_eq!(
        w.ports.reviews.list(None, None).await.unwrap(),
        vec![retried]
    );
    let stored = w
        .ports
        .reviews
        .token(&first.task_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.expose(), "tok-2");
    assert_eq!(w.commits(), commits, "the retry wrote no audit entry");
    assert_eq!(w.entries_of(&v.input, "review.opened").await.len(), 1);
    assert_eq!(w.status(&v.input).await, RunStatus::AwaitingReview);
}

#[tokio::test]
async fn an_open_after_the_decision_writes_nothing_and_keeps_the_deciding_token() {
    // given a task decided (and delivered) under the first token
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    w.decide(&alice(), &task.task_id, &approve(&[]))
        .await
        .unwrap();
    let chain = w.chain_of(&v.input.document_id).await;

    // when an open comes again with another token
    let again = w.open(&v, "tok-2").await;

    // then it returns the task as decided; no token, task or entry was written
    assert_eq!(again.status, ReviewStatus::Decided);
    assert_eq!(again, w.task(&task.task_id).await);
    let stored = w.ports.reviews.token(&task.task_id).await.unwrap().unwrap();
    assert_eq!(stored.expose(), "tok-1");
    assert_eq!(w.chain_of(&v.input.document_id).await, chain);
}

#[tokio::test]
async fn open_refuses_a_run_that_does_not_need_review_and_writes_nothing() {
    // given a run whose clear OCR was auto-approved
    let w = world();
    let v = w.validated(CLEAR, "10.00", 0.97).await;
    assert_eq!(v.decision, "auto_approve");
    let commits = w.commits();

    // when a review is opened for it
    let err = w.open_with(&w.ctx, &v, "tok-1", 3600).await.unwrap_err();
    let no_time = world();
    let blurry = no_time.awaiting_review().await;
    let zero = no_time
        .open_with(&no_time.ctx, &blurry, "tok-1", 0)
        .await
        .unwrap_err();

    // then it is bad input, and neither a task nor an entry exists (nor for a timeout that
    // leaves no time to decide)
    assert_eq!(err.name(), "Fatal.BadInput");
    assert_eq!(zero.name(), "Fatal.BadInput");
    assert!(w.ports.reviews.list(None, None).await.unwrap().is_empty());
    assert!(no_time
        .ports
        .reviews
        .list(None, None)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(w.commits(), commits);
    assert!(no_time
        .entries_of(&blurry.input, "review.opened")
        .await
        .is_empty());
}

#[tokio::test]
async fn the_token_never_appears_in_the_audit_log_the_task_or_an_error() {
    // given distinctive tokens through every path that writes: an open, a retried open,
    // an approval delivered; another run opened, approved too late, and escalated
    let w = world();
    let secrets = [
        "AAAA-token-one-7f3c9e1b",
        "AAAA-token-two-52d8a640",
        "AAAA-token-three-e19b77c2",
    ];
    let v = w.awaiting_review().await;
    let task = w.open(&v, secrets[0]).await;
    w.open(&v, secrets[1]).await;
    w.decide(
        &alice(),
        &task.task_id,
        &approve(&[("total_amount", "120.00")]),
    )
    .await
    .unwrap();
    let late = w.validated("inbox/acme/late.png", "42.00", 0.55).await;
    assert_eq!(late.decision, "needs_review");
    let late_task = w.open(&late, secrets[2]).await;
    w.ports
        .callback
        .closed
        .lock()
        .unwrap()
        .push(secrets[2].into());
    let expired = w
        .decide(&bob(), &late_task.task_id, &reject("blurry"))
        .await
        .unwrap_err();
    w.escalate_with(&w.ctx, &late.input).await.unwrap();
    let refused = w
        .decide(&alice(), &late_task.task_id, &approve(&[]))
        .await
        .unwrap_err();

    // when every audit entry, task and error is serialized or printed
    let mut texts = Vec::new();
    for input in [&v.input, &late.input] {
        for entry in w.entries(&input.document_id).await {
            texts.push(serde_json::to_string(&entry).unwrap());
            texts.push(format!("{entry:?}"));
        }
    }
    for t in w.ports.reviews.list(None, None).await.unwrap() {
        texts.push(serde_json::to_string(&t).unwrap());
        texts.push(format!("{t:?}"));
    }
    for err in [&expired, &refused] {
        texts.push(err.to_string());
        texts.push(format!("{err:?}"));
    }
    texts.push(format!("{:?}", w.ports.reviews));

    // then no text holds a token (the callbacks did get them: they are the only way out)
    assert!(texts.len() > 20);
    for text in &texts {
        for secret in secrets {
            assert!(!text.contains(secret), "token in {text}");
        }
    }
    assert_eq!(w.calls().len(), 1);
    assert_eq!(w.calls()[0].0, secrets[1]);
}
