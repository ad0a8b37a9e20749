//! Route's saga on DynamoDB (LocalStack) through `docket_aws::saga` and `DynamoStore`: the
//! journal's version races, the outbox's idempotent persist and forward-only moves, the restore
//! that never undoes a newer result, the atomicity of a saga write with its audit entry, and a
//! lost answer reconciled by reading back. The tables are built from infra/template.yaml's own
//! definitions (`template_table`), and the adapters' key and index names are checked against
//! them. Requests are counted at the wire (`requests.rs`).

use aws_config::SdkConfig;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::Client;
use docket_aws::dynamodb::{DynamoStore, Tables};
use docket_aws::faults::{Faults, Rule};
use docket_aws::saga::{DynamoJournal, DynamoOutbox, SagaTables};
use docket_core::audit::{seal, AuditDraft};
use docket_core::ids::{DocumentId, RunId, SourceVersion, Tenant};
use docket_core::memory::test_context;
use docket_core::ports::{
    Change, DocumentRecord, Outbox, Refused, SagaJournal, StaleJournal, Store,
};
use docket_core::saga::{
    Advance, Delivery, Effect, EffectIds, EventBody, EventId, EventKind, Journal, OutboxRecord,
    PreviousResult, Transition,
};
use docket_core::steps::{record_guarded, Clock, Context};
use docket_e2e::resource::{self, Resource};
use docket_e2e::util;

use crate::requests::Requests;

mod steps;
mod template;

pub(crate) use template::as_in_template;

/// Fresh tables as the template defines them, a store and the saga's adapters over one client
/// that counts its requests and does not retry, with `faults` injected.
struct Fixture {
    store: DynamoStore,
    journal: DynamoJournal,
    outbox: DynamoOutbox,
    pub requests: Requests,
    faults: Faults,
    _tables: Vec<Resource>,
}

async fn fixture(faults: Faults) -> Fixture {
    let config: SdkConfig = util::aws().await;
    let admin = Client::new(&config);
    let mut made = Vec::new();
    for (id, label) in [
        ("SagaJournalTable", "saga-journal"),
        ("OutboxTable", "saga-outbox"),
        ("DocumentsTable", "saga-documents"),
        ("AuditTable", "saga-audit"),
        ("AuditCheckpointsTable", "saga-checkpoints"),
    ] {
        made.push(resource::table(&admin, label, |t| as_in_template(id, t)).await);
    }
    let requests = Requests::default();
    let builder = aws_sdk_dynamodb::config::Builder::from(&config)
        .retry_config(RetryConfig::disabled())
        .interceptor(requests.clone());
    let client = Client::from_conf(docket_aws::with_faults(builder, &faults).build());
    let saga = SagaTables {
        journal: made[0].to_string(),
        outbox: made[1].to_string(),
    };
    let tables = Tables {
        runs: "unused".into(),
        documents: made[2].to_string(),
        audit: made[3].to_string(),
        checkpoints: made[4].to_string(),
        ledger: "unused".into(),
    };
    Fixture {
        store: DynamoStore::from_client(client.clone(), tables).with_saga(saga.clone()),
        journal: DynamoJournal::new(client.clone(), &saga.journal),
        outbox: DynamoOutbox::new(client, &saga.outbox),
        requests,
        faults,
        _tables: made,
    }
}

/// A run of a fresh document (source order `order`).
fn run(document: &DocumentId, order: u32) -> RunId {
    let source = SourceVersion {
        version_id: format!("v{order}"),
        sha256: "0".repeat(64),
    };
    RunId::new(document, &source, "fp-saga", 0)
}

fn document() -> (Tenant, DocumentId) {
    let tenant = Tenant::parse("acme").unwrap();
    let document = DocumentId::new(&tenant, &util::unique("invoice"));
    (tenant, document)
}

fn accepted(tenant: &Tenant, document: &DocumentId, run: &RunId) -> EventBody {
    EventBody {
        event_id: EventId::new(run, EventKind::Accepted),
        kind: EventKind::Accepted,
        tenant: tenant.clone(),
        document_id: document.clone(),
        run_id: run.clone(),
        source_order: "00000000000000000001".into(),
        result: format!("s3://derived/{run}/result.json"),
        result_sha256: "ab".repeat(32),
        invoice_key: "ik-0".into(),
        retracts: None,
    }
}

