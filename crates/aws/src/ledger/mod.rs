//! [`Ledger`] on DynamoDB: one item per operation (key `operationId`), every change one
//! conditional `UpdateItem`, and no read before a write.
//!
//! A claim is a single request: the condition [`CLAIM_CONDITION`] holds on a missing item or an
//! expired lease of the same parameters within retention; `ADD fence :one` counts the claim; with
//! `ReturnValues = ALL_OLD` a success says whether it was fresh or a takeover (and hands over the
//! previous record), and with `ReturnValuesOnConditionCheckFailure = ALL_OLD` a refusal carries the
//! item that refused it, which [`decide_claim`] turns into the outcome (in progress, done, failed,
//! conflict...) — so a duplicate costs one failed write, a first run two writes (claim, complete),
//! as with Powertools.
//!
//! The writes of the holder ([`ACCEPT_CONDITION`], [`FINISH_CONDITION`]) are conditional on its
//! fence and on the statuses they move from; a refused one is explained the same way by
//! [`decide_write`] (a repeat of the same write by the same fence after a lost acknowledgement
//! succeeds without writing again; anything else is `Conflict.FencedOut`).
//!
//! `attempts` is a list appended with `list_append`. A claim's own entry has no `fence`
//! attribute, since one request cannot know the number `ADD` is about to produce; claims are the
//! only writes that add to the fence, each appends exactly one entry, atomically, so the k-th
//! claim entry has fence k, and reading fills it in. `expiresAt` is the table's TTL attribute.

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};
use aws_sdk_dynamodb::Client;
use docket_core::ids::OperationId;
use docket_core::ledger::{
    check_write, decide_claim, decide_write, Attempt, Claimed, LeaseRules, LedgerStatus,
    OperationRecord, Write, WriteDecision, CLAIM_NOTE,
};
use docket_core::ports::Ledger;
use docket_core::Error;

use crate::dynamodb::{BY_CASE, CASE};
use crate::errors::classify;
use crate::item::{n, opt_str, query_all, req_str, s, Item};

/// The claim's condition: no record, or an expired lease of the same parameters within
/// retention (the only cases in which [`decide_claim`] grants a claim).
pub const CLAIM_CONDITION: &str = "attribute_not_exists(operationId) OR \
     (#status IN (:inProgress, :accepted) AND leaseExpiresAt < :now \
     AND fingerprint = :fingerprint AND expiresAt >= :now)";

/// The claim's update: status, lease, retention, one attempt, fence + 1.
pub const CLAIM_UPDATE: &str = "SET fingerprint = :fingerprint, #status = :inProgress, \
     leaseExpiresAt = :leaseExpiresAt, leaseSeconds = :leaseSeconds, expiresAt = :expiresAt, \
     createdAt = if_not_exists(createdAt, :now), \
     attempts = list_append(if_not_exists(attempts, :noAttempts), :attempt) \
     ADD fence :one";

/// The condition of [`Ledger::accept`]: the writer's fence, in progress.
pub const ACCEPT_CONDITION: &str = "fence = :fence AND #status = :inProgress";

/// The condition of complete, fail and mark_unresolved: the writer's fence, still held.
pub const FINISH_CONDITION: &str = "fence = :fence AND #status IN (:inProgress, :accepted)";

/// Accepted: the provider's job id, and the lease extended by the claim's lease length.
pub const ACCEPT_UPDATE: &str = "SET #status = :to, providerJobId = :job, \
     leaseExpiresAt = :now + leaseSeconds, attempts = list_append(attempts, :attempt)";

/// Ambiguous: the lease given up (expired a second ago), so the next claim takes over at once.
pub const AMBIGUOUS_UPDATE: &str =
    "SET leaseExpiresAt = :released, attempts = list_append(attempts, :attempt)";

/// Completed: where the result is and its hash.
pub const COMPLETE_UPDATE: &str = "SET #status = :to, resultPointer = :pointer, \
     resultHash = :hash, attempts = list_append(attempts, :attempt)";

