use std::collections::BTreeMap;

use super::*;
use crate::ids::{DocumentId, Tenant};
use crate::ports::RunStatus;

fn tenant() -> Tenant {
    Tenant::parse("acme").unwrap()
}

fn request() -> Request {
    Request {
        tenant: tenant(),
        prefix: None,
        since: None,
        config_fingerprint: "cfg-new".into(),
        reason: "new total rule".into(),
        reocr: false,
    }
}

/// A run of `name`'s `version` under `config`, of `generation`, accepted at `created`.
fn run(name: &str, version: &str, config: &str, generation: u32, created: &str) -> RunRecord {
    let document = DocumentId::new(&tenant(), name);
    let source = SourceVersion {
        version_id: version.into(),
        sha256: format!("{version:0>64}"),
    };
    RunRecord {
        run_id: RunId::new(&document, &source, config, generation),
        document_id: document,
        tenant: tenant(),
        raw: ObjectRef {
            bucket: "raw".into(),
            key: format!("inbox/acme/{name}"),
            version_id: Some(version.into()),
        },
        source,
        source_order: generation_order(&format!("{created}|{version}"), generation),
        config_fingerprint: config.into(),
        generation,
        status: RunStatus::Completed,
        created_at: created.into(),
        outputs: BTreeMap::new(),
        error: None,
        pages: None,
    }
}

/// Where the tests' runs keep their OCR.
fn ocr_of(run: &RunRecord) -> ObjectRef {
    ObjectRef::new("normalized", format!("{}/ocr.json", run.run_id))
}

fn planned(request: &Request, docs: &[(RunRecord, Vec<RunRecord>)]) -> Vec<Item> {
    plan(
        request,
        ocr_of,
        docs.iter()
            .map(|(cur, runs)| (&cur.run_id, runs.as_slice())),
    )
}

#[test]
fn each_document_runs_its_current_version_again_as_the_next_generation() {
    let a = run("a.pdf", "v1", "cfg-old", 0, "2026-11-01T00:00:00Z");
    let b_old = run("b.pdf", "v1", "cfg-old", 0, "2026-11-01T00:00:00Z");
    let b = run("b.pdf", "v2", "cfg-old", 0, "2026-11-02T00:00:00Z");
    let b_again = run("b.pdf", "v2", "cfg-old", 1, "2026-11-03T00:00:00Z");
    let docs = vec![
        (a.clone(), vec![a.clone()]),
        (b.clone(), vec![b_old, b.clone(), b_again]),
    ];

    let items = planned(&request(), &docs);

    assert_eq!(items.len(), 2);
    let item_a = items
        .iter()
        .find(|i| i.document_id == a.document_id)
        .unwrap();
    assert_eq!((item_a.generation, &item_a.from_run_id), (1, &a.run_id));
    let item_b = items
        .iter()
        .find(|i| i.document_id == b.document_id)
        .unwrap();
    // b's v2 has generations 0 and 1 already: the next is 2, of v2 (the current run's version).
    assert_eq!(item_b.generation, 2);
    assert_eq!(item_b.raw.version_id.as_deref(), Some("v2"));
    let input = item_b.run_input("cfg-new");
    assert_eq!(input.run_id, item_b.run_id("cfg-new"));
    assert_ne!(input.run_id, b.run_id);
    assert_eq!(input.config_fingerprint, "cfg-new");
    assert_eq!(input.raw, b.raw);
    // The new run may reuse its source version's stored OCR, unless the request says reocr.
    assert_eq!(input.reuse_ocr, Some(ocr_of(&b)));
    let reocr = Request {
        reocr: true,
        ..request()
    };
    let items = planned(&reocr, &docs);
    assert!(items.iter().all(|i| i.ocr.is_none()), "{items:?}");
    assert!(items
        .iter()
        .all(|i| i.run_input("cfg-new").reuse_ocr.is_none()));
    assert_ne!(reocr.id(), request().id());
}

#[test]
fn a_one_page_documents_new_run_is_read_synchronously_with_or_without_reocr() {
    let one_page = RunRecord {
        pages: Some(1),
        ..run("one.png", "v1", "c", 0, "2026-06-01T00:00:00Z")
    };
    let unknown = run("scan.pdf", "v1", "c", 0, "2026-06-01T00:00:00Z");
    let docs = vec![
        (one_page.clone(), vec![one_page.clone()]),
        (unknown.clone(), vec![unknown.clone()]),
    ];
    for request in [
        request(),
        Request {
            reocr: true,
            ..request()
        },
    ] {
        let items = planned(&request, &docs);
        let inputs: Vec<_> = items.iter().map(|i| i.run_input("cfg-new")).collect();
        let by_document = |run: &RunRecord| {
            inputs
                .iter()
                .find(|i| i.document_id == run.document_id)
                .unwrap_or_else(|| panic!("{inputs:?}"))
        };
        assert!(by_document(&one_page).one_page(), "{inputs:?}");
        assert!(!by_document(&unknown).one_page(), "{inputs:?}");
        // The manifest line carries the count to the Map's runs.
        let line = to_jsonl(&items);
        assert!(line.contains("\"pages\":1"), "{line}");
    }
}

