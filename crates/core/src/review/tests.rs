use std::collections::BTreeMap;

use serde_json::json;
use time::OffsetDateTime;

use super::*;
use crate::model::fields::Extraction;
use crate::ids::SourceVersion;
use crate::model::run::MAX_TOKEN_CHARS;
use crate::validate::LOW_CONFIDENCE;

/// 2026-03-20T09:46:40Z, as unix seconds.
pub(crate) const T0: i64 = 1_774_000_000;

pub(crate) fn instant(secs: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(secs).unwrap()
}

pub(crate) fn at(secs: i64) -> String {
    rfc3339(instant(secs))
}

pub(crate) fn reviewer(id: &str, tenant: &str) -> Reviewer {
    Reviewer::new(id, Tenant::parse(tenant).unwrap()).unwrap()
}

fn config() -> PipelineConfig {
    PipelineConfig::builtin()
}

fn field(value: &str, confidence: f64, line: usize) -> Field {
    Field {
        value: value.into(),
        confidence,
        page: 1,
        line,
    }
}

fn run_input(tenant: &str, name: &str) -> RunInput {
    let tenant = Tenant::parse(tenant).unwrap();
    let document_id = DocumentId::new(&tenant, name);
    let source = SourceVersion {
        version_id: "v1".into(),
        sha256: "ab".repeat(32),
    };
    RunInput {
        run_id: RunId::new(&document_id, &source, "cfg-test", 0),
        raw: ObjectRef {
            bucket: "raw".into(),
            key: format!("inbox/{tenant}/{name}"),
            version_id: Some("v1".into()),
        },
        tenant,
        document_id,
        sha256: source.sha256,
        source_order: "00000001".into(),
        config_fingerprint: "cfg-test".into(),
    }
}

/// A report that needs review: the total was read with low confidence, no invoice number.
fn needs_review() -> ValidationReport {
    let mut extraction = Extraction::default();
    for (name, f) in [
        (FieldName::Issuer, field("Acme Widgets Ltd", 0.95, 0)),
        (FieldName::InvoiceDate, field("2026-03-14", 0.99, 2)),
        (FieldName::TotalAmount, field("1234.50", 0.55, 7)),
        (FieldName::Currency, field("EUR", 0.99, 7)),
    ] {
        extraction.fields.insert(name, f);
    }
    ValidationReport {
        config_version: "test".into(),
        extraction,
        decision: Decision::NeedsReview {
            reasons: vec![Reason {
                code: LOW_CONFIDENCE.into(),
                field: Some(FieldName::TotalAmount),
                detail: "total_amount confidence 0.55 is below the minimum 0.80".into(),
            }],
        },
    }
}

/// A pending task of `tenant`'s document `name`, opened at T0 with a deadline a day later.
pub(crate) fn pending_task(tenant: &str, name: &str) -> ReviewTask {
    let input = run_input(tenant, name);
    ReviewTask::new(
        &input,
        &needs_review(),
        ObjectRef::new("normalized", format!("{}/ocr.json", input.run_id)),
        ObjectRef::new("derived", format!("{}/validation.json", input.run_id)),
        instant(T0),
        instant(T0 + 86_400),
    )
    .unwrap()
}

/// An approval by `id` of `tenant` correcting the total, at T0 + 30 s.
pub(crate) fn decision_by(id: &str, tenant: &str) -> ReviewDecision {
    ReviewDecision {
        reviewer: reviewer(id, tenant),
        decided_at: at(T0 + 30),
        verdict: Verdict::Approve {
            corrections: BTreeMap::from([(FieldName::TotalAmount, "1243.50".to_string())]),
            comment: None,
        },
        changes: Vec::new(),
    }
}