/// Failed: the error's taxonomy name.
pub const FAIL_UPDATE: &str =
    "SET #status = :to, #error = :error, attempts = list_append(attempts, :attempt)";

/// Unresolved: who decides, and what they should do.
pub const UNRESOLVED_UPDATE: &str = "SET #status = :to, #owner = :owner, \
     nextAction = :nextAction, #case = :to, attempts = list_append(attempts, :attempt)";

/// The condition of a resolution: the fence the operator read, unresolved.
pub const RESOLVE_CONDITION: &str = "fence = :fence AND #status = :unresolved";

/// Resolved: the operator and their note.
pub const RESOLVE_UPDATE: &str = "SET #status = :to, resolvedBy = :by, resolution = :note, \
     attempts = list_append(attempts, :attempt) REMOVE #case";

fn attempt_value(at: i64, fence: Option<u64>, note: &str) -> AttributeValue {
    let mut m = HashMap::from([("at".to_string(), n(at)), ("note".to_string(), s(note))]);
    if let Some(f) = fence {
        m.insert("fence".into(), n(f));
    }
    AttributeValue::L(vec![AttributeValue::M(m)])
}

fn get_n<T: std::str::FromStr>(item: &Item, name: &str) -> Result<T, Error> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::Internal(format!("ledger item lacks number attribute {name}")))
}

/// Reads a ledger item back (see the module docs on claim entries' fences).
pub fn record_from(item: &Item) -> Result<OperationRecord, Error> {
    let operation_id: OperationId = serde_json::from_value(serde_json::Value::String(
        req_str(item, "operationId")?.to_string(),
    ))
    .map_err(|e| Error::Internal(format!("ledger item key unreadable: {e}")))?;
    let mut claims = 0;
    let mut attempts = Vec::new();
    for entry in item
        .get("attempts")
        .and_then(|v| v.as_l().ok())
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let m = entry
            .as_m()
            .map_err(|_| Error::Internal("ledger attempt is not a map".into()))?;
        let fence = match get_n(m, "fence") {
            Ok(f) => f,
            Err(_) => {
                claims += 1;
                claims
            }
        };
        attempts.push(Attempt {
            at: get_n(m, "at")?,
            fence,
            note: req_str(m, "note")?.to_string(),
        });
    }
    Ok(OperationRecord {
        operation_id,
        fingerprint: req_str(item, "fingerprint")?.to_string(),
        status: LedgerStatus::parse(req_str(item, "status")?)?,
        lease_expires_at: get_n(item, "leaseExpiresAt")?,
        lease_seconds: get_n(item, "leaseSeconds")?,
        fence: get_n(item, "fence")?,
        provider_job_id: opt_str(item, "providerJobId").map(str::to_string),
        attempts,
        result_pointer: opt_str(item, "resultPointer").map(str::to_string),
        result_hash: opt_str(item, "resultHash").map(str::to_string),
        error: opt_str(item, "error").map(str::to_string),
        owner: opt_str(item, "owner").map(str::to_string),
        next_action: opt_str(item, "nextAction").map(str::to_string),
        resolved_by: opt_str(item, "resolvedBy").map(str::to_string),
        resolution: opt_str(item, "resolution").map(str::to_string),
        created_at: get_n(item, "createdAt")?,
        expires_at: get_n(item, "expiresAt")?,
    })
}

/// The condition, update and attribute names and values of a holder's [`Write`]: the same for
/// [`DynamoLedger`]'s own `UpdateItem` and for a `Change::Ledger` in a store transaction
/// (`crate::dynamodb`).
#[derive(Debug, Clone)]
pub struct WriteExpression {
    /// The condition: the writer's fence and a status the write moves from.
    pub condition: &'static str,
    /// The update.
    pub update: &'static str,
    /// `#name` → attribute name.
    pub names: HashMap<String, String>,
    /// `:value` → value (only those the expressions use: DynamoDB refuses unused ones).
    pub values: Item,
}

