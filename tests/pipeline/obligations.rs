//! Failed compensations are open obligations an operator sees: a journal stored in the deployed
//! saga table with a compensation `failed-manual-review` is listed by `docket ops unresolved`
//! (through the table's obligation index) with its owner, and a settled journal is not.

use docket_aws::saga::DynamoJournal;
use docket_core::ids::{RunId, Tenant};
use docket_core::memory::{failed_compensation, test_run};
use docket_core::ports::SagaJournal;
use docket_core::saga::Journal;
use docket_e2e::reviewers::{docket, Session};
use docket_e2e::stack::{tenant, Stack};
use docket_e2e::util;

fn a_run() -> RunId {
    let tenant = Tenant::parse(&tenant()).unwrap();
    test_run(
        &tenant,
        &format!("{}.pdf", util::unique("obligation")),
        "v1",
    )
}

#[tokio::test]
async fn a_compensation_failed_for_good_is_listed_with_its_owner_and_a_settled_one_is_not() {
    let stack = Stack::load().await;
    let journals = DynamoJournal::new(stack.dynamodb.clone(), stack.out("SagaJournalTable"));
    let (failed, settled) = (a_run(), a_run());
    let journal = failed_compensation(&failed, "entry-obligation", "docket-operations");
    journals.put(&journal).await.unwrap().unwrap();
    journals
        .put(&Journal::new(&settled))
        .await
        .unwrap()
        .unwrap();
    // Both are in the table: the listing's absence of the settled one means something.
    assert!(journals.journal(&settled).await.unwrap().is_some());
    assert!(journals.journal(&failed).await.unwrap().is_some());

    let operator = Session { env: Vec::new() };
    let listed = docket(&operator, &["ops", "unresolved"]).await;

    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let cases = listed["unresolved"].as_array().unwrap();
    let ours: Vec<_> = cases
        .iter()
        .filter(|c| c["runId"] == failed.as_str())
        .collect();
    assert_eq!(ours.len(), 1, "{listed}");
    assert_eq!(ours[0]["owner"], "docket-operations");
    let op = &ours[0]["operations"][0];
    assert_eq!(op["effect"], "event.published");
    assert_eq!(op["status"], "failed-manual-review");
    assert_eq!(op["ids"]["entryId"], "entry-obligation");
    assert!(
        cases.iter().all(|c| c["runId"] != settled.as_str()),
        "a journal without a failed compensation is listed: {listed}"
    );
}
