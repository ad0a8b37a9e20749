//! No forged reviewer (issue "Security hardening", findings 1 and 3): the review API is a
//! function of its own, review-api, that its resource policy lets reviewers invoke only through
//! its function URL (`lambda:InvokedViaFunctionUrl`); the state machine's review-callback takes no
//! function URL request; and a reviewer is a session of this stack's reviewer role of the tenant.
//!
//! A forged event is a function URL request anyone can write: a made-up
//! `requestContext.authorizer.iam.userArn` naming another tenant's reviewer. Invoked directly it
//! must get nothing: no task listed, no decision recorded, no callback to the waiting execution.

use aws_sdk_lambda::error::ProvideErrorMetadata;
use aws_sdk_lambda::primitives::Blob;
use docket_e2e::reviewers::{
    docket, json_of, pending_task, reviewer, role_prefix, wait_for_status,
};
use docket_e2e::stack::{tenant, Stack};
use serde_json::{json, Value};

const URL_REQUEST: &str = include_str!("../fixtures/function-url-review-decision.json");

/// A function URL event as a forger writes it: `method path` with `body`, "signed" by `user_arn`.
fn forged(method: &str, path: &str, body: Value, user_arn: &str) -> Value {
    let mut event: Value = serde_json::from_str(URL_REQUEST).unwrap();
    event["rawPath"] = path.into();
    event["requestContext"]["http"]["method"] = method.into();
    event["requestContext"]["http"]["path"] = path.into();
    event["requestContext"]["accountId"] = "000000000000".into();
    let iam = &mut event["requestContext"]["authorizer"]["iam"];
    iam["userArn"] = user_arn.into();
    iam["accountId"] = "000000000000".into();
    event["body"] = body.to_string().into();
    event
}

/// A direct `lambda:Invoke` of `function`: its payload and FunctionError, or the error code.
async fn invoke(
    stack: &Stack,
    function: &str,
    event: &Value,
) -> Result<(Value, Option<String>), String> {
    let out = stack
        .lambda
        .invoke()
        .function_name(function)
        .payload(Blob::new(event.to_string()))
        .send()
        .await
        .map_err(|e| e.code().unwrap_or("no error code").to_string())?;
    let payload = out
        .payload()
        .map(|b| serde_json::from_slice(b.as_ref()).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    Ok((payload, out.function_error().map(str::to_string)))
}

/// The waitForTaskToken Task's ends (succeeded or failed) in the run's history.
async fn review_task_ends(stack: &Stack, run_id: &str) -> usize {
    let mut state = String::new();
    let mut ends = 0;
    for e in stack.history(run_id).await {
        if let Some(entered) = e.state_entered_event_details() {
            state = entered.name().to_string();
        }
        let succeeded = e
            .task_succeeded_event_details()
            .map(|d| d.resource().to_string());
        let failed = e
            .task_failed_event_details()
            .map(|d| d.resource().to_string());
        let callback = succeeded
            .or(failed)
            .is_some_and(|r| r.contains("waitForTaskToken"));
        // The review's wait only (in Validate): the receipt wait (in Route) is the consumer's.
        ends += usize::from(callback && state == "Validate");
    }
    ends
}

#[tokio::test]
async fn a_forged_direct_invoke_gets_no_task_no_decision_and_no_callback() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    // The task is there, listed through the URL to its tenant's reviewer.
    let (document, task) = pending_task(&stack, &tenant, &alice).await;
    let run_id = wait_for_status(&stack, &document, "awaiting_review").await;
    let mallory = format!(
        "arn:aws:sts::000000000000:assumed-role/{}{tenant}/mallory",
        role_prefix()
    );
    let approve = json!({"verdict": "approve", "set": {"total_amount": "0.01"}});
    let decide = forged(
        "POST",
        &format!("/tasks/{task}/decision"),
        approve,
        &mallory,
    );
    let list = forged("GET", "/tasks", Value::Null, &mallory);
    let api = stack.out("ReviewApiFunctionName").to_string();
    let callback = stack.out("ReviewCallbackFunctionName").to_string();

    let decided = invoke(&stack, &api, &decide).await;
    let listed = invoke(&stack, &api, &list).await;
    let via_callback = invoke(&stack, &callback, &decide).await;

    assert_eq!(
        decided,
        Err("AccessDeniedException".into()),
        "a forged decision is refused"
    );
    assert_eq!(
        listed,
        Err("AccessDeniedException".into()),
        "a forged list is refused"
    );
    let (payload, function_error) = via_callback.expect("review-callback runs and refuses it");
    assert_eq!(function_error.as_deref(), Some("Unhandled"), "{payload}");
    assert_eq!(payload["errorType"], "Fatal.BadInput", "{payload}");
    let shown = json_of(&docket(&alice, &["review", "show", &task]).await);
    assert_eq!(
        shown["task"]["status"], "pending",
        "no decision recorded: {shown}"
    );
    assert!(shown["task"]["decision"].is_null(), "{shown}");
    assert_eq!(review_task_ends(&stack, &run_id).await, 0, "no callback");
    let audit = stack.audit(&document).await;
    assert!(!audit.is_empty(), "the run's audit trail is read");
    let decisions = ["review.approved", "review.rejected"];
    assert!(
        audit
            .iter()
            .all(|e| !decisions.contains(&e.draft.action.as_str())),
        "no decision audited"
    );
    // The URL itself still serves the reviewer (the policy allows invokes through it).
    let approved = docket(
        &alice,
        &["review", "approve", &task, "--set", "total_amount=125.00"],
    )
    .await;
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    assert_eq!(stack.wait_for_execution(&run_id).await, "SUCCEEDED");
    assert_eq!(
        review_task_ends(&stack, &run_id).await,
        1,
        "the one real callback"
    );
}

#[tokio::test]
async fn a_reviewer_role_of_another_stack_is_not_a_reviewer_of_this_one() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    let (_, task) = pending_task(&stack, &tenant, &alice).await;
    // The global prefix every stack used to share; this stack's is `<stack>-reviewer-`.
    assert_ne!(
        role_prefix(),
        "docket-reviewer-",
        "the stack must have a prefix of its own"
    );
    let other =
        docket_e2e::reviewers::session_of_role(&format!("docket-reviewer-{tenant}"), "alice").await;

    let shown = docket(&other, &["review", "show", &task]).await;

    assert!(!shown.status.success());
    assert_eq!(
        json_of(&shown)["error"],
        "Forbidden",
        "{}",
        String::from_utf8_lossy(&shown.stdout)
    );
}