fn persisted(body: &EventBody) -> OutboxRecord {
    let prepared = OutboxRecord::prepare(body.clone());
    prepared.advanced(&Advance::Persist).unwrap().unwrap()
}

/// The journal after the promotion was claimed (version 1).
fn claimed(run: &RunId) -> Journal {
    let claim = Transition::Claim(Effect::ResultPromoted, EffectIds::default());
    Journal::new(run).next(&claim).unwrap().unwrap()
}

fn ctx() -> Context {
    test_context(Clock::System)
}

fn draft(run: &RunId, action: &str) -> AuditDraft {
    AuditDraft::new("docket/test", action, Some(run))
        .operation(&Effect::ResultPromoted.operation(run))
        .detail(serde_json::json!({"runId": run}))
}

fn count(requests: &Requests, op: &str) -> usize {
    requests.take().get(op).copied().unwrap_or(0)
}

#[tokio::test]
async fn two_journal_writers_of_one_version_one_wins_and_the_loser_rereads() {
    let f = fixture(Faults::none()).await;
    let (_, document) = document();
    let run = run(&document, 1);
    let first = claimed(&run);

    // Two writers derived version 1 from "no journal" at the same time.
    let (a, b) = tokio::join!(f.journal.put(&first), f.journal.put(&first));
    let mut outcomes = [a.unwrap(), b.unwrap()];
    outcomes.sort_by_key(|o| o.is_err());
    assert_eq!(outcomes, [Ok(()), Err(StaleJournal { stored: 1 })]);
    assert_eq!(count(&f.requests, "PutItem"), 2, "one write each, no retry");

    // The loser re-reads and applies its transition on the stored version.
    let stored = f
        .journal
        .journal(&run)
        .await
        .unwrap()
        .expect("the winner's");
    assert_eq!(stored, first);
    let settle = Transition::Settle(
        Effect::ResultPromoted,
        docket_core::saga::Outcome::Happened(EffectIds::default()),
    );
    let second = stored.next(&settle).unwrap().unwrap();
    assert_eq!(f.journal.put(&second).await.unwrap(), Ok(()));

    // In the store's transaction the same condition holds: a write derived from version 1 again
    // is refused, as one TransactWriteItems, and nothing moves.
    let stale = first.next(&settle).unwrap().unwrap();
    let refused = f.store.commit(vec![Change::Journal(stale)]).await.unwrap();
    assert_eq!(refused, Err(Refused { index: 0 }));
    let sent = f.requests.take();
    assert_eq!(
        (
            sent.get("GetItem"),
            sent.get("PutItem"),
            sent.get("TransactWriteItems")
        ),
        (Some(&1), Some(&1), Some(&1))
    );
    let now = f.journal.journal(&run).await.unwrap().unwrap();
    assert_eq!(now.version, 2);
    assert_eq!(now, second);
}

