//! The audit log is tamper-evident: `docket audit verify` names the exact entry after an edit, a
//! deletion, a reordering or a truncated tail; concurrent appends leave no gap and no fork.

use aws_sdk_dynamodb::types::AttributeValue;
use docket_aws::dynamodb::DynamoStore;
use docket_core::audit::AuditDraft;
use docket_core::ids::DocumentId;
use docket_core::memory::test_context;
use docket_core::ports::Store;
use docket_core::steps::{record, Clock, Context};
use docket_core::Error;
use docket_e2e::stack::{outputs_path, Stack};
use docket_e2e::util;

fn store(stack: &Stack, sdk: &aws_config::SdkConfig) -> DynamoStore {
    DynamoStore::new(sdk, stack.tables())
}

fn ctx() -> Context {
    test_context(Clock::System)
}

/// A fresh chain of `n` entries through the real append path.
async fn chain(stack: &Stack, n: usize) -> DocumentId {
    let sdk = util::aws().await;
    let store = store(stack, &sdk);
    let document = DocumentId::for_rejected_key(&util::unique("audit"));
    for i in 0..n {
        let draft = AuditDraft::new("docket/test", &format!("step.{i}"), None);
        record(&store, &ctx(), &document, vec![], draft)
            .await
            .unwrap()
            .unwrap();
    }
    document
}

/// `docket audit verify <document> --output json`: (exit success, first bad seq).
fn verify(document: &DocumentId) -> (bool, Option<u64>) {
    let (ok, report) = crate::audit_digest::verify(&outputs_path(), &[document.as_str()]);
    (ok, report["documents"][0]["firstBadSeq"].as_u64())
}

fn key(document: &DocumentId, seq: u64) -> [(String, AttributeValue); 2] {
    [
        ("documentId".into(), AttributeValue::S(document.to_string())),
        ("seq".into(), AttributeValue::N(seq.to_string())),
    ]
}

async fn stored_entry(stack: &Stack, document: &DocumentId, seq: u64) -> String {
    let item = stack
        .dynamodb
        .get_item()
        .table_name(stack.out("AuditTable"))
        .set_key(Some(key(document, seq).into_iter().collect()))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    item["entry"].as_s().unwrap().clone()
}

async fn overwrite_entry(stack: &Stack, document: &DocumentId, seq: u64, entry: String) {
    stack
        .dynamodb
        .update_item()
        .table_name(stack.out("AuditTable"))
        .set_key(Some(key(document, seq).into_iter().collect()))
        .update_expression("SET entry = :e")
        .expression_attribute_values(":e", AttributeValue::S(entry))
        .send()
        .await
        .unwrap();
}

async fn delete_entry(stack: &Stack, document: &DocumentId, seq: u64) {
    stack
        .dynamodb
        .delete_item()
        .table_name(stack.out("AuditTable"))
        .set_key(Some(key(document, seq).into_iter().collect()))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_untouched_chain_verifies() {
    let stack = Stack::load().await;
    let document = chain(&stack, 4).await;

    assert_eq!(verify(&document), (true, None));
}

#[tokio::test]
async fn an_edited_entry_is_named() {
    let stack = Stack::load().await;
    let document = chain(&stack, 4).await;
    let edited = stored_entry(&stack, &document, 2)
        .await
        .replace("docket/test", "docket/mallory");

    overwrite_entry(&stack, &document, 2, edited).await;

    assert_eq!(verify(&document), (false, Some(2)));
}

#[tokio::test]
async fn a_deleted_entry_is_named() {
    let stack = Stack::load().await;
    let document = chain(&stack, 4).await;

    delete_entry(&stack, &document, 3).await;

    assert_eq!(verify(&document), (false, Some(3)));
}

#[tokio::test]
async fn reordered_entries_are_named_at_the_first_moved_one() {
    let stack = Stack::load().await;
    let document = chain(&stack, 4).await;
    let (second, third) = (
        stored_entry(&stack, &document, 2).await,
        stored_entry(&stack, &document, 3).await,
    );

    overwrite_entry(&stack, &document, 2, third).await;
    overwrite_entry(&stack, &document, 3, second).await;

    assert_eq!(verify(&document), (false, Some(2)));
}

#[tokio::test]
async fn a_truncated_tail_is_named_by_the_checkpoint() {
    let stack = Stack::load().await;
    let document = chain(&stack, 4).await;

    delete_entry(&stack, &document, 4).await;

    assert_eq!(verify(&document), (false, Some(4)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_leave_no_gap_and_no_fork() {
    let stack = Stack::load().await;
    let sdk = util::aws().await;
    let store = std::sync::Arc::new(store(&stack, &sdk));
    let document = DocumentId::for_rejected_key(&util::unique("audit-race"));

    let tasks: Vec<_> = (0..10)
        .map(|i| {
            let (store, document) = (store.clone(), document.clone());
            tokio::spawn(async move {
                let draft = AuditDraft::new("docket/test", &format!("racer.{i}"), None);
                record(&*store, &ctx(), &document, vec![], draft).await
            })
        })
        .collect();
    let mut landed = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(Ok(_)) => landed += 1,
            Ok(Err(refused)) => panic!("refused {refused:?}"),
            Err(Error::InProgress(_) | Error::Dependency(_)) => {} // gave up under contention: retried by the ASL
            Err(other) => panic!("{other:?}"),
        }
    }

    let entries = store.audit_entries(&document).await.unwrap();
    let checkpoint = store.audit_checkpoint(&document).await.unwrap();
    assert!(landed >= 1);
    assert_eq!(
        entries.len(),
        landed,
        "every landed append is in the chain, once"
    );
    assert_eq!(checkpoint, entries.last().map(|e| e.checkpoint()));
    assert_eq!(verify(&document), (true, None));
}
