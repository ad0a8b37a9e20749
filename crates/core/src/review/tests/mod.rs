//! The review module's tests: fixtures and the task's own (ids, token, opening, records) here;
//! corrections and decisions in `corrections.rs`, the task's rules in `rules.rs`.

use std::collections::BTreeMap;

use serde_json::json;
use time::OffsetDateTime;

use super::*;
use crate::config::PipelineConfig;
use crate::ids::{canonical_json, sha256_hex, DocumentId, RunId, SourceVersion, Tenant};
use crate::model::fields::{Extraction, Field, FieldName};
use crate::model::run::{ObjectRef, RunInput, TaskToken};
use crate::validate::{Decision, Reason, ValidationReport, LOW_CONFIDENCE};

mod corrections;
mod rules;

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

pub(super) fn config() -> PipelineConfig {
    PipelineConfig::builtin()
}

pub(super) fn field(value: &str, confidence: f64, line: usize) -> Field {
    Field {
        value: value.into(),
        confidence,
        page: 1,
        line,
    }
}

pub(super) fn run_input(tenant: &str, name: &str) -> RunInput {
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
        reuse_ocr: None,
        pages: None,
        read_at_ms: None,
    }
}

/// A report that needs review: the total was read with low confidence, no invoice number.
pub(super) fn needs_review() -> ValidationReport {
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

pub(super) fn corrections(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
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

#[test]
fn a_rejection_reason_of_exactly_the_limit_is_accepted_and_one_more_is_refused() {
    let reviewer = Reviewer::new("alice", Tenant::parse("acme").unwrap()).unwrap();
    let now = OffsetDateTime::UNIX_EPOCH;
    let at_limit = "x".repeat(MAX_TEXT_CHARS);
    assert!(ReviewDecision::reject(&reviewer, &at_limit, now).is_ok());
    let over = "x".repeat(MAX_TEXT_CHARS + 1);
    assert!(ReviewDecision::reject(&reviewer, &over, now).is_err());
}
