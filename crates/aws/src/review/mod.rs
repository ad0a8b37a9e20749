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

mod items;

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::update_item::{UpdateItemError, UpdateItemOutput};
use aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure};
use aws_sdk_dynamodb::Client;
use docket_core::ids::Tenant;
use docket_core::model::run::TaskToken;
use docket_core::ports::ReviewStore;
use docket_core::review::{
    apply_decision, deliver, expire, not_found, reopen, ExpireOutcome, Expiry, OldestPending,
    OpenTask, Opened, Refusal, ReviewDecision, ReviewStatus, ReviewTask, TaskId,
};
use docket_core::Error;

use crate::errors::{classify, classify_effect};
use crate::item::{opt_str, query_all, s, scan_all, Item};

pub use items::{
    task_from, task_item, BY_STATUS, BY_STATUS_ATTRIBUTES, BY_TENANT, INDEX_ATTRIBUTES, KEY,
    TASK_ATTRIBUTES, TOKEN_ATTRIBUTE,
};

use items::{json, projection, status};

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
/// `#a` → `a` for each attribute.
fn names(attrs: &[&str]) -> HashMap<String, String> {
    attrs
        .iter()
        .map(|a| (format!("#{a}"), a.to_string()))
        .collect()
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

/// A conditional update of an existing task, read back: the task as written, or as recorded by
/// the item that refused the write.
enum TaskWrite {
    Written(ReviewTask),
    Refused(ReviewTask),
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
        Self::from_client(crate::dynamodb_client(config, faults), table)
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

    /// [`DynamoReviewStore::update`] returning `ALL_NEW`, read back into a task.
    async fn update_task(
        &self,
        what: &str,
        task: &TaskId,
        expressions: (&str, &str),
        names: HashMap<String, String>,
        values: Item,
    ) -> Result<TaskWrite, Error> {
        let written = self
            .update(what, task, expressions, names, values, ReturnValue::AllNew)
            .await?;
        Ok(match written {
            Written::Done(item) => TaskWrite::Written(Self::written(task, item)?),
            Written::Refused(item) => TaskWrite::Refused(self.refused_by(task, item).await?),
        })
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
            Some(_) => {
                let query = self
                    .client
                    .query()
                    .table_name(&self.table)
                    .index_name(BY_TENANT)
                    .key_condition_expression("#tenant = :tenant")
                    .set_filter_expression(filter.map(Into::into))
                    .projection_expression(projection())
                    .set_expression_attribute_names(Some(names(TASK_ATTRIBUTES)))
                    .set_expression_attribute_values(values);
                query_all(query, "dynamodb Query review by-tenant").await?
            }
            None => {
                let scan = self
                    .client
                    .scan()
                    .table_name(&self.table)
                    .set_filter_expression(filter.map(Into::into))
                    .projection_expression(projection())
                    .set_expression_attribute_names(Some(names(TASK_ATTRIBUTES)))
                    .set_expression_attribute_values(values)
                    .consistent_read(true);
                scan_all(scan, "dynamodb Scan review").await?
            }
        };
        let mut tasks = items.iter().map(task_from).collect::<Result<Vec<_>, _>>()?;
        // The index orders by createdAt only; the scan not at all.
        tasks.sort_by(|a, b| (&a.created_at, &a.task_id).cmp(&(&b.created_at, &b.task_id)));
        Ok(tasks)
    }

    async fn oldest_pending(&self) -> Result<Option<OldestPending>, Error> {
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(BY_STATUS)
            .key_condition_expression("#status = :pending")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":pending", status(ReviewStatus::Pending))
            .scan_index_forward(true)
            .limit(1)
            .send()
            .await
            .map_err(|e| classify("dynamodb Query review by-status", e))?;
        let Some(item) = out.items().first() else {
            return Ok(None);
        };
        let text = |name: &str| {
            opt_str(item, name)
                .map(str::to_string)
                .ok_or_else(|| Error::Internal(format!("review index item lacks {name}")))
        };
        Ok(Some(OldestPending {
            task_id: TaskId::parse(&text(KEY)?)?,
            tenant: Tenant::parse(&text("tenant")?)?,
            run_id: docket_core::ids::RunId::parse(&text("runId")?)?,
            created_at: text("createdAt")?,
        }))
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
            .update_task(
                "review decide",
                task,
                (DECIDE_CONDITION, DECIDE_UPDATE),
                names(&["status", "tenant", "decision"]),
                values,
            )
            .await?;
        match written {
            TaskWrite::Written(decided) => Ok(Ok(decided)),
            TaskWrite::Refused(recorded) => {
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
            .update_task(
                "review mark_delivered",
                task,
                (DELIVER_CONDITION, DELIVER_UPDATE),
                names(&["status", "deliveredAt"]),
                values,
            )
            .await?;
        match written {
            TaskWrite::Written(delivered) => Ok(delivered),
            TaskWrite::Refused(recorded) => {
                deliver(&recorded, at)?;
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
            .update_task(
                "review expire",
                task,
                (EXPIRE_CONDITION, EXPIRE_UPDATE),
                names(&["status", "deliveredAt", "expiry"]),
                values,
            )
            .await?;
        match written {
            TaskWrite::Written(expired) => Ok(ExpireOutcome::Expired(expired)),
            TaskWrite::Refused(recorded) => {
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
mod tests;
