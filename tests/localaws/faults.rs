//! Fault injection in the Rust SDK clients (`docket_aws::faults`), against LocalStack: a fault
//! before sending leaves nothing behind; a lost acknowledgement (an unreadable answer, a timeout,
//! or a connection broken after sending) leaves the effect committed and the caller with an
//! ambiguous error, which `steps::record` reconciles; the n-th-call trigger fires once; no config,
//! no faults.

use std::collections::BTreeMap;

use aws_config::SdkConfig;
use aws_sdk_dynamodb::types::{AttributeDefinition, KeyType, ScalarAttributeType};
use aws_sdk_s3::config::retry::RetryConfig;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;
use docket_aws::dynamodb::{DynamoStore, Tables};
use docket_aws::errors::{classify, classify_effect};
use docket_aws::faults::{Faults, Rule, Surface};
use docket_core::audit::AuditDraft;
use docket_core::ids::{DocumentId, OperationId, RunId, SourceVersion, Tenant};
use docket_core::memory::test_context;
use docket_core::model::run::ObjectRef;
use docket_core::ports::{Change, RunRecord, RunStatus, Store};
use docket_core::steps::{self, Clock, Context};
use docket_core::Error;
use docket_e2e::resource::{self, Resource};
use docket_e2e::util;

use crate::dynamodb::{key, string_attribute};

/// An S3 client with `faults` installed and at most `attempts` attempts per call.
fn s3_with(config: &SdkConfig, faults: &Faults, attempts: u32) -> aws_sdk_s3::Client {
    let builder = aws_sdk_s3::config::Builder::from(config)
        .force_path_style(true)
        .retry_config(RetryConfig::standard().with_max_attempts(attempts));
    aws_sdk_s3::Client::from_conf(docket_aws::with_faults(builder, faults).build())
}

async fn exists(config: &SdkConfig, bucket: &str, key: &str) -> bool {
    match util::s3(config)
        .head_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
    {
        Ok(_) => true,
        Err(e) if e.as_service_error().is_some_and(|s| s.is_not_found()) => false,
        Err(e) => panic!("head {key}: {e:?}"),
    }
}

async fn put(
    client: &aws_sdk_s3::Client,
    bucket: &str,
    key: &str,
) -> Result<(), SdkError<aws_sdk_s3::operation::put_object::PutObjectError>> {
    client
        .put_object()
        .bucket(bucket)
        .key(key)
        .body(ByteStream::from_static(b"x"))
        .send()
        .await
        .map(|_| ())
}

#[tokio::test]
async fn fail_before_send_on_put_object_fails_with_the_code_and_stores_nothing() {
    let config = util::aws().await;
    let bucket = resource::bucket(&config, "faults").await;
    let faults = Faults::builder()
        .rule(Rule::fail_before_send(
            "s3",
            "PutObject",
            "ServiceUnavailable",
        ))
        .build();
    // Two attempts: the SDK retries the (synthetic) 503 once, and both attempts are injected.
    let client = s3_with(&config, &faults, 2);

    let err = put(&client, &bucket, "never.txt").await.unwrap_err();
    assert!(matches!(err, SdkError::ServiceError(_)), "{err:?}");
    assert_eq!(err.code(), Some("ServiceUnavailable"));
    assert_eq!(faults.injected(), 2, "{:?}", faults.counts());
    assert!(matches!(
        classify_effect("s3 PutObject", err),
        Error::Dependency(_)
    ));
    assert!(!exists(&config, &bucket, "never.txt").await);

    // Other operations of the same client pass untouched.
    client
        .list_objects_v2()
        .bucket(&bucket)
        .send()
        .await
        .expect("list passes");
    assert_eq!(faults.injected(), 2);
}

