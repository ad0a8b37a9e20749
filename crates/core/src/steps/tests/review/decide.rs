//! Deciding a task: approvals and rejections routed, the first decision winning, bad
//! corrections.

use super::*;

#[tokio::test]
async fn an_approval_with_a_corrected_total_resumes_the_workflow_once_and_routes_the_correction() {
    // given a pending task of tenant acme whose total was read as 99.00 at 0.55
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;

    // when alice of acme approves it, setting the total to 120.00
    let decided = w
        .decide(
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", " 120.00 ")]),
        )
        .await
        .unwrap();

    // then the task is decided by her and delivered
    assert_eq!(decided.status, ReviewStatus::Decided);
    assert!(decided.delivered_at.is_some());
    assert_eq!(decided, w.task(&task.task_id).await);
    let decision = decided.decision.as_ref().unwrap();
    assert_eq!(decision.reviewer, alice());
    let Verdict::Approve { corrections, .. } = &decision.verdict else {
        panic!("not an approval: {decision:?}")
    };
    assert_eq!(
        corrections,
        &BTreeMap::from([(FieldName::TotalAmount, "120.00".to_string())])
    );
    // and the workflow was resumed exactly once, under the task's token, with the fields
    // to route: the corrected total set by alice, the rest as extracted
    let calls = w.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].0, "tok-1");
    let reviewed = reviewed_of(&calls[0]);
    assert_eq!(reviewed.task_id, task.task_id);
    assert_eq!(reviewed.reviewer, "alice@acme");
    let total = &reviewed.fields[&FieldName::TotalAmount];
    assert_eq!(total.value, "120.00");
    assert_eq!(total.confidence, 1.0);
    assert_eq!(
        total.source,
        FieldSource::Reviewer {
            id: "alice@acme".into()
        }
    );
    for (name, field) in &task.fields {
        if *name != FieldName::TotalAmount {
            assert_eq!(&reviewed.fields[name], field, "{name} kept as extracted");
        }
    }
    assert_eq!(Some(reviewed.fields.clone()), decided.approved_fields());
    // and the audit log has one review.approved entry naming the changed field, without
    // its values
    let approved = w.entries_of(&v.input, "review.approved").await;
    assert_eq!(approved.len(), 1);
    let detail = &approved[0].draft.detail;
    assert_eq!(detail["taskId"], task.task_id.as_str());
    assert_eq!(detail["reviewer"], "alice@acme");
    assert_eq!(detail["verdict"], "approve");
    let changed: Vec<&Value> = detail["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["field"])
        .collect();
    assert_eq!(changed, ["total_amount"]);
    assert_eq!(detail["changes"][0]["confidenceBefore"], 0.55);
    assert_eq!(detail["changes"][0]["confidenceAfter"], 1.0);
    let text = detail.to_string();
    assert!(
        !text.contains("120.00") && !text.contains("99.00"),
        "values in the audit detail: {text}"
    );

    // when route continues with the reviewed fields
    let routed = route::run(&w.ports, &w.ctx, &v.input, &v.report, Some(&reviewed))
        .await
        .unwrap();

    // then result.json carries the reviewer's decision and corrected total, and the run
    // moved from awaiting_review to completed as the document's current result
    assert_eq!(routed.status, "completed");
    assert_eq!(
        routed.result,
        w.ctx
            .layout
            .result(&v.input.tenant, &v.input.document_id, &v.input.run_id)
    );
    let result: Value =
        serde_json::from_slice(&w.ports.blobs.get(&routed.result).await.unwrap()).unwrap();
    assert_eq!(result["decision"], "approved_by_reviewer");
    assert_eq!(result["reviewer"], "alice@acme");
    assert_eq!(result["reviewTask"], task.task_id.as_str());
    assert_eq!(result["fields"]["total_amount"]["value"], "120.00");
    assert_eq!(result["fields"]["total_amount"]["confidence"], 1.0);
    assert_eq!(
        result["fields"]["total_amount"]["source"]["kind"],
        "reviewer"
    );
    assert_eq!(result["fields"]["invoice_number"]["value"], "INV-2026-0042");
    let run = w.ports.store.run(&v.input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.outputs["result"], routed.result.to_string());
    let doc = w
        .ports
        .store
        .document(&v.input.document_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(doc.current_run_id, v.input.run_id);
    assert_eq!(
        w.chain_of(&v.input.document_id).await,
        [
            "document.accepted",
            "ocr.started",
            "ocr.completed",
            "validation.completed",
            "review.opened",
            "review.approved",
            "run.completed",
            "event.published"
        ]
    );
}

#[tokio::test]
async fn a_rejection_fails_the_workflow_once_and_the_run_ends_rejected_without_a_result() {
    // given a pending task
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;

    // when alice rejects it, and the workflow records the rejection (twice: a retry)
    let decided = w
        .decide(&alice(), &task.task_id, &reject("not one of our suppliers"))
        .await
        .unwrap();
    route::reject(&w.ports, &w.ctx, &v.input).await.unwrap();
    route::reject(&w.ports, &w.ctx, &v.input).await.unwrap();

    // then the task is decided and delivered, the workflow was failed once with
    // Business.ReviewRejected, and the run is rejected with no result
    assert_eq!(decided.status, ReviewStatus::Decided);
    assert!(decided.delivered_at.is_some());
    assert!(!decided.decision.as_ref().unwrap().is_approval());
    assert_eq!(
        w.calls(),
        [(
            "tok-1".to_string(),
            Err("Business.ReviewRejected".to_string())
        )]
    );
    let run = w.ports.store.run(&v.input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Rejected);
    assert_eq!(run.error.as_deref(), Some("Business.ReviewRejected"));
    assert!(w.results().is_empty(), "{:?}", w.results());
    assert!(w
        .ports
        .store
        .document(&v.input.document_id)
        .await
        .unwrap()
        .is_none());
    let chain = w.chain_of(&v.input.document_id).await;
    assert_eq!(
        &chain[chain.len() - 3..],
        ["review.opened", "review.rejected", "run.rejected"]
    );
    let rejected = &w.entries_of(&v.input, "review.rejected").await[0];
    assert_eq!(rejected.draft.detail["verdict"], "reject");
    assert!(
        !rejected.draft.detail.to_string().contains("suppliers"),
        "the reason is content: it stays in the review record"
    );
}

#[tokio::test]
async fn route_refuses_a_run_awaiting_review_without_its_review_and_a_review_without_need() {
    // given a run awaiting review and an auto-approved one
    let w = world();
    let blurry = w.awaiting_review().await;
    let clear = w.validated(CLEAR, "10.00", 0.97).await;
    let reviewed = Reviewed {
        task_id: crate::review::task_id_for(&clear.input.run_id),
        reviewer: "alice@acme".into(),
        fields: BTreeMap::new(),
    };

    // when route is called for the first without a review, and the second with one
    let unreviewed = route::run(&w.ports, &w.ctx, &blurry.input, &blurry.report, None).await;
    let needless = route::run(
        &w.ports,
        &w.ctx,
        &clear.input,
        &clear.report,
        Some(&reviewed),
    )
    .await;

    // then both are bad input, and no result was written
    assert_eq!(unreviewed.unwrap_err().name(), "Fatal.BadInput");
    assert_eq!(needless.unwrap_err().name(), "Fatal.BadInput");
    assert!(w.results().is_empty());
    assert_eq!(w.status(&blurry.input).await, RunStatus::AwaitingReview);
    assert_eq!(w.status(&clear.input).await, RunStatus::Started);
}

#[tokio::test]
async fn a_rejection_after_an_approval_is_already_decided_naming_the_first_reviewer() {
    // given a task approved by alice
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    let approved = w
        .decide(
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", "120.00")]),
        )
        .await
        .unwrap();
    let commits = w.commits();

    // when bob rejects it
    let err = w
        .decide(&bob(), &task.task_id, &reject("looks wrong"))
        .await
        .unwrap_err();

    // then he is told who decided first; her approval stands, one callback in all
    assert_eq!(err.name(), "Conflict.AlreadyDecided");
    let message = err.to_string();
    assert!(message.contains("approved by alice@acme"), "{message}");
    assert!(!message.contains("120.00"), "{message}");
    assert_eq!(w.task(&task.task_id).await, approved);
    assert_eq!(w.calls().len(), 1);
    assert!(w.calls()[0].1.is_ok());
    assert_eq!(w.commits(), commits, "nothing written");
    assert!(w.entries_of(&v.input, "review.rejected").await.is_empty());
}

#[tokio::test]
async fn a_second_approval_with_other_corrections_is_already_decided_and_changes_nothing() {
    // given a task approved by alice with the total 120.00
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    let first = w
        .decide(
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", "120.00")]),
        )
        .await
        .unwrap();

    // when bob, and then alice herself, approve with other corrections
    let by_bob = w
        .decide(
            &bob(),
            &task.task_id,
            &approve(&[("total_amount", "130.00")]),
        )
        .await
        .unwrap_err();
    let by_alice = w
        .decide(
            &alice(),
            &task.task_id,
            &approve(&[("total_amount", "120.00"), ("currency", "USD")]),
        )
        .await
        .unwrap_err();

    // then both are told it was approved by alice; the first correction is the one
    // recorded and sent, once
    for err in [&by_bob, &by_alice] {
        assert_eq!(err.name(), "Conflict.AlreadyDecided");
        assert!(err.to_string().contains("approved by alice@acme"), "{err}");
    }
    assert_eq!(w.task(&task.task_id).await, first);
    let calls = w.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let reviewed = reviewed_of(&calls[0]);
    assert_eq!(reviewed.fields[&FieldName::TotalAmount].value, "120.00");
    assert_eq!(reviewed.fields[&FieldName::Currency].value, "EUR");
    assert_eq!(w.entries_of(&v.input, "review.approved").await.len(), 1);
}

#[tokio::test]
async fn a_reviewer_of_another_tenant_is_told_not_found_and_nothing_is_written() {
    // given a pending task of tenant acme
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    let commits = w.commits();
    let mallory = reviewer("mallory@globex", "globex");

    // when a reviewer of globex approves it, rejects it, and decides a task that does not
    // exist
    let approved = w
        .decide(
            &mallory,
            &task.task_id,
            &approve(&[("total_amount", "1.00")]),
        )
        .await
        .unwrap_err();
    let rejected = w
        .decide(&mallory, &task.task_id, &reject("mine now"))
        .await
        .unwrap_err();
    let missing_id = crate::review::task_id_for(
        &w.validated("inbox/globex/x.png", "1.00", 0.97)
            .await
            .input
            .run_id,
    );
    let commits_after_missing_run = w.commits();
    let missing = w
        .decide(&mallory, &missing_id, &reject("mine now"))
        .await
        .unwrap_err();

    // then the answer is the same as for a task that does not exist, and nothing moved
    for err in [&approved, &rejected, &missing] {
        assert_eq!(err.name(), "Business.ReviewNotFound");
    }
    assert_eq!(
        approved.to_string(),
        missing
            .to_string()
            .replace(missing_id.as_str(), task.task_id.as_str())
    );
    let recorded = w.task(&task.task_id).await;
    assert_eq!(recorded.status, ReviewStatus::Pending);
    assert!(recorded.decision.is_none());
    assert!(w.calls().is_empty());
    assert_eq!(w.commits() - commits, commits_after_missing_run - commits);
    assert_eq!(
        w.chain_of(&v.input.document_id)
            .await
            .last()
            .map(String::as_str),
        Some("review.opened")
    );
}

#[tokio::test]
async fn corrections_that_do_not_parse_are_bad_input_and_leave_the_task_pending() {
    // given a pending task
    let w = world();
    let v = w.awaiting_review().await;
    let task = w.open(&v, "tok-1").await;
    let commits = w.commits();

    // when alice approves with a total that is not an amount, an unknown field, an empty
    // value, a currency nobody knows, or rejects without a reason
    let cases = [
        approve(&[("total_amount", "abc")]),
        approve(&[("tip_amount", "5.00")]),
        approve(&[("total_amount", "   ")]),
        approve(&[("currency", "ZZZ")]),
        approve(&[("total_amount", "120.00"), ("total", "120.00")]),
        reject("  "),
    ];
    for request in &cases {
        let err = w
            .decide(&alice(), &task.task_id, request)
            .await
            .unwrap_err();

        // then each is Fatal.BadInput, naming the field but not the value
        assert_eq!(err.name(), "Fatal.BadInput", "{request:?}");
        let message = err.to_string();
        assert!(
            !message.contains("abc") && !message.contains("ZZZ"),
            "{message}"
        );
    }
    let err = w
        .decide(&alice(), &task.task_id, &cases[0])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("total_amount"), "{err}");
    let err = w
        .decide(&alice(), &task.task_id, &cases[1])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("tip_amount"), "{err}");
    // and the task is still pending and undecided: no callback, nothing written
    assert_eq!(w.task(&task.task_id).await, task);
    assert!(w.calls().is_empty());
    assert_eq!(w.commits(), commits);

    // and a well-formed approval afterwards still goes through
    w.decide(
        &alice(),
        &task.task_id,
        &approve(&[("total_amount", "120.00")]),
    )
    .await
    .unwrap();
    assert_eq!(w.calls().len(), 1);
}
