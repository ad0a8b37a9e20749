//! [`ReviewStore`] on DynamoDB: one item per review task (hash key `taskId`), every change one
//! conditional `UpdateItem`, and no read before a write. A refused write returns the item that
//! refused it (`ReturnValuesOnConditionCheckFailure = ALL_OLD`), and the pure rules of
//! `docket_core::review` name the outcome from it: a refused decision answers with the recorded
//! decision without a second read.
//!
//! | call             | condition                | update                                  |
//! |------------------|--------------------------|-----------------------------------------|
//! | `open`           | [`OPEN_CONDITION`]       | [`OPEN_UPDATE`] (`ReturnValues=ALL_OLD`) |
//! | `decide`         | [`DECIDE_CONDITION`]     | [`DECIDE_UPDATE`]                       |
//! | `mark_delivered` | [`DELIVER_CONDITION`]    | [`DELIVER_UPDATE`]                      |
//! | `expire`         | [`EXPIRE_CONDITION`]     | [`EXPIRE_UPDATE`]                       |
//!
//! Open is a single write for both cases: it creates the item (`attribute_not_exists(taskId)`),
//! or, on a still-pending task of the same run and tenant, keeps everything but the deadline and
//! the token, which it replaces (`if_not_exists` on every other attribute); the old item (or its
//! absence) returned by `ALL_OLD` says which.
//!
//! The item: `taskId`, `tenant`, `documentId`, `runId`, `createdAt`, `deadline`, `status`,
//! `deliveredAt` as strings; `reasons`, `fields`, `document`, `ocr`, `report`, `decision`,
//! `expiry` as JSON strings; and the token in `taskToken`, which only [`ReviewStore::token`]
//! reads: every other read names [`TASK_ATTRIBUTES`] in its `ProjectionExpression`, and the
//! index [`BY_TENANT`] (hash `tenant`, range `createdAt`) projects only those (`INCLUDE`
//! [`INDEX_ATTRIBUTES`]), so the token is not even copied into the index. (Writes that return
//! the item, `ALL_OLD` / `ALL_NEW`, carry the token to this process; it is dropped when the item
//! is read into a [`ReviewTask`].)
//!
//! Errors: a write whose answer was lost is `Ambiguous.OutcomeUnknown`, and repeating the same
//! call is its reconciliation (a repeated open reopens, the same decision or expiry repeated is
//! acknowledged, delivery is `if_not_exists`).

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::update_item::{UpdateItemError, UpdateItemOutput};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};
use aws_sdk_dynamodb::Client;
use docket_core::ids::{DocumentId, RunId, Tenant};
use docket_core::model::run::TaskToken;
use docket_core::ports::ReviewStore;
use docket_core::review::{
    apply_decision, deliver, expire, not_found, reopen, ExpireOutcome, Expiry, OpenTask, Opened,
    Refusal, ReviewDecision, ReviewStatus, ReviewTask, TaskId,
};
use docket_core::Error;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::errors::{classify, classify_effect};
use crate::item::{opt_str, req_str, s, Item};

/// The table's hash key.
pub const KEY: &str = "taskId";

/// The attribute holding the task token; read by [`ReviewStore::token`] only.
pub const TOKEN_ATTRIBUTE: &str = "taskToken";

/// The index that lists a tenant's tasks: hash `tenant`, range `createdAt`.
pub const BY_TENANT: &str = "by-tenant";

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

/// Open: no task yet, or a still-pending task of the same run and tenant (a retried open).
pub const OPEN_CONDITION: &str =
    "attribute_not_exists(#taskId) OR (#status = :pending AND #runId = :runId AND #tenant = :tenant)";

/// Open: the content only if absent (a reopen keeps it); status, deadline and token always.
pub const OPEN_UPDATE: &str = "SET #tenant = if_not_exists(#tenant, :tenant), \
     #documentId = if_not_exists(#documentId, :documentId), \
     #runId = if_not_exists(#runId, :runId), \
     #reasons = if_not_exists(#reasons, :reasons), \
     #fields = if_not_exists(#fields, :fields), \
     #document = if_not_exists(#document, :document), \
     #ocr = if_not_exists(#ocr, :ocr), \
     #report = if_not_exists(#report, :report), \
     #createdAt = if_not_exists(#createdAt, :createdAt), \
     #status = :pending, #deadline = :deadline, #taskToken = :token";