#[tokio::test]
async fn lose_response_on_put_object_is_outcome_unknown_and_the_object_exists() {
    let config = util::aws().await;
    let bucket = resource::bucket(&config, "faults").await;
    let faults = Faults::builder()
        .rule(Rule::lose_response("s3", "PutObject"))
        .build();
    // Default retries: a lost response surfacing as ResponseError is not retried by the SDK.
    let client = s3_with(&config, &faults, 3);

    let err = put(&client, &bucket, "committed.txt").await.unwrap_err();
    assert!(matches!(err, SdkError::ResponseError(_)), "{err:?}");
    assert_eq!(faults.seen_by(0), 1, "sent once, not retried");
    assert_eq!(faults.injected(), 1);
    assert!(matches!(
        classify_effect("s3 PutObject", err),
        Error::OutcomeUnknown(_)
    ));
    assert!(exists(&config, &bucket, "committed.txt").await);
}

#[tokio::test]
async fn lose_response_as_timeout_is_outcome_unknown_or_retried_by_the_sdk() {
    let config = util::aws().await;
    let bucket = resource::bucket(&config, "faults").await;

    // One attempt: the timeout reaches the caller.
    let faults = Faults::builder()
        .rule(Rule::lose_response("s3", "PutObject").surface(Surface::Timeout))
        .build();
    let err = put(&s3_with(&config, &faults, 1), &bucket, "timeout.txt")
        .await
        .unwrap_err();
    assert!(matches!(err, SdkError::TimeoutError(_)), "{err:?}");
    assert!(matches!(
        classify_effect("s3 PutObject", err),
        Error::OutcomeUnknown(_)
    ));
    assert!(exists(&config, &bucket, "timeout.txt").await);

    // With retries the SDK sends the request again, as after a real read timeout: the caller
    // sees success and never learns the first attempt was lost.
    let faults = Faults::builder()
        .rule(
            Rule::lose_response("s3", "PutObject")
                .surface(Surface::Timeout)
                .nth(1),
        )
        .build();
    put(&s3_with(&config, &faults, 3), &bucket, "retried.txt")
        .await
        .expect("the SDK's retry succeeds");
    assert_eq!(
        (faults.seen_by(0), faults.injected()),
        (2, 1),
        "two attempts sent, the first one's answer lost"
    );
}

async fn runs_table(config: &SdkConfig) -> Resource {
    let client = aws_sdk_dynamodb::Client::new(config);
    resource::table(&client, "faults-runs", |table| {
        table
            .attribute_definitions(string_attribute("runId"))
            .key_schema(key("runId", KeyType::Hash))
    })
    .await
}

fn run_record() -> RunRecord {
    let tenant = Tenant::parse("acme").unwrap();
    let document = DocumentId::new(&tenant, &util::unique("invoice"));
    let source = SourceVersion {
        version_id: "v1".into(),
        sha256: "0".repeat(64),
    };
    RunRecord {
        run_id: RunId::new(&document, &source, "fp", 0),
        document_id: document,
        tenant,
        source: source.clone(),
        raw: ObjectRef {
            bucket: "raw".into(),
            key: "inbox/acme/invoice.pdf".into(),
            version_id: Some(source.version_id),
        },
        source_order: "00000000000000000001".into(),
        config_fingerprint: "fp".into(),
        generation: 0,
        status: RunStatus::Started,
        created_at: "2026-01-01T00:00:00Z".into(),
        outputs: BTreeMap::new(),
        error: None,
        pages: Some(2),
    }
}

/// A store whose TransactWriteItems answers are lost (only the runs table is used), and that
/// table.
async fn store_losing_commits(config: &SdkConfig) -> (DynamoStore, Faults, Resource) {
    let faults = Faults::builder()
        .rule(Rule::lose_response("dynamodb", "TransactWriteItems").nth(1))
        .build();
    let runs = runs_table(config).await;
    let tables = Tables {
        runs: runs.to_string(),
        documents: "unused".into(),
        audit: "unused".into(),
        checkpoints: "unused".into(),
        ledger: "unused".into(),
    };
    (
        DynamoStore::with_faults(config, tables, &faults),
        faults,
        runs,
    )
}