#[test]
fn the_prefix_and_the_date_select_and_a_document_without_its_current_run_is_left_out() {
    let old = run("2025/a.pdf", "v1", "c", 0, "2025-06-01T00:00:00Z");
    let new = run("2026/b.pdf", "v1", "c", 0, "2026-06-01T00:00:00Z");
    let lost = run("2026/c.pdf", "v1", "c", 0, "2026-06-01T00:00:00Z");
    let docs = vec![
        (old.clone(), vec![old.clone()]),
        (new.clone(), vec![new.clone()]),
        (lost.clone(), vec![]),
    ];

    let by_prefix = Request {
        prefix: Some("2026/".into()),
        ..request()
    };
    let by_date = Request {
        since: Some("2026-01-01".into()),
        ..request()
    };
    let other_tenant = Request {
        tenant: Tenant::parse("other").unwrap(),
        ..request()
    };

    let docs_of = |items: Vec<Item>| items.into_iter().map(|i| i.document_id).collect::<Vec<_>>();
    assert_eq!(
        docs_of(planned(&by_prefix, &docs)),
        vec![new.document_id.clone()]
    );
    assert_eq!(
        docs_of(planned(&by_date, &docs)),
        vec![new.document_id.clone()]
    );
    assert!(planned(&other_tenant, &docs).is_empty());
    assert_eq!(
        planned(&request(), &docs).len(),
        2,
        "all of acme's with a current run"
    );
}

#[test]
fn a_later_generation_sorts_after_its_own_version_and_before_any_later_version() {
    let v1 = "2026-11-01T00:00:00Z|0001";
    let v2 = "2026-11-02T00:00:00Z|0002";
    let g1 = generation_order(v1, 1);
    let g2 = generation_order(&g1, 2);
    assert!(v1 < g1.as_str() && g1 < g2, "{v1} < {g1} < {g2}");
    assert!(g2.as_str() < v2, "{g2} < {v2}");
    assert_eq!(base_order(&g2), v1);
    assert_eq!(generation_order(&g2, 0), v1);
    assert_eq!(generation_order(v1, 12), format!("{v1}|g000012"));
}

#[test]
fn the_same_request_has_the_same_id_and_any_change_another() {
    let id = request().id();
    assert_eq!(id, request().id());
    assert_eq!(ReprocessId::parse(id.as_str()).unwrap(), id);
    for other in [
        Request {
            reason: "another".into(),
            ..request()
        },
        Request {
            prefix: Some("x".into()),
            ..request()
        },
        Request {
            since: Some("2026-01-01".into()),
            ..request()
        },
        Request {
            config_fingerprint: "cfg-other".into(),
            ..request()
        },
    ] {
        assert_ne!(other.id(), id, "{other:?}");
    }
    assert!(ReprocessId::parse("rp-xyz").is_err());
}

#[test]
fn a_request_needs_a_one_line_reason() {
    assert!(request().check().is_ok());
    for reason in ["", "  ", "two\nlines", &"x".repeat(MAX_REASON_CHARS + 1)] {
        let bad = Request {
            reason: reason.into(),
            ..request()
        };
        assert!(matches!(bad.check(), Err(Error::BadInput(_))), "{reason:?}");
    }
}

#[test]
fn the_manifest_reads_back_and_a_bad_line_is_named() {
    let a = run("a.pdf", "v1", "c", 0, "2026-11-01T00:00:00Z");
    let items = planned(&request(), &[(a.clone(), vec![a])]);
    let text = to_jsonl(&items);
    assert_eq!(from_jsonl(&text).unwrap(), items);
    let broken = format!("{text}{{\"documentId\": 1}}\n");
    let err = from_jsonl(&broken).unwrap_err();
    assert!(err.to_string().contains("manifest line 2"), "{err}");
}

#[test]
fn a_batch_reads_as_the_item_batcher_writes_it() {
    let a = run("a.pdf", "v1", "c", 0, "2026-11-01T00:00:00Z");
    let item = &planned(&request(), &[(a.clone(), vec![a])])[0];
    let batch = serde_json::json!({
        "Items": [item],
        "BatchInput": {
            "reprocessId": request().id(),
            "reason": "r",
            "requestedBy": {
                "operator": "olivia",
                "principal": "arn:aws:sts::000000000000:assumed-role/docket-operator/olivia"
            },
            "configFingerprint": "cfg-new"
        }
    });
    let batch: Batch = serde_json::from_value(batch).unwrap();
    assert_eq!(batch.items, vec![item.clone()]);
    assert_eq!(batch.order.reprocess_id, request().id());
}
