//! Ingest to route: the happy path, duplicates, versions, stale results, review and invalid
//! outcomes, hostile uploads.

use super::*;
use crate::ports::SagaJournal;
use crate::saga::{Effect, EventId, EventKind, Evidence};

/// Ingest answered that the run's execution already exists (it started none).
fn assert_found_existing(outcome: &IngestOutcome) {
    assert!(
        matches!(
            outcome,
            IngestOutcome::Started {
                execution: Started::AlreadyExists,
                ..
            }
        ),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn an_approved_invoice_ends_as_the_documents_current_result_with_a_verified_trail() {
    let w = world();
    let event = w.upload("inbox/acme/2026/inv-42.png", TIFF, "2026-11-30T10:00:00Z");
    w.script_ocr(
        "inbox/acme/2026/inv-42.png",
        ocr_of(&invoice_lines("1,234.50"), 0.97),
    );
    *w.ports.ocr.pending_polls.lock().unwrap() = 2;

    let outcome = w.ingest(&event).await;
    let input = w.input_of(&outcome);
    let (status, result) = w.run(&input).await.unwrap();

    assert_eq!(status, "completed");
    let result = w.json(&result.unwrap()).await;
    assert_eq!(result["fields"]["invoice_number"]["value"], "INV-2026-0042");
    assert_eq!(result["fields"]["total_amount"]["value"], "1234.50");
    assert_eq!(result["fields"]["currency"]["value"], "EUR");
    assert_eq!(result["fields"]["invoice_date"]["value"], "2026-11-02");
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.outputs.len(), 1, "{:?}", run.outputs);
    let doc = w
        .ports
        .store
        .document(&input.document_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(doc.current_run_id, input.run_id);
    assert_eq!(
        w.chain_of(&input.document_id).await,
        [
            "document.accepted",
            "ocr.started",
            "ocr.completed",
            "validation.completed",
            "run.completed",
            "event.published"
        ]
    );
    // The completion promoted the result in the saga's journal and persisted the event, which
    // was then published once.
    let journal = w.ports.store.journal.journal(&input.run_id).await;
    let journal = journal.unwrap().unwrap();
    for effect in [Effect::ResultPromoted, Effect::EventPublished] {
        assert_eq!(
            journal.entry(effect).evidence,
            Evidence::Confirmed,
            "{effect:?}"
        );
    }
    let accepted = EventId::new(&input.run_id, EventKind::Accepted);
    assert_eq!(
        w.ports.events.published(EventKind::Accepted),
        [(accepted, None)]
    );
    // Six commits for one document, each one DynamoDB write request in the AWS adapter.
    assert_eq!(*w.ports.store.commits.lock().unwrap(), 6);
}

#[tokio::test]
async fn the_same_event_three_times_makes_one_run_one_execution_and_one_audit_entry() {
    let w = world();
    let event = w.upload("inbox/acme/inv.png", TIFF, "2026-11-30T10:00:00Z");

    let first = w.ingest(&event).await;
    let (second, third) = tokio::join!(w.ingest(&event), w.ingest(&event));

    assert!(matches!(
        first,
        IngestOutcome::Started {
            execution: Started::New,
            ..
        }
    ));
    for again in [second, third] {
        assert_found_existing(&again);
    }
    assert_eq!(w.ports.workflow.executions.lock().unwrap().len(), 1);
    assert_eq!(w.ports.store.runs().len(), 1);
    let input = w.input_of(&first);
    assert_eq!(w.chain_of(&input.document_id).await, ["document.accepted"]);
}

#[tokio::test]
async fn a_delivery_again_after_the_run_moved_on_or_ended_does_not_start_its_execution_again() {
    let w = world();
    let key = "inbox/acme/inv.png";
    w.script_ocr(key, ocr_of(&invoice_lines("10.00"), 0.97));
    let event = w.upload(key, TIFF, "2026-11-30T10:00:00Z");
    let input = w.input_of(&w.ingest(&event).await);
    w.run(&input).await.unwrap(); // its job ended: a job slot taken now would be held by none
    let starts = || *w.ports.workflow.start_calls.lock().unwrap();
    assert_eq!(starts(), 1);

    let again = w.ingest(&event).await;
    assert_found_existing(&again);
    assert_eq!(starts(), 1, "the running execution was started again");
    // Once it has ended, a delivery again does not ask either (a paced start would spend a turn).
    let name = input.run_id.to_string();
    w.ports.workflow.ended.lock().unwrap().insert(name);
    let again = w.ingest(&event).await;
    assert_found_existing(&again);
    assert_eq!(starts(), 1, "the ended execution was started again");
}

#[tokio::test]
async fn a_new_upload_of_the_same_key_is_a_new_run_and_both_outputs_stay() {
    let w = world();
    let key = "inbox/acme/inv.png";
    w.script_ocr(key, ocr_of(&invoice_lines("10.00"), 0.97));
    let v1 = w.upload(key, TIFF, "2026-11-30T10:00:00Z");
    let first = w.input_of(&w.ingest(&v1).await);
    let (_, result1) = w.run(&first).await.unwrap();
    let mut png2 = TIFF.to_vec();
    png2.push(1);
    let v2 = w.upload(key, &png2, "2026-11-30T10:05:00Z");
    let second = w.input_of(&w.ingest(&v2).await);
    let (status2, result2) = w.run(&second).await.unwrap();

    assert_eq!(first.document_id, second.document_id);
    assert_ne!(first.run_id, second.run_id);
    assert_eq!(status2, "completed");
    assert_ne!(result1, result2);
    assert!(
        w.ports.blobs.get(&result1.unwrap()).await.is_ok(),
        "old output kept"
    );
    let doc = w
        .ports
        .store
        .document(&second.document_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(doc.current_run_id, second.run_id);
}

#[tokio::test]
async fn an_older_version_finishing_last_is_stale_and_never_promoted() {
    let w = world();
    let old = w.ocr_ready().await;
    let new = w.newer_version().await;

    let (new_status, _) = w.run(&new).await.unwrap();
    let (old_status, _) = w.run(&old).await.unwrap();

    assert_eq!(new_status, "completed");
    assert_eq!(old_status, "stale");
    let doc = w
        .ports
        .store
        .document(&new.document_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(doc.current_run_id, new.run_id);
    assert_eq!(
        w.ports
            .store
            .run(&old.run_id)
            .await
            .unwrap()
            .unwrap()
            .status,
        RunStatus::Stale
    );
}

#[tokio::test]
async fn a_retried_route_reports_the_recorded_outcome_without_a_second_entry() {
    let w = world();
    let input = w.ocr_ready().await;
    w.run(&input).await.unwrap();
    let before = w.chain_of(&input.document_id).await.len();

    let report = w
        .ctx
        .layout
        .validation(&input.tenant, &input.document_id, &input.run_id);
    let again = route::run(&w.ports, &w.ctx, &input, &report, None)
        .await
        .unwrap();
    let start_again = w.start(&input).await.unwrap();

    assert_eq!(again.status, "completed");
    assert_eq!(w.ports.ocr.job_count(), 1, "one job");
    assert_eq!(
        *w.ports.ocr.start_calls.lock().unwrap(),
        1,
        "the ledger answered the replay: the provider was not asked again"
    );
    assert_eq!(start_again.job_id, "job-0");
    // Neither replay wrote an entry.
    assert_eq!(w.chain_of(&input.document_id).await.len(), before);
}

#[tokio::test]
async fn low_confidence_waits_for_review_and_missing_total_is_invalid() {
    let w = world();
    w.script_ocr(
        "inbox/acme/blurry.png",
        ocr_of(&invoice_lines("99.00"), 0.55),
    );
    let mut no_total = invoice_lines("1.00");
    no_total.pop();
    w.script_ocr("inbox/acme/no-total.png", ocr_of(&no_total, 0.97));
    let blurry = w.input_of(
        &w.ingest(&w.upload("inbox/acme/blurry.png", TIFF, "2026-11-30T10:00:00Z"))
            .await,
    );
    let broken = w.input_of(
        &w.ingest(&w.upload("inbox/acme/no-total.png", TIFF, "2026-11-30T10:00:00Z"))
            .await,
    );

    let (decision, result) = w.run(&blurry).await.unwrap();
    let invalid = w.run(&broken).await;

    assert_eq!(decision, "needs_review");
    assert!(result.is_none());
    assert_eq!(
        w.ports
            .store
            .run(&blurry.run_id)
            .await
            .unwrap()
            .unwrap()
            .status,
        RunStatus::AwaitingReview
    );
    assert!(
        matches!(invalid, Err(Error::DocumentInvalid(_))),
        "{invalid:?}"
    );
    let run = w.ports.store.run(&broken.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Invalid);
    assert_eq!(run.error.as_deref(), Some("Business.DocumentInvalid"));
    assert!(!w
        .ports
        .blobs
        .keys("derived")
        .iter()
        .any(|k| k.ends_with("result.json")));
}

#[tokio::test]
async fn an_unreadable_document_fails_its_run_with_the_ocr_error() {
    let w = world();
    w.script_ocr(
        "inbox/acme/bad.png",
        OcrPoll::Failed("BadDocumentException".into()),
    );
    let input = w.input_of(
        &w.ingest(&w.upload("inbox/acme/bad.png", TIFF, "2026-11-30T10:00:00Z"))
            .await,
    );

    let outcome = w.run(&input).await;

    assert!(matches!(outcome, Err(Error::OcrFailed(_))), "{outcome:?}");
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(
        (run.status, run.error.as_deref()),
        (RunStatus::Failed, Some("Business.OcrFailed"))
    );
    // and the OCR Task's wait was ended once, with that error (StartOcr catches it by name)
    let calls = w.callbacks();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].1, Err("Business.OcrFailed".to_string()));
}

#[tokio::test]
async fn a_job_of_more_pages_than_the_limit_fails_its_run_by_name_and_writes_no_ocr() {
    let mut w = world();
    w.ctx.config.limits.max_pages = 2;
    let page = |number| crate::ocr::Page {
        number,
        lines: vec![],
    };
    let long = crate::ocr::OcrDocument {
        engine: "test".into(),
        pages: (1..=3).map(page).collect(),
    };
    // A TIFF: ingest cannot count its pages, so only the job's answer tells them.
    w.script_ocr("inbox/acme/long.tiff", OcrPoll::Succeeded(long));
    let input = w.input_of(
        &w.ingest(&w.upload("inbox/acme/long.tiff", TIFF, "2026-11-30T10:00:00Z"))
            .await,
    );

    let outcome = w.run(&input).await;

    assert!(
        matches!(outcome, Err(Error::TooManyPages { .. })),
        "{outcome:?}"
    );
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(
        (run.status, run.error.as_deref()),
        (RunStatus::Failed, Some("Business.TooManyPages"))
    );
    let calls = w.callbacks();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].1, Err("Business.TooManyPages".to_string()));
    let entries = w.entries(&input.document_id).await;
    let failed: Vec<_> = entries
        .iter()
        .filter(|e| e.draft.action == "ocr.failed")
        .collect();
    assert_eq!(failed.len(), 1, "{entries:?}");
    assert!(w.ports.blobs.keys("normalized").is_empty());
    // and the upload stays where it was
    assert!(w.ports.blobs.head(&input.raw).await.unwrap().is_some());
}

