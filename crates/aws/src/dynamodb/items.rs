//! Runs, documents, audit entries and checkpoints as DynamoDB items, and back. A stored item
//! that cannot be read back is a corrupt record (`Fatal.Internal`).

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::types::AttributeValue;
use docket_core::audit::{AuditEntry, Checkpoint};
use docket_core::ids::{DocumentId, RunId, SourceVersion, Tenant};
use docket_core::model::run::ObjectRef;
use docket_core::ports::{DocumentRecord, RunRecord, RunStatus};
use docket_core::Error;

use crate::item::{opt_str, req_str, s, Item};

fn status_from(s: &str) -> Result<RunStatus, Error> {
    serde_json::from_value(serde_json::Value::String(s.into()))
        .map_err(|_| Error::Internal(format!("unknown run status {s:?}")))
}

/// A run's generation; a run stored before generations were recorded is generation 0.
fn generation_from(item: &Item) -> Result<u32, Error> {
    Ok(run_number(item, "generation")?.unwrap_or(0))
}

/// A run's page count, when ingest read it; `None` for a run stored before it was recorded.
fn pages_from(item: &Item) -> Result<Option<u32>, Error> {
    run_number(item, "pages")
}

/// The run's number attribute `name`, if present; one that is not a `u32` is an internal error.
fn run_number(item: &Item, name: &str) -> Result<Option<u32>, Error> {
    item.get(name)
        .map(|value| {
            value
                .as_n()
                .ok()
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| Error::Internal(format!("run {name} {value:?} is not a number")))
        })
        .transpose()
}

/// The attribute of a run (and of a ledger record) that is present only while it is a case for
/// an operator: its status. The sparse indexes [`BY_CASE`] hold only those items.
pub const CASE: &str = "case";

/// The sparse index of the runs table and of the ledger on [`CASE`] (hash `case`).
pub const BY_CASE: &str = "by-case";

pub(super) fn run_item(run: &RunRecord) -> Item {
    let outputs: HashMap<_, _> = run.outputs.iter().map(|(k, v)| (k.clone(), s(v))).collect();
    let mut item = HashMap::from([
        ("runId".into(), s(run.run_id.as_str())),
        ("documentId".into(), s(run.document_id.as_str())),
        ("tenant".into(), s(run.tenant.as_str())),
        ("versionId".into(), s(&run.source.version_id)),
        ("sha256".into(), s(&run.source.sha256)),
        ("rawBucket".into(), s(&run.raw.bucket)),
        ("rawKey".into(), s(&run.raw.key)),
        ("sourceOrder".into(), s(&run.source_order)),
        ("configFingerprint".into(), s(&run.config_fingerprint)),
        (
            "generation".into(),
            AttributeValue::N(run.generation.to_string()),
        ),
        ("status".into(), s(run.status.as_str())),
        ("createdAt".into(), s(&run.created_at)),
        ("outputs".into(), AttributeValue::M(outputs)),
    ]);
    if let Some(e) = &run.error {
        item.insert("error".into(), s(e));
    }
    if let Some(pages) = run.pages {
        item.insert("pages".into(), AttributeValue::N(pages.to_string()));
    }
    if run.status.is_case() {
        item.insert(CASE.into(), s(run.status.as_str()));
    }
    item
}

pub(super) fn run_from(item: &Item) -> Result<RunRecord, Error> {
    let outputs = match item.get("outputs") {
        Some(AttributeValue::M(m)) => m
            .iter()
            .filter_map(|(k, v)| v.as_s().ok().map(|v| (k.clone(), v.clone())))
            .collect(),
        _ => BTreeMap::new(),
    };
    let version_id = req_str(item, "versionId")?.to_string();
    Ok(RunRecord {
        run_id: RunId::parse(req_str(item, "runId")?)?,
        document_id: DocumentId::parse(req_str(item, "documentId")?)?,
        tenant: Tenant::parse(req_str(item, "tenant")?)?,
        source: SourceVersion {
            version_id: version_id.clone(),
            sha256: req_str(item, "sha256")?.to_string(),
        },
        raw: ObjectRef {
            bucket: req_str(item, "rawBucket")?.to_string(),
            key: req_str(item, "rawKey")?.to_string(),
            version_id: Some(version_id),
        },
        source_order: req_str(item, "sourceOrder")?.to_string(),
        config_fingerprint: req_str(item, "configFingerprint")?.to_string(),
        generation: generation_from(item)?,
        status: status_from(req_str(item, "status")?)?,
        created_at: req_str(item, "createdAt")?.to_string(),
        outputs,
        error: opt_str(item, "error").map(str::to_string),
        pages: pages_from(item)?,
    })
}

pub(super) fn audit_item(entry: &AuditEntry) -> Item {
    let json = serde_json::to_string(entry).expect("entries serialize");
    let mut item = HashMap::from([
        ("documentId".into(), s(entry.document_id.as_str())),
        ("seq".into(), AttributeValue::N(entry.seq.to_string())),
        ("action".into(), s(&entry.draft.action)),
        ("time".into(), s(&entry.time)),
        ("hash".into(), s(&entry.hash)),
        ("entry".into(), s(json)),
    ]);
    if let Some(run) = &entry.draft.run_id {
        item.insert("runId".into(), s(run.as_str()));
    }
    item
}

pub(super) fn audit_from(item: &Item) -> Result<AuditEntry, Error> {
    serde_json::from_str(req_str(item, "entry")?)
        .map_err(|e| Error::Internal(format!("stored audit entry unreadable: {e}")))
}

pub(super) fn document_from(item: &Item) -> Result<DocumentRecord, Error> {
    Ok(DocumentRecord {
        document_id: DocumentId::parse(req_str(item, "documentId")?)?,
        tenant: Tenant::parse(req_str(item, "tenant")?)?,
        current_run_id: RunId::parse(req_str(item, "currentRunId")?)?,
        source_order: req_str(item, "sourceOrder")?.to_string(),
        retracted_run_id: opt_str(item, "retractedRunId")
            .map(RunId::parse)
            .transpose()?,
    })
}

pub(super) fn checkpoint_from(item: &Item) -> Result<Checkpoint, Error> {
    let seq = item
        .get("seq")
        .and_then(|v| v.as_n().ok())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| Error::Internal("checkpoint without seq".into()))?;
    Ok(Checkpoint {
        seq,
        hash: req_str(item, "hash")?.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_number_attribute_is_absent_a_u32_or_an_internal_error() {
        let item = |v: Option<AttributeValue>| -> Item {
            v.map(|v| HashMap::from([("pages".to_string(), v)]))
                .unwrap_or_default()
        };
        assert_eq!(pages_from(&item(None)).unwrap(), None);
        assert_eq!(
            pages_from(&item(Some(AttributeValue::N("3".into())))).unwrap(),
            Some(3)
        );
        for bad in [
            AttributeValue::N("-1".into()),
            AttributeValue::S("3".into()),
        ] {
            let e = pages_from(&item(Some(bad))).unwrap_err();
            assert!(
                matches!(e, Error::Internal(ref m) if m.contains("run pages")),
                "{e}"
            );
        }
        // A run stored before generations were recorded is generation 0.
        assert_eq!(generation_from(&item(None)).unwrap(), 0);
    }
}
