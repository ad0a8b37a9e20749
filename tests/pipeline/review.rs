//! Human review end to end (issue "Human review"): a document that needs a person pauses on a
//! `waitForTaskToken` Task; reviewers act through `docket review` — the CLI signs its requests
//! to the review function's URL (AWS_IAM) with the credentials of an assumed reviewer role
//! session `docket-reviewer-<tenant>/<name>`, exactly as on AWS.

use aws_sdk_dynamodb::types::{AttributeValue, ProjectionType};
use docket_aws::review::{BY_TENANT, INDEX_ATTRIBUTES, KEY, TOKEN_ATTRIBUTE};
use docket_core::ids::sha256_hex;
use docket_e2e::reviewers::{docket, json_of, pending_task, reviewer, wait_for_status, Session};
use docket_e2e::stack::{tenant, Stack};
use docket_e2e::util::wire_requests;

/// The token stored for a task (the test reads the table; nothing else ever shows it).
async fn stored_token(stack: &Stack, task: &str) -> String {
    let item = stack.item("ReviewTable", "taskId", task).await;
    item["taskToken"].as_s().unwrap().clone()
}

#[tokio::test]
async fn an_approval_with_a_corrected_amount_resumes_the_run_and_the_result_carries_it() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    let (document, task) = pending_task(&stack, &tenant, &alice).await;
    let run_id = wait_for_status(&stack, &document, "awaiting_review").await;
    let token = stored_token(&stack, &task).await;

    let shown = docket(&alice, &["review", "show", &task]).await;
    let approved = docket(
        &alice,
        &[
            "review",
            "approve",
            &task,
            "--set",
            "total_amount=120.00",
            "--set",
            "invoice_date=2026-04-03",
            "--comment",
            "checked against the PO",
        ],
    )
    .await;
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    wait_for_status(&stack, &document, "completed").await;
    assert_eq!(stack.wait_for_execution(&run_id).await, "SUCCEEDED");

    let shown = json_of(&shown);
    assert_eq!(shown["task"]["status"], "pending");
    assert_eq!(shown["task"]["fields"]["total_amount"]["value"], "125.00");
    let result = stack
        .json(&format!(
            "s3://{}/{tenant}/{document}/{run_id}/result.json",
            stack.out("DerivedBucket")
        ))
        .await;
    assert_eq!(result["decision"], "approved_by_reviewer");
    assert_eq!(result["reviewer"], "alice");
    assert_eq!(result["fields"]["total_amount"]["value"], "120.00");
    assert_eq!(result["fields"]["total_amount"]["confidence"], 1.0);
    assert_eq!(result["fields"]["invoice_date"]["value"], "2026-04-03");
    let chain = stack.audit(&document).await;
    let decided = chain
        .iter()
        .find(|e| e.draft.action == "review.approved")
        .expect("a review.approved entry");
    let changed: Vec<&str> = decided.draft.detail["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(changed, ["invoice_date", "total_amount"]);
    assert_eq!(decided.draft.detail["reviewer"], "alice");
    // The token is in none of what the reviewer saw, nor in the run's output.
    assert!(!String::from_utf8_lossy(&approved.stdout).contains(&token));
    assert!(!String::from_utf8_lossy(&approved.stderr).contains(&token));
    assert!(!shown.to_string().contains(&token));
    let output = stack.execution_output(&run_id).await;
    assert!(!output.is_null(), "the run's output is there to search");
    assert!(!output.to_string().contains(&token));
    let messages = crate::privacy::all_log_messages(&stack).await;
    // The search reached this run's lines, the review functions' too (the opening of the task
    // and the decision), before it finds the token in none of them.
    let of_the_run: std::collections::BTreeSet<&str> = messages
        .iter()
        .filter(|(_, line)| line.contains(run_id.as_str()) || line.contains(task.as_str()))
        .map(|(group, _)| group.as_str())
        .collect();
    assert!(
        of_the_run.iter().filter(|g| g.contains("review")).count() >= 1 && of_the_run.len() >= 4,
        "the logs read hold too few of this run's lines to show anything: {of_the_run:?}"
    );
    let logged: Vec<_> = messages
        .iter()
        .filter(|(_, line)| line.contains(&token))
        .collect();
    assert!(logged.is_empty(), "the token is logged: {logged:?}");
}