/// Decide: still pending, and of the reviewer's tenant (defence in depth: the caller authorizes
/// first).
pub const DECIDE_CONDITION: &str = "#status = :pending AND #tenant = :tenant";

/// Decide: the decision, as JSON.
pub const DECIDE_UPDATE: &str = "SET #status = :decided, #decision = :decision";

/// Mark delivered: decided.
pub const DELIVER_CONDITION: &str = "#status = :decided";

/// Mark delivered: the first acknowledgement's time.
pub const DELIVER_UPDATE: &str = "SET #deliveredAt = if_not_exists(#deliveredAt, :at)";

/// Expire: pending, or decided but not delivered.
pub const EXPIRE_CONDITION: &str =
    "#status = :pending OR (#status = :decided AND attribute_not_exists(#deliveredAt))";

/// Expire: why and when.
pub const EXPIRE_UPDATE: &str = "SET #status = :expired, #expiry = :expiry";

/// The listing's filter on a status.
pub const STATUS_FILTER: &str = "#status = :status";

fn json<T: Serialize>(v: &T) -> AttributeValue {
    s(serde_json::to_string(v).expect("review values serialize"))
}

/// `#a` → `a` for each attribute.
fn names(attrs: &[&str]) -> HashMap<String, String> {
    attrs
        .iter()
        .map(|a| (format!("#{a}"), a.to_string()))
        .collect()
}

fn status(v: ReviewStatus) -> AttributeValue {
    s(v.as_str())
}

/// `#taskId, #tenant, ...`: every attribute of a task, not the token.
fn projection() -> String {
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

/// Review tasks on one DynamoDB table.
#[derive(Debug, Clone)]
pub struct DynamoReviewStore {
    client: Client,
    table: String,
}

/// A conditional update's outcome: the returned item, or the item that refused it (`None`
/// when there was none).
enum Written {
    Done(Option<Item>),
    Refused(Option<Item>),
}

impl DynamoReviewStore {
    /// A store on `table`.
    pub fn new(config: &aws_config::SdkConfig, table: impl Into<String>) -> Self {
        Self::with_faults(config, table, &crate::Faults::none())
    }

    /// Like [`DynamoReviewStore::new`], with `faults` injected (tests and local runs only).
    pub fn with_faults(
        config: &aws_config::SdkConfig,
        table: impl Into<String>,
        faults: &crate::Faults,
    ) -> Self {
        let builder = aws_sdk_dynamodb::config::Builder::from(config);
        Self::from_client(
            Client::from_conf(crate::with_faults(builder, faults).build()),
            table,
        )
    }

    /// A store on `table` through a client built elsewhere (tests count or capture requests).
    pub fn from_client(client: Client, table: impl Into<String>) -> Self {
        DynamoReviewStore {
            client,
            table: table.into(),
        }
    }

    /// The table named by `REVIEW_TABLE`.
    pub fn from_env(config: &aws_config::SdkConfig) -> Result<Self, Error> {
        Ok(Self::new(config, crate::env("REVIEW_TABLE")?))
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// One conditional `UpdateItem` of `task`.
    async fn update(
        &self,
        what: &str,
        task: &TaskId,
        (condition, update): (&str, &str),
        names: HashMap<String, String>,
        values: Item,
        returns: ReturnValue,
    ) -> Result<Written, Error> {
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(KEY, s(task.as_str()))
            .condition_expression(condition)
            .update_expression(update)
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(Some(values))
            .return_values(returns)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match result {
            Ok(UpdateItemOutput { attributes, .. }) => {
                Ok(Written::Done(attributes.filter(|item| !item.is_empty())))
            }
            Err(err) => match err.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(e)) => {
                    Ok(Written::Refused(e.item().cloned()))
                }
                // A lost answer: repeating the same call is the reconciliation (module docs).
                _ => Err(classify_effect(&format!("dynamodb UpdateItem {what}"), err)),
            },
        }
    }

    /// The task that refused a write: from the refusal, or (an emulator that ignores
    /// `ReturnValuesOnConditionCheckFailure`) read; none at all is `Business.ReviewNotFound`.
    async fn refused_by(&self, task: &TaskId, item: Option<Item>) -> Result<ReviewTask, Error> {
        match item {
            Some(item) => task_from(&item),
            None => self.get(task).await?.ok_or_else(|| not_found(task)),
        }
    }

    fn written(task: &TaskId, item: Option<Item>) -> Result<ReviewTask, Error> {
        let item = item.ok_or_else(|| {
            Error::Dependency(format!("review {task}: the write returned no item; retry"))
        })?;
        task_from(&item)
    }
}

