//! The audit chains anchored outside the tables (issue 11, finding 2): the digest function signs
//! every chain's head into a locked object, and `docket audit verify` catches a rewrite that the
//! chain check alone cannot see (an entry overwritten by PutItem, every later hash recomputed, the
//! checkpoint moved: what a compromised Lambda role could do). Forged and unsigned digests are
//! refused, and a stored digest cannot be deleted or overwritten while locked.

use std::collections::HashMap;
use std::sync::OnceLock;

use aws_sdk_dynamodb::types::AttributeValue;
use docket_core::audit::AuditEntry;
use docket_core::ids::DocumentId;
use docket_e2e::stack::{invoice_lines, invoice_pdf, outputs_path, tenant, Stack};
use docket_e2e::{function, util};
use serde_json::{json, Value};
use tokio::sync::Mutex;

/// Digests chain to their predecessor; the function has reserved concurrency 1 on AWS, which
/// the local Lambda does not enforce, so this file's tests take their digests one at a time.
static DIGESTS: Mutex<()> = Mutex::const_new(());

/// Invokes the digest function as the schedule would; returns its answer (key, hash, chains).
async fn digest_now(stack: &Stack) -> Value {
    let _one_at_a_time = DIGESTS.lock().await;
    let name = stack.out("AuditDigestFunctionName").to_string();
    let (answer, error) = function::invoke(stack.lambda.clone(), name, json!({})).await;
    assert_eq!(error, None, "the digest function failed: {answer}");
    answer
}

/// `docket --outputs <outputs> --output json audit verify <args>`: (exit success, report).
pub(crate) fn verify(outputs: &str, args: &[&str]) -> (bool, Value) {
    static DOCKET: OnceLock<std::path::PathBuf> = OnceLock::new();
    let docket = DOCKET.get_or_init(|| util::cargo_build("docket"));
    let out = std::process::Command::new(docket)
        .args(["--outputs", outputs, "--output", "json", "audit", "verify"])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::var("HOME").unwrap_or_default())
        .env("AWS_ENDPOINT_URL", util::endpoint())
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .output()
        .expect("run docket");
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.success(), report)
}

/// An invoice through the whole pipeline; its (verified) audit chain.
async fn processed(stack: &Stack) -> (DocumentId, Vec<AuditEntry>) {
    let (tenant, name) = (tenant(), format!("{}.pdf", util::unique("digest")));
    let document = Stack::document_id(&tenant, &name);
    let pdf = invoice_pdf(&invoice_lines("INV-2026-0042", "1234.50"));
    stack.upload(&format!("inbox/{tenant}/{name}"), pdf).await;
    stack.wait_for_runs(&document, 1).await;
    // The chain's last entry: the consumer's receipt settled (the chain grows no more).
    let chain = stack
        .wait_for_action(&document, "downstream.recorded")
        .await;
    assert!(chain.len() >= 3, "a short chain proves little: {chain:?}");
    (document, chain)
}

/// What a compromised Lambda role could do with PutItem and UpdateItem: overwrite entry `seq`
/// (another actor), recompute every later entry's hashes, and move the checkpoint to the new
/// head. Returns the rewritten chain.
async fn rewrite(stack: &Stack, mut chain: Vec<AuditEntry>, seq: usize) -> Vec<AuditEntry> {
    chain[seq - 1].draft.actor = "docket/mallory".into();
    for i in seq - 1..chain.len() {
        if i > 0 {
            chain[i].prev_hash = chain[i - 1].hash.clone();
        }
        chain[i].hash = chain[i].compute_hash();
        let e = &chain[i];
        let item: HashMap<String, AttributeValue> = HashMap::from([
            (
                "documentId".into(),
                AttributeValue::S(e.document_id.to_string()),
            ),
            ("seq".into(), AttributeValue::N(e.seq.to_string())),
            ("action".into(), AttributeValue::S(e.draft.action.clone())),
            ("time".into(), AttributeValue::S(e.time.clone())),
            ("hash".into(), AttributeValue::S(e.hash.clone())),
            (
                "entry".into(),
                AttributeValue::S(serde_json::to_string(e).unwrap()),
            ),
        ]);
        // No condition: PutItem overwrites the stored entry.
        stack
            .dynamodb
            .put_item()
            .table_name(stack.out("AuditTable"))
            .set_item(Some(item))
            .send()
            .await
            .expect("overwrite an entry");
    }
    let head = chain.last().unwrap();
    stack
        .dynamodb
        .update_item()
        .table_name(stack.out("AuditCheckpointsTable"))
        .key(
            "documentId",
            AttributeValue::S(head.document_id.to_string()),
        )
        .update_expression("SET #h = :h")
        .expression_attribute_names("#h", "hash")
        .expression_attribute_values(":h", AttributeValue::S(head.hash.clone()))
        .send()
        .await
        .expect("move the checkpoint");
    chain
}

fn report_of<'a>(report: &'a Value, document: &DocumentId) -> &'a Value {
    report["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["documentId"] == document.as_str())
        .unwrap_or_else(|| panic!("{document} not in the report {report:#}"))
}

#[tokio::test]
async fn a_processed_document_verifies_against_a_fresh_signed_digest() {
    let stack = Stack::load().await;
    let (document, chain) = processed(&stack).await;

    let written = digest_now(&stack).await;

    // The digest is there and names this chain's head.
    let key = written["key"].as_str().unwrap();
    let stored = stack.object(stack.out("AuditDigestBucket"), key).await;
    let digest: Value = serde_json::from_slice(&stored).unwrap();
    let head = &digest["chains"][document.as_str()];
    assert_eq!(head["seq"], chain.len() as u64, "{digest:#}");
    assert_eq!(head["hash"], chain.last().unwrap().hash.as_str());
    let (ok, report) = verify(&outputs_path(), &[document.as_str()]);
    assert!(ok, "{report:#}");
    assert!(
        report["digests"]["checked"].as_u64().unwrap() >= 1,
        "{report:#}"
    );
    assert_eq!(report_of(&report, &document)["digestOk"], true);
}