/// [`WriteExpression`] of `write` by the holder of `fence` at `now`.
pub fn write_expression(fence: u64, write: &Write, now: i64) -> WriteExpression {
    let (condition, update) = match write {
        Write::Accept { .. } => (ACCEPT_CONDITION, ACCEPT_UPDATE),
        Write::Ambiguous | Write::Yield => (ACCEPT_CONDITION, AMBIGUOUS_UPDATE),
        Write::Complete { .. } => (FINISH_CONDITION, COMPLETE_UPDATE),
        Write::Fail { .. } => (FINISH_CONDITION, FAIL_UPDATE),
        Write::MarkUnresolved { .. } => (FINISH_CONDITION, UNRESOLVED_UPDATE),
        Write::Resolve { .. } => (RESOLVE_CONDITION, RESOLVE_UPDATE),
    };
    let mut names = HashMap::from([("#status".to_string(), "status".to_string())]);
    let mut values = HashMap::from([
        (":fence".to_string(), n(fence)),
        (
            ":attempt".to_string(),
            attempt_value(now, Some(fence), &write.note()),
        ),
    ]);
    if condition == RESOLVE_CONDITION {
        values.insert(":unresolved".into(), s(LedgerStatus::Unresolved.as_str()));
    } else {
        values.insert(":inProgress".into(), s(LedgerStatus::InProgress.as_str()));
    }
    if condition == FINISH_CONDITION {
        values.insert(":accepted".into(), s(LedgerStatus::Accepted.as_str()));
    }
    if !matches!(write, Write::Ambiguous | Write::Yield) {
        values.insert(":to".into(), s(write.to_status().as_str()));
    }
    match write {
        Write::Accept { job_id } => {
            values.insert(":job".into(), s(job_id));
            values.insert(":now".into(), n(now));
        }
        Write::Ambiguous | Write::Yield => {
            values.insert(":released".into(), n(now - 1));
        }
        Write::Complete {
            result_pointer,
            result_hash,
        } => {
            values.insert(":pointer".into(), s(result_pointer));
            values.insert(":hash".into(), s(result_hash));
        }
        Write::Fail { error } => {
            names.insert("#error".into(), "error".into());
            values.insert(":error".into(), s(error.name()));
        }
        Write::MarkUnresolved { owner, next_action } => {
            names.insert("#case".into(), CASE.into());
            names.insert("#owner".into(), "owner".into());
            values.insert(":owner".into(), s(owner));
            values.insert(":nextAction".into(), s(next_action));
        }
        Write::Resolve { by, note } => {
            names.insert("#case".into(), CASE.into());
            values.insert(":by".into(), s(by));
            values.insert(":note".into(), s(note));
        }
    }
    WriteExpression {
        condition,
        update,
        names,
        values,
    }
}

/// The ledger on one DynamoDB table.
#[derive(Debug, Clone)]
pub struct DynamoLedger {
    client: Client,
    table: String,
}

impl DynamoLedger {
    /// A ledger on `table` through `client`.
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoLedger {
            client,
            table: table.into(),
        }
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    fn key(op: &OperationId) -> AttributeValue {
        s(op.as_str())
    }

    /// An `UpdateItem` of `op`'s item that, refused, returns the item that refused it.
    fn update(&self, op: &OperationId) -> UpdateItemFluentBuilder {
        self.client
            .update_item()
            .table_name(&self.table)
            .key("operationId", Self::key(op))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
    }
}