#[tokio::test]
async fn the_outbox_persists_an_event_once_and_moves_it_forward_only() {
    let f = fixture(Faults::none()).await;
    let (tenant, document) = document();
    let run = run(&document, 1);
    let body = accepted(&tenant, &document, &run);
    let cutoff_before = time::OffsetDateTime::now_utc();

    let first = f
        .outbox
        .persist(OutboxRecord::prepare(body.clone()))
        .await
        .unwrap();
    assert_eq!(first.delivery, Delivery::Persisted);
    // A second persist of the same event (another body: a bug or a replay) keeps the first.
    let other = EventBody {
        invoice_key: "ik-other".into(),
        ..body.clone()
    };
    let again = f
        .outbox
        .persist(OutboxRecord::prepare(other))
        .await
        .unwrap();
    assert_eq!(again, first);
    assert_eq!(count(&f.requests, "PutItem"), 2);
    assert_eq!(
        f.outbox.record(&body.event_id).await.unwrap(),
        Some(first.clone())
    );

    // A sweeper finds it by Query while it is persisted...
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let epoch = time::OffsetDateTime::UNIX_EPOCH;
    let stale = f
        .outbox
        .entered_between(Delivery::Persisted, epoch, time::OffsetDateTime::now_utc())
        .await
        .unwrap();
    assert!(
        stale.iter().any(|r| r.body.event_id == body.event_id),
        "{stale:?}"
    );
    let none = f
        .outbox
        .entered_between(Delivery::Persisted, epoch, cutoff_before)
        .await
        .unwrap();
    assert!(!none.iter().any(|r| r.body.event_id == body.event_id));
    let sent = f.requests.take();
    assert_eq!((sent.get("Query"), sent.get("Scan")), (Some(&2), None));

    // ...and moves it forward once: a writer that read `persisted` after it moved is refused.
    let accepted_move = first
        .advanced(&Advance::ProviderAccepted("e-1".into()))
        .unwrap()
        .unwrap();
    let change = |record: &OutboxRecord| Change::Outbox {
        record: record.clone(),
        from: Some(Delivery::Persisted),
    };
    assert_eq!(
        f.store.commit(vec![change(&accepted_move)]).await.unwrap(),
        Ok(())
    );
    let late = first
        .advanced(&Advance::ProviderAccepted("e-2".into()))
        .unwrap()
        .unwrap();
    assert_eq!(
        f.store.commit(vec![change(&late)]).await.unwrap(),
        Err(Refused { index: 0 })
    );
    let stored = f.outbox.record(&body.event_id).await.unwrap().unwrap();
    assert_eq!(
        (stored.delivery, stored.entry_id.as_deref()),
        (Delivery::ProviderAccepted, Some("e-1"))
    );
    // A persist of an event that has a record is refused in a transaction too.
    let persist = Change::Outbox {
        record: persisted(&body),
        from: None,
    };
    assert_eq!(
        f.store.commit(vec![persist]).await.unwrap(),
        Err(Refused { index: 0 })
    );
    // No longer persisted: the relay leaves it; it is found among the published ones that
    // entered their state since the move, and not among those that entered it before.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let now = time::OffsetDateTime::now_utc();
    let swept = f
        .outbox
        .entered_between(Delivery::Persisted, epoch, now)
        .await
        .unwrap();
    assert!(!swept.iter().any(|r| r.body.event_id == body.event_id));
    let accepted = Delivery::ProviderAccepted;
    let since_move = f
        .outbox
        .entered_between(accepted, now - time::Duration::minutes(1), now)
        .await
        .unwrap();
    assert!(since_move.iter().any(|r| r.body.event_id == body.event_id));
    let before_move = f
        .outbox
        .entered_between(accepted, epoch, cutoff_before)
        .await
        .unwrap();
    assert!(!before_move.iter().any(|r| r.body.event_id == body.event_id));
}

#[tokio::test]
async fn a_restore_is_refused_when_a_newer_run_is_current() {
    let f = fixture(Faults::none()).await;
    let (tenant, document) = document();
    let (older, newer) = (run(&document, 1), run(&document, 2));
    let promote = |run: &RunId, order: &str| {
        Change::Promote(DocumentRecord {
            document_id: document.clone(),
            tenant: tenant.clone(),
            current_run_id: run.clone(),
            source_order: order.into(),
            retracted_run_id: None,
        })
    };
    let restore = |run: &RunId, previous: Option<PreviousResult>| Change::Restore {
        document: document.clone(),
        run: run.clone(),
        previous,
        retracted: false,
    };
    f.store
        .commit(vec![promote(&older, "01")])
        .await
        .unwrap()
        .unwrap();
    f.store
        .commit(vec![promote(&newer, "02")])
        .await
        .unwrap()
        .unwrap();

    // `older`'s compensation must not undo `newer`.
    let refused = f.store.commit(vec![restore(&older, None)]).await.unwrap();
    assert_eq!(refused, Err(Refused { index: 0 }));
    let current = f.store.document(&document).await.unwrap().unwrap();
    assert_eq!(current.current_run_id, newer);

    // `newer`'s own restore puts `older` back, once.
    let previous = PreviousResult {
        run_id: older.clone(),
        source_order: "01".into(),
    };
    let undo = restore(&newer, Some(previous.clone()));
    assert_eq!(f.store.commit(vec![undo.clone()]).await.unwrap(), Ok(()));
    let current = f.store.document(&document).await.unwrap().unwrap();
    assert_eq!(
        (current.current_run_id, current.source_order.as_str()),
        (older.clone(), "01")
    );
    assert_eq!(
        f.store.commit(vec![undo]).await.unwrap(),
        Err(Refused { index: 0 }),
        "a second restore finds `newer` no longer current"
    );
    // With no previous result, the restore removes the current one.
    f.store
        .commit(vec![restore(&older, None)])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(f.store.document(&document).await.unwrap(), None);
}