#[tokio::test]
async fn a_rewrite_that_recomputed_the_hashes_passes_the_chain_check_but_not_the_digest() {
    let stack = Stack::load().await;
    let (document, chain) = processed(&stack).await;
    digest_now(&stack).await;

    let rewritten = rewrite(&stack, chain.clone(), 2).await;

    // The rewrite is in the table: entry 2 now names another actor, its hash changed.
    let stored = stack.audit(&document).await;
    assert_eq!(stored[1].draft.actor, "docket/mallory");
    assert_ne!(stored[1].hash, chain[1].hash);
    assert_eq!(stored.last().unwrap().hash, rewritten.last().unwrap().hash);
    let (ok, report) = verify(&outputs_path(), &[document.as_str()]);
    let doc = report_of(&report, &document);
    // The chain and its (moved) checkpoint agree: only the digest can tell.
    assert_eq!(doc["chainOk"], true, "{report:#}");
    assert_eq!(doc["digestOk"], false, "{report:#}");
    assert!(!ok, "verify passed a rewritten chain: {report:#}");
    let problem = doc["problem"].as_str().unwrap();
    assert!(
        problem.contains("differs from the signed digest"),
        "{problem}"
    );
    // Named down to the entries between the newest signed head that still matches and the
    // oldest that does not: entry 2 is among them (the schedule may have signed an earlier head
    // of this chain too, which narrows the range further).
    let first_bad = doc["firstBadSeq"].as_u64().unwrap();
    assert!((1..=2).contains(&first_bad), "{report:#}");
    assert!(problem.contains("rewritten at an entry in"), "{problem}");
}

#[tokio::test]
async fn a_locked_digest_version_cannot_be_deleted() {
    let stack = Stack::load().await;
    let written = digest_now(&stack).await;
    let (bucket, key) = (
        stack.out("AuditDigestBucket"),
        written["key"].as_str().unwrap(),
    );
    let before = stack.object(bucket, key).await;
    let version = stack
        .s3
        .head_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .unwrap();
    assert_eq!(
        version.object_lock_mode().map(|m| m.as_str()),
        Some("COMPLIANCE"),
        "the digest is not locked: {version:?}"
    );
    let version_id = version
        .version_id()
        .expect("a versioned bucket")
        .to_string();

    let deleted = stack
        .s3
        .delete_object()
        .bucket(bucket)
        .key(key)
        .version_id(&version_id)
        .send()
        .await;

    assert!(deleted.is_err(), "a locked digest version was deleted");
    let kept = stack
        .s3
        .get_object()
        .bucket(bucket)
        .key(key)
        .version_id(&version_id)
        .send()
        .await
        .expect("the signed version is still there");
    assert_eq!(kept.body.collect().await.unwrap().into_bytes(), before);
}

#[tokio::test]
async fn a_digest_with_a_tampered_signature_is_refused() {
    let stack = Stack::load().await;
    let written = digest_now(&stack).await;
    let key = written["key"].as_str().unwrap();
    let real = stack
        .s3
        .get_object()
        .bucket(stack.out("AuditDigestBucket"))
        .key(key)
        .send()
        .await
        .unwrap();
    let signature = real.metadata().unwrap()["signature"].clone();
    let body = real.body.collect().await.unwrap().into_bytes().to_vec();
    // A scratch bucket with this digest twice: once as signed, once with one signature byte
    // flipped (the real bucket refuses writes but the digest function's; IAM is not enforced
    // locally, so the forgery goes next to a copy instead of into the stack's bucket).
    let scratch = util::unique("digest-forgery");
    stack
        .s3
        .create_bucket()
        .bucket(&scratch)
        .send()
        .await
        .unwrap();
    let mut forged = aws_smithy_types::base64::decode(&signature).unwrap();
    forged[10] ^= 1;
    for (name, sig) in [
        (key.to_string(), signature.clone()),
        (
            key.replace("digests/", "digests/~"),
            aws_smithy_types::base64::encode(&forged),
        ),
    ] {
        stack
            .s3
            .put_object()
            .bucket(&scratch)
            .key(name)
            .body(body.clone().into())
            .metadata("signature", sig)
            .send()
            .await
            .unwrap();
    }
    let mut outputs: HashMap<String, String> =
        serde_json::from_str(&std::fs::read_to_string(outputs_path()).unwrap()).unwrap();
    outputs.insert("AuditDigestBucket".into(), scratch.clone());
    let dir = util::Scratch::new(&scratch);
    let forged_outputs = dir.join("outputs.json");
    std::fs::write(&forged_outputs, serde_json::to_string(&outputs).unwrap()).unwrap();
    let any_document = serde_json::from_slice::<Value>(&body).unwrap()["chains"]
        .as_object()
        .and_then(|c| c.keys().next().cloned())
        .expect("the digest names a chain");

    let (ok, report) = verify(forged_outputs.to_str().unwrap(), &[&any_document]);

    assert!(!ok, "a forged digest was accepted: {report:#}");
    let refused = report["digests"]["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{report:#}");
    assert_eq!(refused[0]["reason"], "signature invalid");
    assert!(refused[0]["key"].as_str().unwrap().contains("digests/~"));
    // The copy with the real signature was accepted (the check can pass).
    assert_eq!(report["digests"]["checked"], 1, "{report:#}");
}