#[tokio::test]
async fn hostile_uploads_are_quarantined_with_their_named_error_and_audited_once() {
    let w = world();
    let big = vec![b'%'; (w.ctx.config.limits.max_document_bytes + 1) as usize];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("inbox/acme/empty.pdf", vec![], "Business.EmptyDocument"),
        (
            "inbox/acme/header-only.pdf",
            b"%PDF-1.7\n".to_vec(),
            "Business.EmptyDocument",
        ),
        (
            "inbox/acme/notes.pdf",
            b"hello, this is not a pdf at all".to_vec(),
            "Business.UnsupportedDocumentType",
        ),
        ("inbox/acme/huge.pdf", big, "Business.DocumentTooLarge"),
        (
            "inbox/acme/../globex/x.pdf",
            TIFF.to_vec(),
            "Business.BadKey",
        ),
        ("inbox/acme//x.pdf", TIFF.to_vec(), "Business.BadKey"),
    ];
    for (key, body, expected) in cases {
        let event = w.upload(key, &body, "2026-11-30T10:00:00Z");

        let outcome = w.ingest(&event).await;
        let again = w.ingest(&event).await;

        let IngestOutcome::Quarantined {
            document_id,
            error,
            quarantine,
        } = outcome
        else {
            panic!("{key}: not quarantined: {outcome:?}");
        };
        assert_eq!(error, expected, "{key}");
        assert_eq!(
            again,
            IngestOutcome::Quarantined {
                document_id: document_id.clone(),
                error,
                quarantine: quarantine.clone()
            }
        );
        let meta = w
            .ports
            .blobs
            .metadata("raw", &quarantine.key)
            .expect("quarantine copy");
        assert_eq!(meta["docket-error"], expected);
        assert!(
            w.ports
                .blobs
                .head(&ObjectRef::new("raw", key))
                .await
                .unwrap()
                .is_some(),
            "raw kept"
        );
        assert_eq!(
            w.chain_of(&document_id).await,
            ["document.quarantined"],
            "{key}"
        );
    }
    assert!(w.ports.workflow.executions.lock().unwrap().is_empty());
}

#[tokio::test]
async fn keys_with_spaces_plus_and_unicode_are_decoded_and_accepted() {
    let w = world();
    for (encoded, decoded) in [
        ("inbox/acme/my+invoice.png", "inbox/acme/my invoice.png"),
        ("inbox/acme/a%2Bb.png", "inbox/acme/a+b.png"),
        ("inbox/acme/r%C3%A9sum%C3%A9.png", "inbox/acme/résumé.png"),
    ] {
        let mut event = w.upload(decoded, TIFF, "2026-11-30T10:00:00Z");
        event.key = encoded.into();

        let outcome = w.ingest(&event).await;

        let input = w.input_of(&outcome);
        assert_eq!(input.raw.key, decoded);
    }
}
