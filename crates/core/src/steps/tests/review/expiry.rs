//! A decision the workflow no longer waits for, and a review not decided in time.

use super::*;

#[tokio::test]
async fn a_decision_the_workflow_no_longer_waits_for_expires_the_task_and_keeps_the_decision() {
    // given a pending task whose Task timed out in Step Functions: its token is closed
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    w.ports.callback.closed.lock().unwrap().push("tok-1".into());

    // when alice approves it
    let err = w
        .decide(
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", "120.00")]),
        )
        .await
        .unwrap_err();

    // then she is told it expired; the task is expired with her decision kept, undelivered
    assert_eq!(err.name(), "Conflict.ReviewExpired");
    let message = err.to_string();
    assert!(
        message.contains("alice@acme") && message.contains("TaskTimedOut"),
        "{message}"
    );
    let expired = w.task(&task.task_id).await;
    assert_eq!(expired.status, ReviewStatus::Expired);
    let decision = expired.decision.as_ref().expect("the decision is kept");
    assert_eq!(decision.reviewer, alice());
    assert!(decision.is_approval());
    assert!(expired.delivered_at.is_none());
    assert_eq!(expired.expiry.as_ref().unwrap().reason, "TaskTimedOut");
    assert!(w.calls().is_empty(), "no callback was accepted");
    // and the audit log has the approval, then its expiry naming who decided
    let chain = w.chain_of(&v.input.document_id).await;
    assert_eq!(
        &chain[chain.len() - 3..],
        ["review.opened", "review.approved", "review.expired"]
    );
    let entry = &w.entries_of(&v.input, "review.expired").await[0];
    assert_eq!(entry.draft.detail["taskId"], task.task_id.as_str());
    assert_eq!(entry.draft.detail["reason"], "TaskTimedOut");
    assert_eq!(entry.draft.detail["decidedBy"], "alice@acme");
    assert_eq!(w.status(&v.input).await, RunStatus::AwaitingReview);

    // and when bob then rejects it, he is told it expired; nothing more is written
    let commits = w.commits();
    let late = w
        .decide(&bob(), &task.task_id, &reject("too late"))
        .await
        .unwrap_err();
    assert_eq!(late.name(), "Conflict.ReviewExpired");
    assert_eq!(w.commits(), commits);
    assert_eq!(w.task(&task.task_id).await, expired);
}

#[tokio::test]
async fn a_review_not_decided_in_time_is_escalated_to_its_owner_once_and_cannot_be_approved() {
    // given a pending task
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;

    // when the wait times out (and the escalation is retried)
    w.escalate_with(&w.ctx, &v.input).await.unwrap();
    w.escalate_with(&w.ctx, &v.input).await.unwrap();

    // then the task expired on the workflow's timeout, without a decision, and the run is
    // escalated to the configured owner with one entry
    let expired = w.task(&task.task_id).await;
    assert_eq!(expired.status, ReviewStatus::Expired);
    assert_eq!(expired.expiry.as_ref().unwrap().reason, "States.Timeout");
    assert!(expired.decision.is_none());
    let run = w.ports.store.run(&v.input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Escalated);
    assert_eq!(run.error.as_deref(), Some("States.Timeout"));
    let escalated = w.entries_of(&v.input, "review.escalated").await;
    assert_eq!(escalated.len(), 1);
    let owner = &w.ctx.config.ledger.unresolved_owner;
    assert!(!owner.is_empty());
    assert_eq!(escalated[0].draft.detail["owner"], owner.as_str());
    assert_eq!(escalated[0].draft.detail["taskId"], task.task_id.as_str());

    // and when alice approves it later, and the escalation runs once more after that
    let late = w
        .decide(
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", "120.00")]),
        )
        .await
        .unwrap_err();
    w.escalate_with(&w.later(600), &v.input).await.unwrap();

    // then she is told it expired; no callback, no decision, still one escalation
    assert_eq!(late.name(), "Conflict.ReviewExpired");
    assert!(late.to_string().contains("States.Timeout"), "{late}");
    assert!(w.calls().is_empty());
    assert_eq!(w.task(&task.task_id).await, expired);
    assert!(w.entries_of(&v.input, "review.approved").await.is_empty());
    assert_eq!(w.entries_of(&v.input, "review.escalated").await.len(), 1);
    assert_eq!(w.status(&v.input).await, RunStatus::Escalated);
}