impl Ledger for DynamoLedger {
    async fn claim(
        &self,
        op: &OperationId,
        fingerprint: &str,
        now: i64,
        rules: &LeaseRules,
    ) -> Result<Claimed, Error> {
        let values = HashMap::from([
            (":fingerprint".to_string(), s(fingerprint)),
            (
                ":inProgress".to_string(),
                s(LedgerStatus::InProgress.as_str()),
            ),
            (":accepted".to_string(), s(LedgerStatus::Accepted.as_str())),
            (":now".to_string(), n(now)),
            (":leaseExpiresAt".to_string(), n(now + rules.lease_seconds)),
            (":leaseSeconds".to_string(), n(rules.lease_seconds)),
            (":expiresAt".to_string(), n(now + rules.retention_seconds)),
            (":noAttempts".to_string(), AttributeValue::L(Vec::new())),
            (":attempt".to_string(), attempt_value(now, None, CLAIM_NOTE)),
            (":one".to_string(), n(1)),
        ]);
        let result = self
            .update(op)
            .condition_expression(CLAIM_CONDITION)
            .update_expression(CLAIM_UPDATE)
            .expression_attribute_names("#status", "status")
            .set_expression_attribute_values(Some(values))
            .return_values(ReturnValue::AllOld)
            .send()
            .await;
        let (previous, granted) = match result {
            // No old item (or, from some emulators, an empty one): a fresh claim.
            Ok(out) => (
                out.attributes()
                    .filter(|item| !item.is_empty())
                    .map(record_from)
                    .transpose()?,
                true,
            ),
            Err(err) => match err.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(e)) => {
                    let item = match e.item() {
                        Some(item) => record_from(item)?,
                        // The condition can only fail on an existing item; an emulator that
                        // ignores ReturnValuesOnConditionCheckFailure makes us read it.
                        None => self.get(op).await?.ok_or_else(|| {
                            Error::Dependency(format!("ledger {op}: refused, then gone; retry"))
                        })?,
                    };
                    (Some(item), false)
                }
                _ => return Err(classify("dynamodb UpdateItem ledger claim", err)),
            },
        };
        let decided = decide_claim(previous.as_ref(), op, fingerprint, now)?;
        let grants = matches!(decided, Claimed::Fresh { .. } | Claimed::TakenOver { .. });
        if grants != granted {
            // DynamoDB and the pure decision disagree: never act on it.
            return Err(Error::Internal(format!(
                "ledger {op}: claim condition {} but decision {decided:?}",
                if granted { "held" } else { "failed" }
            )));
        }
        Ok(decided)
    }

    async fn write(
        &self,
        op: &OperationId,
        fence: u64,
        write: Write,
        now: i64,
    ) -> Result<(), Error> {
        check_write(op, &write)?;
        let WriteExpression {
            condition,
            update,
            names,
            values,
        } = write_expression(fence, &write, now);
        let result = self
            .update(op)
            .condition_expression(condition)
            .update_expression(update)
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(Some(values))
            .send()
            .await;
        let err = match result {
            Ok(_) => return Ok(()),
            Err(e) => e,
        };
        let refused = match err.as_service_error() {
            Some(UpdateItemError::ConditionalCheckFailedException(e)) => {
                e.item().map(record_from).transpose()?
            }
            _ => return Err(classify("dynamodb UpdateItem ledger", err)),
        };
        match decide_write(refused.as_ref(), op, fence, &write)? {
            WriteDecision::AlreadyApplied => Ok(()),
            WriteDecision::Apply => Err(Error::Dependency(format!(
                "ledger {op}: write refused although the returned record allows it"
            ))),
        }
    }

    async fn get(&self, op: &OperationId) -> Result<Option<OperationRecord>, Error> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("operationId", Self::key(op))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("dynamodb GetItem ledger", e))?;
        out.item().map(record_from).transpose()
    }

    async fn unresolved(&self) -> Result<Vec<OperationRecord>, Error> {
        // The sparse index holds exactly the unresolved records (`case` is set when a record
        // becomes unresolved and removed when it is resolved).
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(BY_CASE)
            .key_condition_expression("#case = :unresolved")
            .expression_attribute_names("#case", CASE)
            .expression_attribute_values(":unresolved", s(LedgerStatus::Unresolved.as_str()));
        let items = query_all(query, "dynamodb Query ledger by-case").await?;
        items.iter().map(record_from).collect()
    }
}

#[cfg(test)]
mod tests;