#[tokio::test]
async fn lose_response_on_transact_write_items_commits_and_the_retry_is_refused() {
    let config = util::aws().await;
    let (store, faults, _runs) = store_losing_commits(&config).await;
    let run = run_record();

    let err = store
        .commit(vec![Change::CreateRun(run.clone())])
        .await
        .expect_err("the answer is lost");
    assert_eq!(faults.injected(), 1);
    // The effect landed although the caller got an error.
    let stored = store.run(&run.run_id).await.unwrap().expect("committed");
    assert_eq!(stored.status, RunStatus::Started);
    assert_eq!(
        stored.pages,
        Some(2),
        "the page count a reprocess passes on"
    );
    // DynamoStore::commit classifies with `classify`, so today the lost ack is only transient:
    // see lose_response_on_commit_is_outcome_unknown below.
    assert!(
        matches!(err, Error::Dependency(_) | Error::OutcomeUnknown(_)),
        "{err:?}"
    );
    // A naive retry of the same commit is refused: its own first attempt landed.
    assert_eq!(
        store.commit(vec![Change::CreateRun(run)]).await.unwrap(),
        Err(docket_core::ports::Refused { index: 0 })
    );

    // The raw SDK error of the same fault is ambiguous for `classify_effect`.
    let (store, _, _runs) = store_losing_commits(&config).await;
    let item = aws_sdk_dynamodb::types::TransactWriteItem::builder()
        .put(
            aws_sdk_dynamodb::types::Put::builder()
                .table_name(&store.tables().runs)
                .item(
                    "runId",
                    aws_sdk_dynamodb::types::AttributeValue::S("x".into()),
                )
                .build()
                .unwrap(),
        )
        .build();
    let err = store
        .client()
        .transact_write_items()
        .transact_items(item)
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, SdkError::ResponseError(_)), "{err:?}");
    assert!(matches!(
        classify_effect("dynamodb TransactWriteItems", err),
        Error::OutcomeUnknown(_)
    ));
}

#[tokio::test]
async fn lose_response_on_commit_is_outcome_unknown() {
    let config = util::aws().await;
    let (store, _, _runs) = store_losing_commits(&config).await;
    let err = store
        .commit(vec![Change::CreateRun(run_record())])
        .await
        .expect_err("the answer is lost");
    assert!(matches!(err, Error::OutcomeUnknown(_)), "{err:?}");
}

#[tokio::test]
async fn nth_call_trigger_fires_exactly_once_on_the_nth_call() {
    let config = util::aws().await;
    let bucket = resource::bucket(&config, "faults").await;
    let faults = Faults::builder()
        .rule(Rule::fail_before_send("s3", "PutObject", "SlowDown").nth(3))
        .build();
    // One attempt per call, so calls and attempts coincide; two clients share the counters.
    let a = s3_with(&config, &faults, 1);
    let b = s3_with(&config, &faults.clone(), 1);

    let mut failed = Vec::new();
    for i in 1..=6 {
        let client = if i % 2 == 0 { &a } else { &b };
        if let Err(e) = put(client, &bucket, &format!("n{i}.txt")).await {
            assert_eq!(e.code(), Some("SlowDown"));
            assert!(matches!(classify("s3 PutObject", e), Error::Dependency(_)));
            failed.push(i);
        }
    }
    assert_eq!(failed, [3]);
    assert_eq!((faults.seen_by(0), faults.injected()), (6, 1));
    for i in 1..=6 {
        assert_eq!(exists(&config, &bucket, &format!("n{i}.txt")).await, i != 3);
    }
}

#[tokio::test]
async fn without_configuration_nothing_is_injected() {
    // The environment of this test process does not enable injection.
    assert_ne!(
        std::env::var(docket_aws::faults::ENABLE_VAR).as_deref(),
        Ok("1")
    );
    let faults = docket_aws::configured_faults().unwrap();
    assert!(faults.is_empty());

    let config = util::aws().await;
    let bucket = resource::bucket(&config, "faults").await;
    let conf = aws_sdk_s3::config::Builder::from(&config).force_path_style(true);
    let conf = docket_aws::with_faults(conf, &faults).build();
    assert_eq!(conf.interceptors().count(), 0);
    let client = aws_sdk_s3::Client::from_conf(conf);
    for i in 0..3 {
        put(&client, &bucket, &format!("plain{i}.txt"))
            .await
            .expect("no fault");
    }
    assert_eq!(faults.injected(), 0);

    // The adapters' default constructors install nothing either.
    let blobs = docket_aws::s3::S3Blobs::new(&config);
    assert_eq!(blobs.client().config().interceptors().count(), 0);
}

