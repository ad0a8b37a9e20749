//! A review task as a DynamoDB item: its attributes, the index's projection, and the task read
//! back from an item without the token.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use docket_core::ids::{DocumentId, RunId, Tenant};
use docket_core::review::{ReviewStatus, ReviewTask, TaskId};
use docket_core::Error;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::item::{opt_str, req_str, s, Item};

/// The table's hash key.
pub const KEY: &str = "taskId";

/// The attribute holding the task token; read by [`ReviewStore::token`] only.
///
/// [`ReviewStore::token`]: docket_core::ports::ReviewStore::token
pub const TOKEN_ATTRIBUTE: &str = "taskToken";

/// The index that lists a tenant's tasks: hash `tenant`, range `createdAt`.
pub const BY_TENANT: &str = "by-tenant";

/// The index of pending tasks by age: hash `status`, range `createdAt`, projecting only
/// [`BY_STATUS_ATTRIBUTES`].
pub const BY_STATUS: &str = "by-status";

/// What [`BY_STATUS`] projects besides its keys (and the table's): what the oldest-open-review
/// metric names.
pub const BY_STATUS_ATTRIBUTES: &[&str] = &["tenant", "runId"];

/// Every attribute a [`ReviewTask`] is read from: all but the token.
pub const TASK_ATTRIBUTES: &[&str] = &[
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
    "deliveredAt",
    "expiry",
];

/// The non-key attributes [`BY_TENANT`] projects (`ProjectionType: INCLUDE`): the task's, not
/// the token. (`taskId`, `tenant` and `createdAt` are keys, always projected.)
pub const INDEX_ATTRIBUTES: &[&str] = &[
    "documentId",
    "runId",
    "reasons",
    "fields",
    "document",
    "ocr",
    "report",
    "deadline",
    "status",
    "decision",
    "deliveredAt",
    "expiry",
];
pub(super) fn json<T: Serialize>(v: &T) -> AttributeValue {
    s(serde_json::to_string(v).expect("review values serialize"))
}
pub(super) fn status(v: ReviewStatus) -> AttributeValue {
    s(v.as_str())
}

/// `#taskId, #tenant, ...`: every attribute of a task, not the token.
pub(super) fn projection() -> String {
    TASK_ATTRIBUTES
        .iter()
        .map(|a| format!("#{a}"))
        .collect::<Vec<_>>()
        .join(", ")
}
/// The item of `task`, without the token.
pub fn task_item(task: &ReviewTask) -> Item {
    let mut item = HashMap::from([
        (KEY.to_string(), s(task.task_id.as_str())),
        ("tenant".into(), s(task.tenant.as_str())),
        ("documentId".into(), s(task.document_id.as_str())),
        ("runId".into(), s(task.run_id.as_str())),
        ("reasons".into(), json(&task.reasons)),
        ("fields".into(), json(&task.fields)),
        ("document".into(), json(&task.document)),
        ("ocr".into(), json(&task.ocr)),
        ("report".into(), json(&task.report)),
        ("createdAt".into(), s(&task.created_at)),
        ("deadline".into(), s(&task.deadline)),
        ("status".into(), status(task.status)),
    ]);
    if let Some(d) = &task.decision {
        item.insert("decision".into(), json(d));
    }
    if let Some(at) = &task.delivered_at {
        item.insert("deliveredAt".into(), s(at));
    }
    if let Some(e) = &task.expiry {
        item.insert("expiry".into(), json(e));
    }
    item
}

fn req_json<T: DeserializeOwned>(item: &Item, name: &str) -> Result<T, Error> {
    serde_json::from_str(req_str(item, name)?)
        .map_err(|e| Error::Internal(format!("review item attribute {name} unreadable: {e}")))
}

fn opt_json<T: DeserializeOwned>(item: &Item, name: &str) -> Result<Option<T>, Error> {
    match opt_str(item, name) {
        Some(_) => req_json(item, name).map(Some),
        None => Ok(None),
    }
}

/// An id read back from an item: a malformed one is a corrupt record.
fn id<T>(parsed: Result<T, Error>) -> Result<T, Error> {
    parsed.map_err(|e| Error::Internal(format!("review item: {e}")))
}

/// Reads a task back from an item (a `taskToken` attribute, if present, is ignored).
pub fn task_from(item: &Item) -> Result<ReviewTask, Error> {
    Ok(ReviewTask {
        task_id: id(TaskId::parse(req_str(item, KEY)?))?,
        tenant: id(Tenant::parse(req_str(item, "tenant")?))?,
        document_id: id(DocumentId::parse(req_str(item, "documentId")?))?,
        run_id: id(RunId::parse(req_str(item, "runId")?))?,
        reasons: req_json(item, "reasons")?,
        fields: req_json(item, "fields")?,
        document: req_json(item, "document")?,
        ocr: req_json(item, "ocr")?,
        report: req_json(item, "report")?,
        created_at: req_str(item, "createdAt")?.to_string(),
        deadline: req_str(item, "deadline")?.to_string(),
        status: ReviewStatus::parse(req_str(item, "status")?)?,
        decision: opt_json(item, "decision")?,
        delivered_at: opt_str(item, "deliveredAt").map(str::to_string),
        expiry: opt_json(item, "expiry")?,
    })
}