#[tokio::test]
async fn a_rejection_ends_the_run_rejected_without_a_result() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let bob = reviewer(&tenant, "bob").await;
    let (document, task) = pending_task(&stack, &tenant, &bob).await;
    let run_id = wait_for_status(&stack, &document, "awaiting_review").await;

    let rejected = docket(
        &bob,
        &["review", "reject", &task, "--reason", "not our supplier"],
    )
    .await;
    assert!(
        rejected.status.success(),
        "{}",
        String::from_utf8_lossy(&rejected.stderr)
    );
    wait_for_status(&stack, &document, "rejected").await;

    assert_eq!(
        stack.wait_for_execution(&run_id).await,
        "SUCCEEDED",
        "a business outcome"
    );
    let results = stack
        .keys(stack.out("DerivedBucket"), &format!("{tenant}/{document}/"))
        .await;
    assert!(
        !results.iter().any(|k| k.ends_with("/result.json")),
        "{results:?}"
    );
    let chain = stack.audit(&document).await;
    let actions: Vec<&str> = chain.iter().map(|e| e.draft.action.as_str()).collect();
    assert!(actions.contains(&"review.rejected"), "{actions:?}");
    assert!(actions.contains(&"run.rejected"), "{actions:?}");
}

#[tokio::test]
async fn concurrent_decisions_make_one_decision_and_one_callback_and_the_loser_is_told() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    let carol = reviewer(&tenant, "carol").await;
    let (document, task) = pending_task(&stack, &tenant, &alice).await;
    let run_id = wait_for_status(&stack, &document, "awaiting_review").await;
    let token = stored_token(&stack, &task).await;

    let first = ["review", "approve", &task, "--set", "total_amount=1.00"];
    let second = ["review", "approve", &task, "--set", "total_amount=2.00"];
    let third = ["review", "reject", &task, "--reason", "duplicate"];
    let (a, b, c) = tokio::join!(
        docket(&alice, &first),
        docket(&carol, &second),
        docket(&carol, &third),
    );
    let outcomes = [&a, &b, &c];
    let winners = outcomes.iter().filter(|o| o.status.success()).count();
    assert_eq!(winners, 1, "exactly one decision stands");
    for loser in outcomes.iter().filter(|o| !o.status.success()) {
        let body = json_of(loser);
        assert_eq!(body["error"], "Conflict.AlreadyDecided", "{body}");
        assert!(
            body["task"]["decision"]["reviewer"]["id"].is_string(),
            "the loser is told who decided: {body}"
        );
    }
    let status = stack.wait_for_execution(&run_id).await;
    assert_eq!(status, "SUCCEEDED");
    // One callback at the wire: Step Functions records at most one answer to a token however
    // often it is sent, so the requests themselves are counted (LocalStack's wire log).
    let subject = sha256_hex(token.as_bytes());
    let mut callbacks = Vec::new();
    for operation in ["SendTaskSuccess", "SendTaskFailure"] {
        callbacks.extend(wire_requests("stepfunctions", operation, &subject).await);
    }
    assert_eq!(callbacks.len(), 1, "one callback was sent: {callbacks:?}");
    assert_eq!(callbacks[0]["status"], 200, "{callbacks:?}");
    let chain = stack.audit(&document).await;
    let decisions = chain
        .iter()
        .filter(|e| e.draft.action == "review.approved" || e.draft.action == "review.rejected")
        .count();
    assert_eq!(decisions, 1, "one decision in the audit trail");
}

#[tokio::test]
async fn a_reviewer_of_another_tenant_can_neither_see_nor_decide_a_task() {
    let stack = Stack::load().await;
    let tenant_a = tenant();
    let tenant_b = tenant();
    let alice = reviewer(&tenant_a, "alice").await;
    let mallory = reviewer(&tenant_b, "mallory").await;
    let (document, task) = pending_task(&stack, &tenant_a, &alice).await;
    wait_for_status(&stack, &document, "awaiting_review").await;

    let listed = docket(&mallory, &["review", "list"]).await;
    let listed_by_alice = json_of(&docket(&alice, &["review", "list"]).await);
    let listed_for_a = docket(&mallory, &["review", "list", "--tenant", &tenant_a]).await;
    let shown = docket(&mallory, &["review", "show", &task]).await;
    let approved = docket(&mallory, &["review", "approve", &task]).await;
    let still = json_of(&docket(&alice, &["review", "show", &task]).await);

    // The list B got is an answer (not a refusal), and the same list shows A's task to A.
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert!(
        listed_by_alice.to_string().contains(&task),
        "A's list shows the task: {listed_by_alice}"
    );
    let listed = json_of(&listed);
    assert!(listed["tasks"].is_array(), "{listed}");
    assert!(
        !listed.to_string().contains(&task),
        "B's list shows no task of A"
    );
    assert!(!listed_for_a.status.success());
    for out in [&shown, &approved] {
        assert!(!out.status.success());
        assert_eq!(json_of(out)["error"], "Business.ReviewNotFound");
    }
    assert_eq!(still["task"]["status"], "pending", "nothing was decided");
}