impl ReviewStore for DynamoReviewStore {
    async fn open(&self, open: OpenTask) -> Result<Opened, Error> {
        open.check()?;
        let task = &open.task;
        const CONTENT: [&str; 10] = [
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
        ];
        let mut values: Item = task_item(task)
            .into_iter()
            .filter(|(name, _)| CONTENT.contains(&name.as_str()))
            .map(|(name, value)| (format!(":{name}"), value))
            .collect();
        values.insert(":pending".into(), status(ReviewStatus::Pending));
        values.insert(":token".into(), s(open.token.expose()));
        let mut names = names(&CONTENT);
        names.extend(self::names(&[KEY, "status", TOKEN_ATTRIBUTE]));
        let written = self
            .update(
                "review open",
                &task.task_id,
                (OPEN_CONDITION, OPEN_UPDATE),
                names,
                values,
                ReturnValue::AllOld,
            )
            .await?;
        match written {
            Written::Done(None) => Ok(Opened::Created(open.task)),
            Written::Done(Some(old)) => match reopen(&task_from(&old)?, &open)? {
                opened @ Opened::Reopened(_) => Ok(opened),
                other => Err(Error::Internal(format!(
                    "review {}: open condition held but the rule says {other:?}",
                    task.task_id
                ))),
            },
            Written::Refused(old) => {
                let old = old.ok_or_else(|| {
                    Error::Dependency(format!("review {}: open refused, then gone", task.task_id))
                })?;
                match reopen(&task_from(&old)?, &open)? {
                    Opened::Reopened(_) => Err(Error::Dependency(format!(
                        "review {}: open refused although the task is pending; retry",
                        task.task_id
                    ))),
                    opened => Ok(opened),
                }
            }
        }
    }

    async fn get(&self, task: &TaskId) -> Result<Option<ReviewTask>, Error> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(KEY, s(task.as_str()))
            .projection_expression(projection())
            .set_expression_attribute_names(Some(names(TASK_ATTRIBUTES)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("dynamodb GetItem review", e))?;
        out.item().map(task_from).transpose()
    }

