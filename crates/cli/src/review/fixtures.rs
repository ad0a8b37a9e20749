//! Review tasks as the API answers them, for the tests of every part of `docket review`.

use docket_core::review::ReviewTask;
use reqwest::Url;
use serde_json::{json, Value};

pub(super) const TASK: &str = "rev-0123456789abcdef0123456789abcdef";

pub(super) fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

pub(super) fn task_json(status: &str) -> Value {
    json!({
        "taskId": TASK,
        "tenant": "acme",
        "documentId": "d0123456789abcdef01234567",
        "runId": "d0123456789abcdef01234567-r0123456789abcdef0123",
        "reasons": [{"code": "low_confidence", "field": "total_amount", "detail": "0.62 < 0.80"}],
        "fields": {
            "total_amount": {"value": "12.00", "confidence": 0.62,
                             "source": {"kind": "extracted", "page": 1, "line": 12}},
            "currency": {"value": "EUR", "confidence": 0.99,
                         "source": {"kind": "extracted", "page": 1, "line": 13}}
        },
        "document": {"bucket": "raw", "key": "inbox/acme/a.pdf", "versionId": "v1"},
        "ocr": {"bucket": "normalized", "key": "acme/d/r/ocr.json"},
        "report": {"bucket": "derived", "key": "acme/d/r/validation.json"},
        "createdAt": "2026-03-01T10:00:00.000Z",
        "deadline": "2026-03-02T10:00:00.000Z",
        "status": status
    })
}

pub(super) fn decided_json() -> Value {
    let mut t = task_json("decided");
    t["decision"] = json!({
        "reviewer": {"id": "alice", "tenant": "acme"},
        "decidedAt": "2026-03-01T11:00:00.000Z",
        "verdict": "approve",
        "corrections": {"total_amount": "120.00"},
        "comment": "typo on the scan",
        "changes": [{"field": "total_amount",
                     "before": {"value": "12.00", "confidence": 0.62},
                     "after": {"value": "120.00", "confidence": 1.0}}]
    });
    t
}

pub(super) fn task(v: Value) -> ReviewTask {
    serde_json::from_value(v).unwrap()
}