#[tokio::test]
async fn fail_before_send_speaks_each_json_protocol() {
    let config = util::aws().await;
    let faults = Faults::builder()
        .rule(Rule::fail_before_send(
            "dynamodb",
            "*",
            "ThrottlingException",
        ))
        .rule(Rule::fail_before_send(
            "sfn",
            "ListStateMachines",
            "ServiceUnavailable",
        ))
        .rule(Rule::fail_before_send(
            "textract",
            "GetDocumentTextDetection",
            "ProvisionedThroughputExceededException",
        ))
        .build();
    let one = RetryConfig::standard().with_max_attempts(1);

    let ddb = aws_sdk_dynamodb::Client::from_conf(
        docket_aws::with_faults(
            aws_sdk_dynamodb::config::Builder::from(&config).retry_config(one.clone()),
            &faults,
        )
        .build(),
    );
    let err = ddb.list_tables().send().await.unwrap_err();
    assert!(matches!(err, SdkError::ServiceError(_)), "{err:?}");
    assert_eq!(err.code(), Some("ThrottlingException"));

    let sfn = aws_sdk_sfn::Client::from_conf(
        docket_aws::with_faults(
            aws_sdk_sfn::config::Builder::from(&config).retry_config(one.clone()),
            &faults,
        )
        .build(),
    );
    let err = sfn.list_state_machines().send().await.unwrap_err();
    assert_eq!(err.code(), Some("ServiceUnavailable"), "{err:?}");

    let textract = aws_sdk_textract::Client::from_conf(
        docket_aws::with_faults(
            aws_sdk_textract::config::Builder::from(&config).retry_config(one),
            &faults,
        )
        .build(),
    );
    let err = textract
        .get_document_text_detection()
        .job_id("no-such-job")
        .send()
        .await
        .unwrap_err();
    assert!(
        err.as_service_error()
            .is_some_and(|e| e.is_provisioned_throughput_exceeded_exception()),
        "{err:?}"
    );
    assert!(matches!(
        classify("textract GetDocumentTextDetection", err),
        Error::Dependency(_)
    ));
    assert_eq!(faults.injected(), 3, "{:?}", faults.counts());
}

#[tokio::test]
async fn lose_response_as_dispatch_failure_is_outcome_unknown_and_the_object_exists() {
    let config = util::aws().await;
    let bucket = resource::bucket(&config, "faults").await;
    let faults = Faults::builder()
        .rule(Rule::lose_response("s3", "PutObject").surface(Surface::DispatchFailure))
        .build();

    // One attempt: the broken connection reaches the caller, after the request was sent.
    let err = put(&s3_with(&config, &faults, 1), &bucket, "reset.txt")
        .await
        .unwrap_err();
    let SdkError::DispatchFailure(failure) = &err else {
        panic!("not a dispatch failure: {err:?}")
    };
    assert!(failure.is_io(), "{err:?}");
    assert!(!docket_aws::errors::never_sent(failure), "{err:?}");
    assert_eq!((faults.seen_by(0), faults.injected()), (1, 1));
    assert!(exists(&config, &bucket, "reset.txt").await);
    let effect = classify_effect("s3 PutObject", err);
    assert_eq!(effect.name(), "Ambiguous.OutcomeUnknown", "{effect}");

    // The SDK retries a broken connection as it would a real reset: the caller sees success.
    let faults = Faults::builder()
        .rule(
            Rule::lose_response("s3", "PutObject")
                .surface(Surface::DispatchFailure)
                .nth(1),
        )
        .build();
    put(&s3_with(&config, &faults, 3), &bucket, "reset-retried.txt")
        .await
        .expect("the SDK's retry succeeds");
    assert_eq!((faults.seen_by(0), faults.injected()), (2, 1));
}

fn number_attribute(name: &str) -> AttributeDefinition {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::N)
        .build()
        .unwrap()
}