    async fn token(&self, task: &TaskId) -> Result<Option<TaskToken>, Error> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(KEY, s(task.as_str()))
            .projection_expression(format!("#{TOKEN_ATTRIBUTE}"))
            .set_expression_attribute_names(Some(names(&[TOKEN_ATTRIBUTE])))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("dynamodb GetItem review token", e))?;
        out.item()
            .and_then(|item| opt_str(item, TOKEN_ATTRIBUTE))
            .map(|t| {
                TaskToken::new(t).map_err(|_| {
                    Error::Internal(format!("review {task}: stored token is malformed"))
                })
            })
            .transpose()
    }

    async fn list(
        &self,
        tenant: Option<&Tenant>,
        status_is: Option<ReviewStatus>,
    ) -> Result<Vec<ReviewTask>, Error> {
        let mut values = Item::new();
        if let Some(t) = tenant {
            values.insert(":tenant".into(), s(t.as_str()));
        }
        if let Some(st) = status_is {
            values.insert(":status".into(), status(st));
        }
        let values = (!values.is_empty()).then_some(values);
        let filter = status_is.map(|_| STATUS_FILTER);
        // By tenant: the index (eventually consistent). Without: a scan, for operators.
        let items = match tenant {
            Some(_) => self
                .client
                .query()
                .table_name(&self.table)
                .index_name(BY_TENANT)
                .key_condition_expression("#tenant = :tenant")
                .set_filter_expression(filter.map(Into::into))
                .projection_expression(projection())
                .set_expression_attribute_names(Some(names(TASK_ATTRIBUTES)))
                .set_expression_attribute_values(values)
                .into_paginator()
                .items()
                .send()
                .try_collect()
                .await
                .map_err(|e| classify("dynamodb Query review by-tenant", e))?,
            None => self
                .client
                .scan()
                .table_name(&self.table)
                .set_filter_expression(filter.map(Into::into))
                .projection_expression(projection())
                .set_expression_attribute_names(Some(names(TASK_ATTRIBUTES)))
                .set_expression_attribute_values(values)
                .consistent_read(true)
                .into_paginator()
                .items()
                .send()
                .try_collect()
                .await
                .map_err(|e| classify("dynamodb Scan review", e))?,
        };
        let mut tasks = items.iter().map(task_from).collect::<Result<Vec<_>, _>>()?;
        // The index orders by createdAt only; the scan not at all.
        tasks.sort_by(|a, b| (&a.created_at, &a.task_id).cmp(&(&b.created_at, &b.task_id)));
        Ok(tasks)
    }

    async fn decide(
        &self,
        task: &TaskId,
        decision: &ReviewDecision,
    ) -> Result<Result<ReviewTask, Refusal>, Error> {
        let values = HashMap::from([
            (":pending".to_string(), status(ReviewStatus::Pending)),
            (":decided".to_string(), status(ReviewStatus::Decided)),
            (":tenant".to_string(), s(decision.reviewer.tenant.as_str())),
            (":decision".to_string(), json(decision)),
        ]);
        let written = self
            .update(
                "review decide",
                task,
                (DECIDE_CONDITION, DECIDE_UPDATE),
                names(&["status", "tenant", "decision"]),
                values,
                ReturnValue::AllNew,
            )
            .await?;
        match written {
            Written::Done(item) => Ok(Ok(Self::written(task, item)?)),
            Written::Refused(item) => {
                let recorded = self.refused_by(task, item).await?;
                match apply_decision(&recorded, decision.clone())? {
                    Ok(_) if recorded.status == ReviewStatus::Pending => {
                        Err(Error::Dependency(format!(
                            "review {task}: decision refused although the task is pending; retry"
                        )))
                    }
                    // Refused, or the same decision already recorded (a lost acknowledgement).
                    other => Ok(other),
                }
            }
        }
    }

    async fn mark_delivered(&self, task: &TaskId, at: &str) -> Result<ReviewTask, Error> {
        let values = HashMap::from([
            (":decided".to_string(), status(ReviewStatus::Decided)),
            (":at".to_string(), s(at)),
        ]);
        let written = self
            .update(
                "review mark_delivered",
                task,
                (DELIVER_CONDITION, DELIVER_UPDATE),
                names(&["status", "deliveredAt"]),
                values,
                ReturnValue::AllNew,
            )
            .await?;
        match written {
            Written::Done(item) => Self::written(task, item),
            Written::Refused(item) => {
                deliver(&self.refused_by(task, item).await?, at)?;
                Err(Error::Dependency(format!(
                    "review {task}: delivery refused although the task is decided; retry"
                )))
            }
        }
    }

    async fn expire(&self, task: &TaskId, expiry: &Expiry) -> Result<ExpireOutcome, Error> {
        let values = HashMap::from([
            (":pending".to_string(), status(ReviewStatus::Pending)),
            (":decided".to_string(), status(ReviewStatus::Decided)),
            (":expired".to_string(), status(ReviewStatus::Expired)),
            (":expiry".to_string(), json(expiry)),
        ]);
        let written = self
            .update(
                "review expire",
                task,
                (EXPIRE_CONDITION, EXPIRE_UPDATE),
                names(&["status", "deliveredAt", "expiry"]),
                values,
                ReturnValue::AllNew,
            )
            .await?;
        match written {
            Written::Done(item) => Ok(ExpireOutcome::Expired(Self::written(task, item)?)),
            Written::Refused(item) => {
                let recorded = self.refused_by(task, item).await?;
                match expire(&recorded, expiry) {
                    ExpireOutcome::Expired(_) if recorded.status != ReviewStatus::Expired => {
                        Err(Error::Dependency(format!(
                            "review {task}: expiry refused although the rule allows it; retry"
                        )))
                    }
                    // Delivered, expired for another reason, or this very expiry (a lost
                    // acknowledgement).
                    other => Ok(other),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The requests as they go on the wire: an interceptor keeps the serialized body and stops
    //! the request before it is sent.

    use std::collections::BTreeMap;

    use docket_core::model::fields::FieldName;
    use docket_core::model::run::ObjectRef;
    use docket_core::review::{task_id_for, FieldSource, ReviewField, Reviewer, Verdict};
    use docket_core::validate::Reason;
    use serde_json::Value;

    use super::*;
    use crate::capture::{captured_client, Capture};

    fn store() -> (DynamoReviewStore, Capture) {
        let (client, capture) = captured_client();
        (DynamoReviewStore::from_client(client, "reviews"), capture)
    }

    const TOKEN: &str = "AAAA-the-secret-task-token";

    fn task() -> ReviewTask {
        let tenant = Tenant::parse("acme").unwrap();
        let document_id = DocumentId::new(&tenant, "a.pdf");
        let run_id = RunId::new(
            &document_id,
            &docket_core::ids::SourceVersion {
                version_id: "v1".into(),
                sha256: "ab".repeat(32),
            },
            "cfg",
            0,
        );
        ReviewTask {
            task_id: task_id_for(&run_id),
            tenant,
            document_id,
            run_id,
            reasons: vec![Reason {
                code: "low_confidence".into(),
                field: Some(FieldName::TotalAmount),
                detail: "low".into(),
            }],
            fields: BTreeMap::from([(
                FieldName::TotalAmount,
                ReviewField {
                    value: "1234.50".into(),
                    confidence: 0.55,
                    source: FieldSource::Extracted { page: 1, line: 7 },
                },
            )]),
            document: ObjectRef::new("raw", "inbox/acme/a.pdf"),
            ocr: ObjectRef::new("normalized", "ocr.json"),
            report: ObjectRef::new("derived", "validation.json"),
            created_at: "2026-03-20T09:46:40.000Z".into(),
            deadline: "2026-03-21T09:46:40.000Z".into(),
            status: ReviewStatus::Pending,
            decision: None,
            delivered_at: None,
            expiry: None,
        }
    }

    fn decision() -> ReviewDecision {
        ReviewDecision {
            reviewer: Reviewer::new("alice", Tenant::parse("acme").unwrap()).unwrap(),
            decided_at: "2026-03-20T10:00:00.000Z".into(),
            verdict: Verdict::Reject {
                reason: "duplicate".into(),
            },
            changes: vec![],
        }
    }

    fn sent(capture: &Capture) -> Vec<Value> {
        capture.0.lock().unwrap().clone()
    }

    #[tokio::test]
    async fn open_is_one_conditional_update_that_creates_or_reopens_a_pending_task() {
        let (store, capture) = store();

        let _ = store
            .open(OpenTask {
                task: task(),
                token: TaskToken::new(TOKEN).unwrap(),
            })
            .await;

        let sent = sent(&capture);
        assert_eq!(sent.len(), 1);
        let body = &sent[0];
        assert_eq!(body["TableName"], "reviews");
        assert_eq!(body["Key"]["taskId"]["S"], task().task_id.as_str());
        assert_eq!(
            body["ConditionExpression"],
            "attribute_not_exists(#taskId) OR \
             (#status = :pending AND #runId = :runId AND #tenant = :tenant)"
        );
        assert_eq!(body["UpdateExpression"], OPEN_UPDATE);
        assert_eq!(body["ReturnValues"], "ALL_OLD");
        assert_eq!(body["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");
        let values = &body["ExpressionAttributeValues"];
        assert_eq!(values[":token"]["S"], TOKEN);
        assert_eq!(values[":pending"]["S"], "pending");
        assert_eq!(values[":deadline"]["S"], "2026-03-21T09:46:40.000Z");
        assert_eq!(body["ExpressionAttributeNames"]["#taskToken"], "taskToken");
        // every name and value is used (DynamoDB refuses unused ones)
        let expressions = format!(
            "{} {}",
            body["ConditionExpression"], body["UpdateExpression"]
        );
        for key in body["ExpressionAttributeNames"]
            .as_object()
            .unwrap()
            .keys()
            .chain(
                body["ExpressionAttributeValues"]
                    .as_object()
                    .unwrap()
                    .keys(),
            )
        {
            assert!(expressions.contains(key.as_str()), "{key} unused");
        }
    }

    #[tokio::test]
    async fn decide_expire_and_delivery_are_conditional_and_return_the_refusing_item() {
        let (store, capture) = store();
        let id = task().task_id;
        let expiry = Expiry {
            reason: "TaskTimedOut".into(),
            at: "2026-03-21T10:00:00.000Z".into(),
        };

        let _ = store.decide(&id, &decision()).await;
        let _ = store.mark_delivered(&id, "2026-03-20T10:00:01.000Z").await;
        let _ = store.expire(&id, &expiry).await;

        let sent = sent(&capture);
        let expressions: Vec<_> = sent
            .iter()
            .map(|b| {
                (
                    b["ConditionExpression"].as_str().unwrap().to_string(),
                    b["UpdateExpression"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            expressions,
            [
                (DECIDE_CONDITION, DECIDE_UPDATE),
                (DELIVER_CONDITION, DELIVER_UPDATE),
                (EXPIRE_CONDITION, EXPIRE_UPDATE),
            ]
            .map(|(c, u)| (c.to_string(), u.to_string()))
        );
        assert_eq!(DECIDE_CONDITION, "#status = :pending AND #tenant = :tenant");
        assert_eq!(
            EXPIRE_CONDITION,
            "#status = :pending OR (#status = :decided AND attribute_not_exists(#deliveredAt))"
        );
        for body in &sent {
            assert_eq!(body["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");
            assert_eq!(body["ReturnValues"], "ALL_NEW");
            assert_eq!(body["Key"]["taskId"]["S"], id.as_str());
        }
        assert_eq!(sent[0]["ExpressionAttributeValues"][":tenant"]["S"], "acme");
        let recorded: ReviewDecision = serde_json::from_str(
            sent[0]["ExpressionAttributeValues"][":decision"]["S"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(recorded, decision());
    }

    #[tokio::test]
    async fn reads_project_the_task_attributes_and_only_token_reads_the_token() {
        let (store, capture) = store();
        let id = task().task_id;
        let tenant = Tenant::parse("acme").unwrap();

        let _ = store.get(&id).await;
        let _ = store.list(Some(&tenant), Some(ReviewStatus::Pending)).await;
        let _ = store.list(None, None).await;
        let _ = store.token(&id).await;

        let sent = sent(&capture);
        assert_eq!(sent.len(), 4);
        for body in &sent[..3] {
            let projection = body["ProjectionExpression"].as_str().unwrap();
            let names = body["ExpressionAttributeNames"].as_object().unwrap();
            let projected: Vec<_> = projection
                .split(", ")
                .map(|n| names[n].as_str().unwrap())
                .collect();
            assert_eq!(projected, TASK_ATTRIBUTES);
            assert!(!body.to_string().contains("taskToken"), "{body}");
        }
        assert_eq!(sent[0]["ConsistentRead"], true);
        assert_eq!(sent[1]["IndexName"], "by-tenant");
        assert_eq!(sent[1]["KeyConditionExpression"], "#tenant = :tenant");
        assert_eq!(sent[1]["FilterExpression"], STATUS_FILTER);
        assert_eq!(
            sent[1]["ExpressionAttributeValues"][":status"]["S"],
            "pending"
        );
        assert!(sent[2].get("FilterExpression").is_none());
        assert!(sent[2].get("ExpressionAttributeValues").is_none());
        assert_eq!(sent[3]["ProjectionExpression"], "#taskToken");
        assert_eq!(
            sent[3]["ExpressionAttributeNames"]["#taskToken"],
            "taskToken"
        );
    }

    #[test]
    fn a_task_round_trips_through_its_item_and_the_token_is_never_read_into_it() {
        let mut decided = task();
        decided.status = ReviewStatus::Expired;
        decided.decision = Some(decision());
        decided.expiry = Some(Expiry {
            reason: "InvalidToken".into(),
            at: "2026-03-20T10:00:02.000Z".into(),
        });
        for t in [task(), decided] {
            let mut item = task_item(&t);
            assert!(!item.contains_key(TOKEN_ATTRIBUTE));
            let mut keys: Vec<_> = item.keys().map(String::as_str).collect();
            keys.retain(|k| !TASK_ATTRIBUTES.contains(k));
            assert!(
                keys.is_empty(),
                "attributes outside TASK_ATTRIBUTES: {keys:?}"
            );
            item.insert(TOKEN_ATTRIBUTE.into(), s(TOKEN));

            let back = task_from(&item).unwrap();

            assert_eq!(back, t);
            assert!(!serde_json::to_string(&back).unwrap().contains(TOKEN));
        }
    }

    #[test]
    fn the_index_projects_every_task_attribute_but_the_keys_and_the_token() {
        let keys = [KEY, "tenant", "createdAt"];
        let mut expected: Vec<_> = TASK_ATTRIBUTES
            .iter()
            .filter(|a| !keys.contains(a))
            .collect();
        let mut index: Vec<_> = INDEX_ATTRIBUTES.iter().collect();
        expected.sort();
        index.sort();
        assert_eq!(index, expected);
        assert!(!INDEX_ATTRIBUTES.contains(&TOKEN_ATTRIBUTE));
    }
}
