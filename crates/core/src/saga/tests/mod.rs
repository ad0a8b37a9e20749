//! The saga's pure rules: effect names here; journal transitions, their refusals and the
//! planner's order in `journal`; the outbox's forward-only delivery and the consumer's book in
//! `outbox`.

use serde_json::Value;

use super::outbox::invoice_key;
use super::*;
use crate::error::ErrorKind;
use crate::ids::{DocumentId, OperationId, RunId, SourceVersion, Tenant};
use crate::model::run::{ObjectRef, RunInput};
use crate::Error;

fn run_of(version: &str) -> RunId {
    crate::memory::test_run(&Tenant::parse("acme").unwrap(), "inv.png", version)
}

fn input_of(logical_key: &str, version: &str, order: &str) -> RunInput {
    let tenant = Tenant::parse("acme").unwrap();
    let document_id = DocumentId::new(&tenant, logical_key);
    let source = SourceVersion {
        version_id: version.into(),
        sha256: "ab".repeat(32),
    };
    RunInput {
        run_id: RunId::new(&document_id, &source, "pconfig", 0),
        tenant,
        document_id,
        raw: ObjectRef::new("raw", format!("inbox/acme/{logical_key}")),
        sha256: source.sha256,
        source_order: order.into(),
        config_fingerprint: "pconfig".into(),
        reuse_ocr: None,
        pages: None,
        read_at_ms: None,
    }
}

fn accepted(input: &RunInput, invoice_number: &str) -> EventBody {
    let result = ObjectRef::new("derived", format!("acme/{}/result.json", input.run_id));
    let key = invoice_key(&input.tenant, "ACME Supplies Ltd", invoice_number);
    EventBody::accepted(input, &result, &"cd".repeat(32), key)
}

fn event_ids() -> EffectIds {
    EffectIds {
        event_id: Some(EventId::new(&run_of("v1"), EventKind::Accepted)),
        ..EffectIds::default()
    }
}

/// `j` after `t`, which must change it.
/// When the tests' attempts are made.
const T0: time::OffsetDateTime = time::macros::datetime!(2026-12-02 09:00 UTC);

/// An attempt of `effect`'s compensation by a caller that saw `seen` attempts, at [`T0`].
fn attempt(effect: Effect, seen: u32) -> Transition {
    attempt_at(effect, seen, T0)
}

/// [`attempt`] at `at`.
fn attempt_at(effect: Effect, seen: u32, at: time::OffsetDateTime) -> Transition {
    Transition::Attempt { effect, seen, at }
}

fn step(j: &Journal, t: Transition) -> Journal {
    j.next(&t)
        .unwrap()
        .unwrap_or_else(|| panic!("{t:?} changed nothing"))
}

fn published(j: &Journal) -> Journal {
    let j = step(
        j,
        Transition::Claim(Effect::ResultPromoted, EffectIds::default()),
    );
    let j = step(
        &j,
        Transition::Settle(
            Effect::ResultPromoted,
            Outcome::Happened(EffectIds::default()),
        ),
    );
    let j = step(&j, Transition::Claim(Effect::EventPublished, event_ids()));
    let ids = EffectIds {
        entry_id: Some("entry-1".into()),
        ..event_ids()
    };
    step(
        &j,
        Transition::Settle(Effect::EventPublished, Outcome::Happened(ids)),
    )
}

#[test]
fn effect_and_status_names_are_stable_and_make_operation_ids() {
    let names: Vec<_> = Effect::ALL.iter().map(|e| e.name()).collect();
    assert_eq!(
        names,
        ["result.promoted", "event.published", "downstream.recorded"]
    );
    let run = run_of("v1");
    for effect in Effect::ALL {
        assert_eq!(Effect::parse(effect.name()).unwrap(), effect);
        assert_eq!(
            effect.operation(&run),
            OperationId::new(&run, "route", Some(effect.name()))
        );
        assert_ne!(effect.operation(&run), effect.compensation(&run));
        let json = serde_json::to_value(effect).unwrap();
        assert_eq!(json, effect.name());
    }
    let evidence = [
        Evidence::NotAttempted,
        Evidence::Uncertain,
        Evidence::Confirmed,
    ];
    let names: Vec<_> = evidence.iter().map(|e| e.name()).collect();
    assert_eq!(names, ["not-attempted", "uncertain", "confirmed"]);
    for e in evidence {
        assert_eq!(serde_json::to_value(e).unwrap(), e.name());
    }
    use CompensationStatus::*;
    for s in [
        NotRequired,
        Pending,
        Attempted,
        Committed,
        FailedManualReview,
    ] {
        assert_eq!(serde_json::to_value(s).unwrap(), s.name());
    }
    for end in [
        SagaEnd::Compensated,
        SagaEnd::CompensationFailed,
        SagaEnd::NotRequired,
    ] {
        assert_eq!(serde_json::to_value(end).unwrap(), end.name());
    }
    assert_eq!(FailedManualReview.name(), "failed-manual-review");
    assert_eq!(SagaEnd::CompensationFailed.name(), "compensation_failed");
}

mod journal;
mod outbox;

#[test]
fn a_journal_is_stored_with_the_stable_names_and_read_back_whole() {
    let run = run_of("v1");
    let previous = PreviousResult {
        run_id: run_of("v0"),
        source_order: "0".into(),
    };
    let ids = EffectIds {
        previous: Some(previous),
        ..EffectIds::default()
    };
    let j = Journal::new(&run)
        .next(&Transition::Claim(Effect::ResultPromoted, ids))
        .unwrap()
        .unwrap();
    let json = serde_json::to_value(&j).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["runId"], run.as_str());
    assert_eq!(json["documentId"], run.document_id().as_str());
    let first = &json["entries"][0];
    assert_eq!(first["effect"], "result.promoted");
    assert_eq!(first["evidence"], "uncertain");
    assert_eq!(first["compensation"], "not-required");
    assert_eq!(first["ids"]["previous"]["runId"], run_of("v0").as_str());
    assert_eq!(json["entries"][2]["effect"], "downstream.recorded");
    let back: Journal = serde_json::from_value(json).unwrap();
    assert_eq!(back, j);
}

#[test]
fn an_effect_prints_its_name_and_an_event_id_its_text() {
    assert_eq!(Effect::EventPublished.to_string(), "event.published");
    let id = EventId::new(&run_of("v1"), EventKind::Accepted);
    assert!(id.as_str().starts_with("ev-"), "{id}");
    assert_eq!(id.as_str(), id.to_string());
}