/// Fresh runs, audit and checkpoints tables (the deployed schemas), as `Tables`.
async fn audit_tables(config: &SdkConfig) -> (Tables, Vec<Resource>) {
    let client = aws_sdk_dynamodb::Client::new(config);
    let runs = runs_table(config).await;
    let audit = resource::table(&client, "faults-audit", |table| {
        table
            .attribute_definitions(string_attribute("documentId"))
            .attribute_definitions(number_attribute("seq"))
            .key_schema(key("documentId", KeyType::Hash))
            .key_schema(key("seq", KeyType::Range))
    })
    .await;
    let checkpoints = resource::table(&client, "faults-checkpoints", |table| {
        table
            .attribute_definitions(string_attribute("documentId"))
            .key_schema(key("documentId", KeyType::Hash))
    })
    .await;
    let tables = Tables {
        runs: runs.to_string(),
        documents: "unused".into(),
        audit: audit.to_string(),
        checkpoints: checkpoints.to_string(),
        ledger: "unused".into(),
    };
    (tables, vec![runs, audit, checkpoints])
}

/// A store whose client makes one attempt per call (so the caller sees what the wire did, where
/// the adapters' own clients retry) and whose first TransactWriteItems loses its answer to a
/// connection broken after sending.
async fn store_dropping_first_commit(config: &SdkConfig, tables: &Tables) -> (DynamoStore, Faults) {
    let faults = Faults::builder()
        .rule(
            Rule::lose_response("dynamodb", "TransactWriteItems")
                .surface(Surface::DispatchFailure)
                .nth(1),
        )
        .build();
    let one = aws_sdk_dynamodb::config::Builder::from(config)
        .retry_config(RetryConfig::standard().with_max_attempts(1));
    let client = aws_sdk_dynamodb::Client::from_conf(docket_aws::with_faults(one, &faults).build());
    (DynamoStore::from_client(client, tables.clone()), faults)
}

fn context() -> Context {
    test_context(Clock::System)
}

#[tokio::test]
async fn a_commit_whose_connection_breaks_after_sending_is_outcome_unknown_and_reconciled() {
    let config = util::aws().await;
    let (tables, _tables) = audit_tables(&config).await;

    // The commit lands; the caller learns only that it may have.
    let (store, faults) = store_dropping_first_commit(&config, &tables).await;
    let run = run_record();
    let err = store
        .commit(vec![Change::CreateRun(run.clone())])
        .await
        .expect_err("the connection broke");
    assert_eq!(err.name(), "Ambiguous.OutcomeUnknown", "{err}");
    assert_eq!((faults.seen_by(0), faults.injected()), (1, 1));
    assert!(store.run(&run.run_id).await.unwrap().is_some(), "committed");

    // A step's audited write under the same fault: steps::record sees OutcomeUnknown, finds its
    // own entry at the chain's head and reports success without writing again.
    let (store, faults) = store_dropping_first_commit(&config, &tables).await;
    let document = run.document_id.clone();
    let mut draft = AuditDraft::new("docket/test", "document.accepted", Some(&run.run_id));
    draft.operation_id = Some(OperationId::new(&run.run_id, "ingest", None));
    let entry = steps::record(&store, &context(), &document, vec![], draft.clone())
        .await
        .unwrap()
        .expect("not refused");
    assert_eq!(
        (faults.seen_by(0), faults.injected()),
        (1, 1),
        "one TransactWriteItems at the wire"
    );
    let chain = store.audit_entries(&document).await.unwrap();
    assert_eq!(chain.len(), 1, "{chain:?}");
    assert_eq!(chain[0].hash, entry.hash);

    // The step retried (as Step Functions would after Ambiguous.OutcomeUnknown) writes nothing.
    let clean = DynamoStore::new(&config, tables.clone());
    let again = steps::record(&clean, &context(), &document, vec![], draft)
        .await
        .unwrap()
        .expect("not refused");
    assert_eq!(again.hash, entry.hash);
    assert_eq!(clean.audit_entries(&document).await.unwrap().len(), 1);
}