#[tokio::test]
async fn a_task_past_its_timeout_escalates_and_a_late_approval_is_answered_expired() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    let (document, task) = pending_task(&stack, &tenant, &alice).await;
    let run_id = wait_for_status(&stack, &document, "awaiting_review").await;

    // The local stack is deployed with ReviewTimeoutSeconds=45 (scripts/test-local.sh).
    wait_for_status(&stack, &document, "escalated").await;
    let late = docket(&alice, &["review", "approve", &task]).await;

    assert_eq!(stack.wait_for_execution(&run_id).await, "SUCCEEDED");
    assert!(!late.status.success());
    let body = json_of(&late);
    assert_eq!(body["error"], "Conflict.ReviewExpired", "{body}");
    assert_eq!(body["task"]["status"], "expired");
    let chain = stack.audit(&document).await;
    let escalated = chain
        .iter()
        .find(|e| e.draft.action == "review.escalated")
        .expect("an escalation entry");
    assert_eq!(escalated.draft.detail["owner"], "docket-operations");
    let operator = Session { env: Vec::new() };
    let listed = json_of(&docket(&operator, &["ops", "unresolved"]).await);
    assert!(
        listed["unresolved"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["runId"] == run_id.as_str() && c["owner"] == "docket-operations"),
        "the operator listing shows the escalated run with its owner: {listed}"
    );
}

/// The deployed review table (the template's, not one a test builds) serves a tenant's tasks
/// from its `by-tenant` index with the attributes the store reads and without the token.
#[tokio::test]
async fn the_deployed_tenant_index_holds_the_task_but_never_its_token() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    let (document, task) = pending_task(&stack, &tenant, &alice).await;
    wait_for_status(&stack, &document, "awaiting_review").await;
    let table = stack.out("ReviewTable");

    let described = stack
        .dynamodb
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap();
    let index = described
        .table()
        .and_then(|t| {
            t.global_secondary_indexes()
                .iter()
                .find(|i| i.index_name() == Some(BY_TENANT))
        })
        .unwrap_or_else(|| panic!("{table} has no index {BY_TENANT}"));
    let projection = index.projection().unwrap();
    let mut projected: Vec<&str> = projection
        .non_key_attributes()
        .iter()
        .map(String::as_str)
        .collect();
    projected.sort_unstable();
    let mut expected = INDEX_ATTRIBUTES.to_vec();
    expected.sort_unstable();
    assert_eq!(projection.projection_type(), Some(&ProjectionType::Include));
    assert_eq!(
        projected, expected,
        "the index projects what the store reads"
    );
    let items = stack
        .dynamodb
        .query()
        .table_name(table)
        .index_name(BY_TENANT)
        .key_condition_expression("#tenant = :tenant")
        .expression_attribute_names("#tenant", "tenant")
        .expression_attribute_values(":tenant", AttributeValue::S(tenant.to_string()))
        .send()
        .await
        .unwrap()
        .items
        .unwrap_or_default();

    // The token is there to leak (in the table), and the index's copy of the task lacks it.
    assert!(!stored_token(&stack, &task).await.is_empty());
    let ours = items
        .iter()
        .find(|i| i.get(KEY).and_then(|v| v.as_s().ok()) == Some(&task))
        .unwrap_or_else(|| panic!("task {task} not in the index: {items:?}"));
    assert!(
        !ours.contains_key(TOKEN_ATTRIBUTE),
        "the index holds the token"
    );
    for attribute in [
        "documentId",
        "runId",
        "status",
        "deadline",
        "fields",
        "reasons",
    ] {
        assert!(
            ours.contains_key(attribute),
            "{attribute} missing from the index"
        );
    }
}