#[tokio::test]
async fn a_commit_whose_audit_append_is_refused_writes_no_journal_or_outbox_item() {
    let f = fixture(Faults::none()).await;
    let (tenant, document) = document();
    let run = run(&document, 1);
    let body = accepted(&tenant, &document, &run);
    let first = seal(
        &document,
        None,
        "2026-12-01T00:00:00Z".into(),
        draft(&run, "run.accepted"),
    );
    f.store
        .commit(vec![Change::Audit(first.clone())])
        .await
        .unwrap()
        .unwrap();

    // The saga's writes with an entry whose seq is taken: the whole transaction is refused.
    let saga_changes = || {
        vec![
            Change::Journal(claimed(&run)),
            Change::Outbox {
                record: persisted(&body),
                from: None,
            },
        ]
    };
    let forked = seal(
        &document,
        None,
        "2026-12-01T00:00:01Z".into(),
        draft(&run, "result.promoted"),
    );
    let mut changes = saga_changes();
    changes.push(Change::Audit(forked));
    assert_eq!(
        f.store.commit(changes).await.unwrap(),
        Err(Refused { index: 2 })
    );
    assert_eq!(f.journal.journal(&run).await.unwrap(), None);
    assert_eq!(f.outbox.record(&body.event_id).await.unwrap(), None);
    assert_eq!(
        f.store.audit_entries(&document).await.unwrap(),
        std::slice::from_ref(&first)
    );

    // The same writes with the next seq land together: the reads above would have seen them.
    let next = seal(
        &document,
        Some(&first.checkpoint()),
        "2026-12-01T00:00:02Z".into(),
        draft(&run, "result.promoted"),
    );
    let mut changes = saga_changes();
    changes.push(Change::Audit(next));
    assert_eq!(f.store.commit(changes).await.unwrap(), Ok(()));
    assert_eq!(f.journal.journal(&run).await.unwrap(), Some(claimed(&run)));
    assert_eq!(
        f.outbox.record(&body.event_id).await.unwrap(),
        Some(persisted(&body))
    );
    assert_eq!(f.store.audit_entries(&document).await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_lost_answer_after_a_committed_saga_transaction_is_reconciled_by_reading_back() {
    let faults = Faults::builder()
        .rule(Rule::lose_response("dynamodb", "TransactWriteItems").nth(1))
        .build();
    let f = fixture(faults).await;
    let (tenant, document) = document();
    let run = run(&document, 1);
    let body = accepted(&tenant, &document, &run);
    let changes = vec![
        Change::Journal(claimed(&run)),
        Change::Outbox {
            record: persisted(&body),
            from: None,
        },
    ];

    let entry = record_guarded(
        &f.store,
        &ctx(),
        &document,
        changes,
        draft(&run, "result.promoted"),
    )
    .await
    .expect("reconciled, not an error")
    .expect("not refused");
    assert_eq!(f.faults.injected(), 1, "the answer of the commit was lost");
    let sent = f.requests.take();
    assert_eq!(
        sent.get("TransactWriteItems"),
        Some(&1),
        "one transaction sent, none repeated: {sent:?}"
    );
    assert_eq!(f.journal.journal(&run).await.unwrap(), Some(claimed(&run)));
    assert_eq!(
        f.outbox.record(&body.event_id).await.unwrap(),
        Some(persisted(&body))
    );
    assert_eq!(f.store.audit_entries(&document).await.unwrap(), [entry]);
}