fn corrections(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn task_id_is_a_function_of_the_run_and_parses_back() {
    let a = run_input("acme", "a.pdf").run_id;
    let b = run_input("acme", "b.pdf").run_id;

    let id = task_id_for(&a);

    assert_eq!(id, task_id_for(&a));
    assert_ne!(id, task_id_for(&b));
    assert_eq!(id.as_str().len(), 36);
    assert!(id.as_str().starts_with("rev-"));
    assert_eq!(TaskId::parse(id.as_str()).unwrap(), id);
    for bad in ["", "rev-", "rev-XYZ", &a.to_string(), &format!("{id}0")] {
        assert_eq!(
            TaskId::parse(bad).unwrap_err().name(),
            "Fatal.BadInput",
            "{bad}"
        );
    }
    let json = serde_json::to_string(&id).unwrap();
    assert_eq!(serde_json::from_str::<TaskId>(&json).unwrap(), id);
    assert!(serde_json::from_str::<TaskId>("\"rev-nope\"").is_err());
}

#[test]
fn a_task_token_is_redacted_in_debug_and_display_and_only_exposed_explicitly() {
    // given a token, alone and inside the open request
    let token = TaskToken::new("AAAAKgAAAAIAAAAAAAAAAsecret-token").unwrap();
    let open = OpenTask {
        task: pending_task("acme", "a.pdf"),
        token: token.clone(),
    };
    // when it is formatted in every way a log line could
    let shown = [
        format!("{token:?}"),
        format!("{token}"),
        format!("{open:?}"),
        format!("{open:#?}"),
    ];
    // then the secret appears nowhere, and only expose() gives it
    assert_eq!(shown[0], "TaskToken(<redacted>)");
    assert_eq!(shown[1], "TaskToken(<redacted>)");
    for s in &shown {
        assert!(!s.contains("secret-token"), "{s}");
    }
    assert_eq!(token.expose(), "AAAAKgAAAAIAAAAAAAAAAsecret-token");
}

#[test]
fn a_task_token_does_not_implement_serialize() {
    // The static_assertions `assert_not_impl_any!` trick: if TaskToken implemented Serialize,
    // both impls would apply and `check` would be ambiguous, which does not compile.
    trait AmbiguousIfSerialize<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfSerialize<()> for T {}
    #[allow(dead_code)]
    struct IsSerialize;
    impl<T: ?Sized + Serialize> AmbiguousIfSerialize<IsSerialize> for T {}
    <TaskToken as AmbiguousIfSerialize<_>>::check();
}

#[test]
fn a_task_token_is_read_from_input_but_must_be_1_to_2048_characters() {
    let token: TaskToken = serde_json::from_value(json!("tok")).unwrap();
    assert_eq!(token.expose(), "tok");
    assert!(serde_json::from_value::<TaskToken>(json!("")).is_err());
    assert!(TaskToken::new("x".repeat(MAX_TOKEN_CHARS)).is_ok());
    let err = TaskToken::new("x".repeat(MAX_TOKEN_CHARS + 1)).unwrap_err();
    assert_eq!(err.name(), "Fatal.BadInput");
    assert!(!err.to_string().contains("xxx"));
}

#[test]
fn a_task_opened_from_a_needs_review_report_is_pending_with_reasons_fields_and_pointers() {
    let input = run_input("acme", "a.pdf");

    let task = pending_task("acme", "a.pdf");

    assert_eq!(task.task_id, task_id_for(&input.run_id));
    assert_eq!(task.tenant, input.tenant);
    assert_eq!(task.document_id, input.document_id);
    assert_eq!(task.run_id, input.run_id);
    assert_eq!(task.status, ReviewStatus::Pending);
    assert_eq!(task.reasons.len(), 1);
    assert_eq!(task.reasons[0].code, LOW_CONFIDENCE);
    assert_eq!(
        task.fields[&FieldName::TotalAmount],
        ReviewField {
            value: "1234.50".into(),
            confidence: 0.55,
            source: FieldSource::Extracted { page: 1, line: 7 },
        }
    );
    assert!(!task.fields.contains_key(&FieldName::InvoiceNumber));
    assert_eq!(task.document, input.raw);
    assert_eq!(task.ocr.bucket, "normalized");
    assert_eq!(task.report.bucket, "derived");
    assert_eq!(task.created_at, "2026-03-20T09:46:40.000Z");
    assert_eq!(task.deadline, "2026-03-21T09:46:40.000Z");
    assert_eq!(
        (&task.decision, &task.delivered_at, &task.expiry),
        (&None, &None, &None)
    );
}

#[test]
fn a_report_that_does_not_need_review_or_a_past_deadline_opens_no_task() {
    let input = run_input("acme", "a.pdf");
    let mut approved = needs_review();
    approved.decision = Decision::AutoApprove;
    let open = |report: &ValidationReport, deadline: i64| {
        ReviewTask::new(
            &input,
            report,
            ObjectRef::new("n", "o"),
            ObjectRef::new("d", "r"),
            instant(T0),
            instant(deadline),
        )
    };

    let not_needed = open(&approved, T0 + 60).unwrap_err();
    let past = open(&needs_review(), T0).unwrap_err();

    assert_eq!(not_needed.name(), "Fatal.BadInput");
    assert!(not_needed.to_string().contains("auto_approve"));
    assert_eq!(past.name(), "Fatal.BadInput");
}

#[test]
fn a_reviewer_of_another_tenant_gets_the_same_answer_as_for_a_missing_task() {
    let task = pending_task("acme", "a.pdf");

    let own = authorize(&reviewer("alice", "acme"), &task);
    let other = authorize(&reviewer("mallory", "globex"), &task).unwrap_err();

    assert_eq!(own, Ok(()));
    assert_eq!(other, not_found(&task.task_id));
    assert_eq!(other.name(), "Business.ReviewNotFound");
    assert_eq!(other.family(), crate::Family::Business);
}

#[test]
fn a_reviewer_id_must_be_present_and_printable() {
    let acme = Tenant::parse("acme").unwrap();
    assert!(Reviewer::new("alice@acme.example", acme.clone()).is_ok());
    for bad in ["", "a\nb", &"x".repeat(257)] {
        assert_eq!(
            Reviewer::new(bad, acme.clone()).unwrap_err().name(),
            "Fatal.BadInput"
        );
    }
}

#[test]
fn corrections_set_the_value_at_full_confidence_with_the_reviewer_as_source() {
    // given the extracted fields and a reviewer's corrections, one of a missing field
    let task = pending_task("acme", "a.pdf");
    let alice = reviewer("alice", "acme");
    let c = corrections(&[
        ("total_amount", " 1243.50 "),
        ("invoice_number", "INV-2026-0042"),
    ]);
    // when they are applied
    let fields = apply_corrections(&task.fields, &c, &alice, &config()).unwrap();
    // then the corrected fields are the reviewer's, trimmed, at confidence 1.0
    let by_alice = FieldSource::Reviewer { id: "alice".into() };
    assert_eq!(
        fields[&FieldName::TotalAmount],
        ReviewField {
            value: "1243.50".into(),
            confidence: 1.0,
            source: by_alice.clone(),
        }
    );
    assert_eq!(fields[&FieldName::InvoiceNumber].value, "INV-2026-0042");
    assert_eq!(fields[&FieldName::InvoiceNumber].source, by_alice);
    // and the others are as extracted
    assert_eq!(fields[&FieldName::Issuer], task.fields[&FieldName::Issuer]);
    assert_eq!(fields.len(), 5);
}

#[test]
fn a_correction_of_an_unknown_field_is_bad_input_naming_the_known_fields() {
    let task = pending_task("acme", "a.pdf");

    let err = apply_corrections(
        &task.fields,
        &corrections(&[("vat_number", "GB123")]),
        &reviewer("alice", "acme"),
        &config(),
    )
    .unwrap_err();

    assert_eq!(err.name(), "Fatal.BadInput");
    assert_eq!(
        err.to_string(),
        "bad input: cannot correct unknown field \"vat_number\"; fields are issuer, \
         invoice_number, invoice_date, total_amount, currency"
    );
}

#[test]
fn a_malformed_correction_is_bad_input_naming_the_field_and_form_but_not_the_value() {
    let task = pending_task("acme", "a.pdf");
    for (name, value, form) in [
        (
            "total_amount",
            "1.234,50",
            "a decimal amount with two decimals",
        ),
        (
            "total_amount",
            "1234.5",
            "a decimal amount with two decimals",
        ),
        (
            "total_amount",
            "twelve",
            "a decimal amount with two decimals",
        ),
        ("invoice_date", "14/03/2026", "an ISO date yyyy-mm-dd"),
        ("invoice_date", "2026-02-30", "an ISO date yyyy-mm-dd"),
        ("currency", "eur", "a three-letter ISO 4217 code"),
        ("currency", "XQZ", "a three-letter ISO 4217 code"),
        ("currency", "EURO", "a three-letter ISO 4217 code"),
        ("issuer", "7", "a company name"),
        ("invoice_number", "INV 42", "an invoice number"),
        ("invoice_number", "   ", "an invoice number"),
        ("issuer", "Acme\u{0}Ltd", "a company name"),
    ] {
        let err = apply_corrections(
            &task.fields,
            &corrections(&[(name, value)]),
            &reviewer("alice", "acme"),
            &config(),
        )
        .unwrap_err();
        let message = err.to_string();
        assert_eq!(err.name(), "Fatal.BadInput", "{name}={value}");
        assert!(
            message.contains(&format!("correction of {name} must be {form}")),
            "{message}"
        );
        assert!(
            value.trim().is_empty() || !message.contains(value),
            "{message}"
        );
    }
}

#[test]
fn a_recognised_currency_outside_the_allowed_list_can_be_approved() {
    // JPY is recognised by extraction but not allowed without review: a reviewer may approve it
    let config = config();
    assert!(config
        .extraction
        .currency_codes
        .contains(&"JPY".to_string()));
    assert!(!config
        .validation
        .allowed_currencies
        .contains(&"JPY".to_string()));
    let task = pending_task("acme", "a.pdf");

    let fields = apply_corrections(
        &task.fields,
        &corrections(&[("currency", "JPY")]),
        &reviewer("alice", "acme"),
        &config,
    )
    .unwrap();

    assert_eq!(fields[&FieldName::Currency].value, "JPY");
}

#[test]
fn diff_lists_new_and_changed_fields_in_field_order_and_skips_unchanged_ones() {
    let task = pending_task("acme", "a.pdf");
    let after = apply_corrections(
        &task.fields,
        &corrections(&[
            ("total_amount", "1243.50"),
            ("invoice_number", "INV-1"),
            ("issuer", "Acme Widgets Ltd"),
        ]),
        &reviewer("alice", "acme"),
        &config(),
    )
    .unwrap();

    let changes = diff(&task.fields, &after);

    assert_eq!(
        changes,
        vec![
            // the same value, confirmed: its confidence changed
            FieldChange {
                field: FieldName::Issuer,
                before: Some(FieldValue {
                    value: "Acme Widgets Ltd".into(),
                    confidence: 0.95
                }),
                after: FieldValue {
                    value: "Acme Widgets Ltd".into(),
                    confidence: 1.0
                },
            },
            FieldChange {
                field: FieldName::InvoiceNumber,
                before: None,
                after: FieldValue {
                    value: "INV-1".into(),
                    confidence: 1.0
                },
            },
            FieldChange {
                field: FieldName::TotalAmount,
                before: Some(FieldValue {
                    value: "1234.50".into(),
                    confidence: 0.55
                }),
                after: FieldValue {
                    value: "1243.50".into(),
                    confidence: 1.0
                },
            },
        ]
    );
    assert!(diff(&task.fields, &task.fields).is_empty());
}

#[test]
fn an_approval_carries_the_checked_corrections_the_diff_and_the_corrected_fields() {
    let task = pending_task("acme", "a.pdf");
    let alice = reviewer("alice", "acme");

    let (decision, fields) = ReviewDecision::approve(
        &task,
        &alice,
        &corrections(&[("total_amount", "1243.50 ")]),
        Some("  checked against the PDF  "),
        &config(),
        instant(T0 + 30),
    )
    .unwrap();

    assert_eq!(decision.reviewer, alice);
    assert_eq!(decision.decided_at, at(T0 + 30));
    assert_eq!(
        decision.verdict,
        Verdict::Approve {
            corrections: BTreeMap::from([(FieldName::TotalAmount, "1243.50".to_string())]),
            comment: Some("checked against the PDF".into()),
        }
    );
    assert_eq!(decision.changes.len(), 1);
    assert_eq!(decision.changes[0].field, FieldName::TotalAmount);
    assert_eq!(fields[&FieldName::TotalAmount].value, "1243.50");
    assert_eq!(
        decision.summary(),
        format!("approved by alice at {}", at(T0 + 30))
    );
}

#[test]
fn a_rejection_needs_a_reason_and_free_text_is_bounded() {
    let task = pending_task("acme", "a.pdf");
    let alice = reviewer("alice", "acme");
    let now = instant(T0);

    let rejected = ReviewDecision::reject(&alice, " duplicate of INV-7 ", now).unwrap();
    let no_reason = ReviewDecision::reject(&alice, "  ", now).unwrap_err();
    let long = "x".repeat(MAX_TEXT_CHARS + 1);
    let too_long =
        ReviewDecision::approve(&task, &alice, &BTreeMap::new(), Some(&long), &config(), now)
            .unwrap_err();
    let (blank_comment, _) =
        ReviewDecision::approve(&task, &alice, &BTreeMap::new(), Some(" "), &config(), now)
            .unwrap();

    assert_eq!(
        rejected.verdict,
        Verdict::Reject {
            reason: "duplicate of INV-7".into()
        }
    );
    assert!(rejected.changes.is_empty());
    assert!(!rejected.is_approval());
    assert_eq!(no_reason.name(), "Fatal.BadInput");
    assert_eq!(too_long.name(), "Fatal.BadInput");
    assert!(matches!(
        blank_comment.verdict,
        Verdict::Approve { comment: None, .. }
    ));
}

#[test]
fn a_pending_task_before_its_deadline_is_decided_by_its_tenants_reviewer() {
    let task = pending_task("acme", "a.pdf");
    let decision = decision_by("alice", "acme");

    let decided = decide(&task, decision.clone(), instant(T0 + 30))
        .unwrap()
        .unwrap();

    assert_eq!(decided.status, ReviewStatus::Decided);
    assert_eq!(decided.decision, Some(decision));
    assert_eq!(
        decided.fields, task.fields,
        "the extracted fields stay as found"
    );
}

#[test]
fn a_second_decision_is_refused_with_the_first_one_which_stands() {
    // given a task alice approved
    let task = pending_task("acme", "a.pdf");
    let first = decision_by("alice", "acme");
    let decided = decide(&task, first.clone(), instant(T0 + 30))
        .unwrap()
        .unwrap();
    // when bob rejects it afterwards
    let bob = ReviewDecision::reject(&reviewer("bob", "acme"), "wrong", instant(T0 + 40)).unwrap();
    let refused = decide(&decided, bob, instant(T0 + 40))
        .unwrap()
        .unwrap_err();
    let repeated = apply_decision(&decided, first.clone()).unwrap();
    // then he is told it was already decided, and by whom
    let Refusal::AlreadyDecided(recorded) = &refused else {
        panic!("expected AlreadyDecided, got {refused:?}")
    };
    assert_eq!(recorded.decision, Some(first));
    let err = refused.error();
    assert_eq!(err.name(), "Conflict.AlreadyDecided");
    assert_eq!(
        err.to_string(),
        format!(
            "already decided: review task {} was already approved by alice at {}",
            task.task_id,
            at(T0 + 30)
        )
    );
    // while alice's own decision, repeated after a lost acknowledgement, is acknowledged
    assert_eq!(repeated, Ok(decided));
}

#[test]
fn a_decision_after_the_deadline_or_on_an_expired_task_is_refused_as_expired() {
    let task = pending_task("acme", "a.pdf");
    let expired = match expire(
        &task,
        &Expiry {
            reason: "States.Timeout".into(),
            at: at(T0 + 100),
        },
    ) {
        ExpireOutcome::Expired(t) => t,
        other => panic!("expected Expired, got {other:?}"),
    };

    let late = decide(&task, decision_by("alice", "acme"), instant(T0 + 86_401))
        .unwrap()
        .unwrap_err();
    let gone = decide(&expired, decision_by("alice", "acme"), instant(T0 + 200))
        .unwrap()
        .unwrap_err();
    let on_time = decide(&task, decision_by("alice", "acme"), instant(T0 + 86_400)).unwrap();

    assert_eq!(late, Refusal::Expired(task.clone()));
    assert_eq!(late.error().name(), "Conflict.ReviewExpired");
    assert!(late.error().to_string().contains("passed its deadline"));
    assert_eq!(gone, Refusal::Expired(expired));
    assert!(gone.error().to_string().contains("States.Timeout"));
    assert!(on_time.is_ok(), "the deadline itself is still in time");
}

#[test]
fn a_decision_by_another_tenant_is_not_found_whatever_the_status() {
    let task = pending_task("acme", "a.pdf");
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();

    for t in [&task, &decided] {
        let err = decide(t, decision_by("mallory", "globex"), instant(T0 + 30)).unwrap_err();
        assert_eq!(err, not_found(&task.task_id));
    }
}

#[test]
fn reopening_a_pending_task_moves_its_deadline_and_a_closed_one_stays_as_recorded() {
    let task = pending_task("acme", "a.pdf");
    let mut retry = task.clone();
    retry.deadline = at(T0 + 90_000);
    retry.created_at = at(T0 + 3_600);
    let open = OpenTask {
        task: retry,
        token: TaskToken::new("token-2").unwrap(),
    };
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();
    let mut foreign = task.clone();
    foreign.run_id = run_input("acme", "b.pdf").run_id;

    let reopened = reopen(&task, &open).unwrap();
    let closed = reopen(&decided, &open).unwrap();
    let corrupt = reopen(&foreign, &open).unwrap_err();

    let mut expected = task.clone();
    expected.deadline = at(T0 + 90_000);
    assert_eq!(reopened, Opened::Reopened(expected));
    assert_eq!(closed, Opened::Closed(decided));
    assert_eq!(corrupt.name(), "Fatal.Internal");
}

#[test]
fn expiry_applies_to_pending_and_undelivered_decisions_only() {
    let task = pending_task("acme", "a.pdf");
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();
    let delivered = deliver(&decided, &at(T0 + 31)).unwrap();
    let expiry = Expiry {
        reason: "TaskTimedOut".into(),
        at: at(T0 + 40),
    };

    let from_pending = expire(&task, &expiry);
    let from_decided = expire(&decided, &expiry);
    let from_delivered = expire(&delivered, &expiry);
    let repeated = expire(from_pending.task(), &expiry);
    let other_reason = Expiry {
        reason: "States.Timeout".into(),
        at: at(T0 + 50),
    };
    let again = expire(from_pending.task(), &other_reason);

    let ExpireOutcome::Expired(t) = &from_pending else {
        panic!("expected Expired, got {from_pending:?}")
    };
    assert_eq!(
        (t.status, t.expiry.as_ref()),
        (ReviewStatus::Expired, Some(&expiry))
    );
    let ExpireOutcome::Expired(t) = &from_decided else {
        panic!("expected Expired, got {from_decided:?}")
    };
    assert_eq!(t.status, ReviewStatus::Expired);
    assert_eq!(
        t.decision, decided.decision,
        "the late decision stays for audit"
    );
    assert_eq!(from_delivered, ExpireOutcome::Delivered(delivered));
    assert_eq!(
        repeated, from_pending,
        "the same expiry repeated is acknowledged"
    );
    assert_eq!(
        again,
        ExpireOutcome::AlreadyExpired(from_pending.task().clone())
    );
}

#[test]
fn delivery_is_recorded_once_on_a_decided_task_only() {
    let task = pending_task("acme", "a.pdf");
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();
    let expired = expire(
        &decided,
        &Expiry {
            reason: "InvalidToken".into(),
            at: at(T0 + 40),
        },
    )
    .task()
    .clone();

    let delivered = deliver(&decided, &at(T0 + 31)).unwrap();
    let repeated = deliver(&delivered, &at(T0 + 99)).unwrap();

    assert_eq!(delivered.delivered_at, Some(at(T0 + 31)));
    assert_eq!(repeated, delivered, "a repeat keeps the first time");
    assert_eq!(deliver(&task, "t").unwrap_err().name(), "Fatal.Internal");
    assert_eq!(
        deliver(&expired, "t").unwrap_err().name(),
        "Conflict.ReviewExpired"
    );
}

#[test]
fn approved_fields_are_the_recorded_corrections_over_the_extracted_fields() {
    let task = pending_task("acme", "a.pdf");
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();
    let rejected = apply_decision(
        &task,
        ReviewDecision::reject(&reviewer("bob", "acme"), "no", instant(T0)).unwrap(),
    )
    .unwrap()
    .unwrap();

    let fields = decided.approved_fields().unwrap();

    assert_eq!(fields[&FieldName::TotalAmount].value, "1243.50");
    assert_eq!(fields[&FieldName::TotalAmount].confidence, 1.0);
    assert_eq!(
        fields[&FieldName::Currency],
        task.fields[&FieldName::Currency]
    );
    assert_eq!(task.approved_fields(), None);
    assert_eq!(rejected.approved_fields(), None);
}

#[test]
fn a_task_serializes_camel_case_with_snake_case_status_and_round_trips() {
    let task = pending_task("acme", "a.pdf");
    let decided = apply_decision(&task, decision_by("alice", "acme"))
        .unwrap()
        .unwrap();

    let value = serde_json::to_value(&decided).unwrap();

    for key in [
        "taskId",
        "tenant",
        "documentId",
        "runId",
        "reasons",
        "fields",
        "document",
        "ocr",
        "report",
        "createdAt",
        "deadline",
        "status",
        "decision",
    ] {
        assert!(value.get(key).is_some(), "{key} missing in {value}");
    }
    assert_eq!(value["status"], "decided");
    assert_eq!(value["fields"]["total_amount"]["confidence"], 0.55);
    assert_eq!(
        value["fields"]["total_amount"]["source"],
        json!({"kind": "extracted", "page": 1, "line": 7})
    );
    assert_eq!(value["decision"]["verdict"], "approve");
    assert_eq!(value["decision"]["decidedAt"], at(T0 + 30));
    assert_eq!(value["decision"]["reviewer"]["tenant"], "acme");
    assert_eq!(
        value["decision"]["corrections"],
        json!({"total_amount": "1243.50"})
    );
    assert!(value.get("deliveredAt").is_none() && value.get("expiry").is_none());
    let back: ReviewTask = serde_json::from_value(value).unwrap();
    assert_eq!(back, decided);
    let statuses: Vec<_> = ReviewStatus::ALL
        .iter()
        .map(|s| serde_json::to_value(s).unwrap())
        .collect();
    assert_eq!(
        statuses,
        [json!("pending"), json!("decided"), json!("expired")]
    );
    for s in ReviewStatus::ALL {
        assert_eq!(ReviewStatus::parse(s.as_str()).unwrap(), s);
    }
}

#[test]
fn the_audit_detail_names_changed_fields_and_confidences_but_holds_no_values() {
    let task = pending_task("acme", "a.pdf");
    let (decision, _) = ReviewDecision::approve(
        &task,
        &reviewer("alice", "acme"),
        &corrections(&[("total_amount", "9876.54"), ("invoice_number", "SECRET-42")]),
        Some("private note"),
        &config(),
        instant(T0 + 30),
    )
    .unwrap();

    let detail = decision.audit_detail(&task.task_id);

    let text = detail.to_string();
    for content in ["9876.54", "1234.50", "SECRET-42", "private note"] {
        assert!(!text.contains(content), "{content} in {text}");
    }
    assert_eq!(detail["taskId"], task.task_id.as_str());
    assert_eq!(detail["reviewer"], "alice");
    assert_eq!(detail["verdict"], "approve");
    assert_eq!(
        detail["changes"],
        json!([
            {"field": "invoice_number", "added": true, "confidenceBefore": null, "confidenceAfter": 1.0},
            {"field": "total_amount", "added": false, "confidenceBefore": 0.55, "confidenceAfter": 1.0},
        ])
    );
    let recorded = serde_json::to_value(&decision).unwrap();
    assert_eq!(
        detail["decisionSha256"],
        sha256_hex(canonical_json(&recorded).as_bytes())
    );
}
