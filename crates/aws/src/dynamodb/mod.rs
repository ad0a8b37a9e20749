//! [`Store`] on DynamoDB: runs, documents, audit entries, checkpoints and the ledger; every
//! [`Change`] a conditional write, a commit one `TransactWriteItems` (all or nothing). The
//! conditions:
//!
//! - CreateRun: `attribute_not_exists(runId)`
//! - SetRunStatus: `#status = :from`
//! - Promote: `attribute_not_exists(documentId) OR sourceOrder <= :order`
//! - Ledger: the holder's fence and a status the write moves from (`crate::ledger`)
//! - Audit: `attribute_not_exists(seq)` on the entry (the seq is last + 1: no forks), and on the
//!   document's checkpoint, in another table, `attribute_not_exists(documentId) OR #seq = :prev`
//!   (no gaps; and a truncated tail is caught because the checkpoint still names the last entry)
//!
//! - Journal, Outbox, Restore: the saga's conditions (`crate::saga`), on the journal and outbox
//!   tables ([`DynamoStore::with_saga`]) and the documents table
//!
//! Audit entries are stored as the exact JSON that was hashed, next to a few plain attributes
//! for queries; nothing updates or deletes them.

mod items;
#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap};

use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem, Update};
use aws_sdk_dynamodb::Client;
use docket_core::audit::{AuditEntry, Checkpoint};
use docket_core::ids::{DocumentId, RunId, Tenant};
use docket_core::ports::{Change, DocumentRecord, Refused, RunRecord, RunStatus, Store};
use docket_core::Error;

use crate::errors::classify;
use crate::item::{get_item, req_str, s, transact, Item};
use crate::saga::SagaTables;

use items::{audit_from, audit_item, checkpoint_from, document_from, run_from, run_item};
pub use items::{BY_CASE, CASE};

/// Table names.
#[derive(Debug, Clone)]
pub struct Tables {
    /// Runs, keyed by `runId`.
    pub runs: String,
    /// Documents' current results, keyed by `documentId`.
    pub documents: String,
    /// Audit chains, keyed by `documentId` + `seq`.
    pub audit: String,
    /// Each chain's checkpoint (last seq and hash), keyed by `documentId`.
    pub checkpoints: String,
    /// The operation ledger, keyed by `operationId` (`crate::ledger`); `Change::Ledger`
    /// writes go there, in the same transaction as the step's audit entry.
    pub ledger: String,
}

/// The DynamoDB store.
#[derive(Debug, Clone)]
pub struct DynamoStore {
    client: Client,
    tables: Tables,
    /// The saga's tables, for a store whose commits carry its changes.
    saga: Option<SagaTables>,
}

/// The checkpoint moves only from the previous entry (a first entry has no checkpoint yet).
pub const CHECKPOINT_CONDITION: &str = "attribute_not_exists(documentId) OR #seq = :prev";

impl DynamoStore {
    /// A store over `tables`.
    pub fn new(config: &aws_config::SdkConfig, tables: Tables) -> Self {
        Self::with_faults(config, tables, &crate::Faults::none())
    }

    /// Like [`DynamoStore::new`], with `faults` injected (tests and local runs only).
    pub fn with_faults(
        config: &aws_config::SdkConfig,
        tables: Tables,
        faults: &crate::Faults,
    ) -> Self {
        DynamoStore {
            client: crate::dynamodb_client(config, faults),
            tables,
            saga: None,
        }
    }

    /// The saga's tables, if this store has them.
    pub fn saga(&self) -> Option<&SagaTables> {
        self.saga.as_ref()
    }

    /// This store over `client` (tests count its requests).
    pub fn from_client(client: Client, tables: Tables) -> Self {
        DynamoStore {
            client,
            tables,
            saga: None,
        }
    }

    /// This store with the saga's tables: its commits may carry `Change::Journal`,
    /// `Change::Outbox` and `Change::Restore` (without them such a commit is `Fatal.Internal`).
    pub fn with_saga(mut self, saga: SagaTables) -> Self {
        self.saga = Some(saga);
        self
    }

    /// Table names from `RUNS_TABLE`, `DOCUMENTS_TABLE`, `AUDIT_TABLE`,
    /// `AUDIT_CHECKPOINTS_TABLE`, `LEDGER_TABLE`, and the saga's from `SAGA_JOURNAL_TABLE` and
    /// `OUTBOX_TABLE` when they are set.
    pub fn from_env(config: &aws_config::SdkConfig) -> Result<Self, Error> {
        let saga = SagaTables::from_env()?;
        let store = Self::new(
            config,
            Tables {
                runs: crate::env("RUNS_TABLE")?,
                documents: crate::env("DOCUMENTS_TABLE")?,
                audit: crate::env("AUDIT_TABLE")?,
                checkpoints: crate::env("AUDIT_CHECKPOINTS_TABLE")?,
                ledger: crate::env("LEDGER_TABLE")?,
            },
        );
        Ok(match saga {
            Some(saga) => store.with_saga(saga),
            None => store,
        })
    }

    /// The SDK client, for operator tools.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The table names.
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// The runs of a document, oldest first (the index's range key is `createdAt`; eventually
    /// consistent, as every read of a global secondary index).
    pub async fn runs_of(&self, document: &DocumentId) -> Result<Vec<RunRecord>, Error> {
        let (table, key) = (&self.tables.runs, ("documentId", document.as_str()));
        let items = self.query_index(table, "by-document", key, "runs").await?;
        items.iter().map(run_from).collect()
    }

    /// The documents of `tenant` that have a current result, from the documents table's
    /// `by-tenant` index (eventually consistent, as every read of a global secondary index).
    pub async fn documents_of(&self, tenant: &Tenant) -> Result<Vec<DocumentRecord>, Error> {
        let (table, key) = (&self.tables.documents, ("tenant", tenant.as_str()));
        let items = self
            .query_index(table, "by-tenant", key, "documents")
            .await?;
        items.iter().map(document_from).collect()
    }

    /// Every item of `table`'s global secondary index `index` whose hash key `name` is `value`,
    /// from every page (`what` names the table in errors).
    async fn query_index(
        &self,
        table: &str,
        index: &str,
        (name, value): (&str, &str),
        what: &str,
    ) -> Result<Vec<Item>, Error> {
        self.client
            .query()
            .table_name(table)
            .index_name(index)
            .key_condition_expression("#k = :v")
            .expression_attribute_names("#k", name)
            .expression_attribute_values(":v", s(value))
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| classify(&format!("dynamodb Query {what}"), e))
    }

    /// Every run in `status`, a case status ([`RunStatus::is_case`]), through the sparse index
    /// [`items::BY_CASE`] (eventually consistent); any other status is refused as
    /// `Fatal.Internal` (there is no index of it, and no scan).
    pub async fn runs_with_status(&self, status: RunStatus) -> Result<Vec<RunRecord>, Error> {
        if !status.is_case() {
            return Err(Error::Internal(format!(
                "runs are listed by status only for cases, not {}",
                status.as_str()
            )));
        }
        let items: Vec<Item> = self
            .client
            .query()
            .table_name(&self.tables.runs)
            .index_name(items::BY_CASE)
            .key_condition_expression("#case = :case")
            .expression_attribute_names("#case", items::CASE)
            .expression_attribute_values(":case", s(status.as_str()))
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| classify("dynamodb Query runs by-case", e))?;
        items.iter().map(run_from).collect()
    }

    /// One item by its hash key, strongly consistent, read back with `read` (`what` names it in
    /// errors).
    async fn get<T>(
        &self,
        table: &str,
        (key, value): (&str, &str),
        what: &str,
        read: fn(&Item) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        let item = get_item(&self.client, table, (key, value), what).await?;
        item.as_ref().map(read).transpose()
    }

    /// Every document that has an audit chain (a full scan: an operator tool, not a hot path).
    pub async fn audited_documents(&self) -> Result<Vec<DocumentId>, Error> {
        let items = self
            .client
            .scan()
            .table_name(&self.tables.audit)
            .projection_expression("documentId")
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| classify("dynamodb Scan audit", e))?;
        let ids = items
            .iter()
            .map(|item| DocumentId::parse(req_str(item, "documentId")?))
            .collect::<Result<BTreeSet<_>, _>>()?;
        Ok(ids.into_iter().collect())
    }

    /// A strongly consistent query of `id`'s audit chain (in `seq` order unless reversed).
    fn audit_chain(&self, id: &DocumentId) -> QueryFluentBuilder {
        self.client
            .query()
            .table_name(&self.tables.audit)
            .key_condition_expression("documentId = :d")
            .expression_attribute_values(":d", s(id.as_str()))
            .consistent_read(true)
    }

    /// The writes of one change: one item, or two for an audit entry (entry and checkpoint).
    fn write_items(&self, change: Change) -> Result<Vec<TransactWriteItem>, Error> {
        Ok(match change {
            Change::Audit(entry) => {
                let checkpoint = self.checkpoint_item(&entry);
                vec![self.write_item(Change::Audit(entry))?, checkpoint]
            }
            other => vec![self.write_item(other)?],
        })
    }

    fn saga_tables(&self) -> Result<&SagaTables, Error> {
        self.saga.as_ref().ok_or_else(|| {
            Error::Internal("a saga change was committed by a store without its tables".into())
        })
    }

    fn checkpoint_item(&self, entry: &AuditEntry) -> TransactWriteItem {
        let update = Update::builder()
            .table_name(&self.tables.checkpoints)
            .key("documentId", s(entry.document_id.as_str()))
            .update_expression("SET #seq = :seq, #hash = :hash")
            .condition_expression(CHECKPOINT_CONDITION)
            .expression_attribute_names("#seq", "seq")
            .expression_attribute_names("#hash", "hash")
            .expression_attribute_values(":seq", AttributeValue::N(entry.seq.to_string()))
            .expression_attribute_values(":prev", AttributeValue::N((entry.seq - 1).to_string()))
            .expression_attribute_values(":hash", s(&entry.hash))
            .build()
            .expect("complete update");
        TransactWriteItem::builder().update(update).build()
    }

    fn write_item(&self, change: Change) -> Result<TransactWriteItem, Error> {
        let put = |table: &str, item: Item, condition: &str| {
            Put::builder()
                .table_name(table)
                .set_item(Some(item))
                .condition_expression(condition)
        };
        Ok(match change {
            Change::Journal(journal) => {
                let table = &self.saga_tables()?.journal;
                let put = crate::saga::journal::put(table, &journal);
                TransactWriteItem::builder().put(put).build()
            }
            Change::Outbox { record, from } => {
                let table = &self.saga_tables()?.outbox;
                let put = crate::saga::outbox::put(table, &record, from);
                TransactWriteItem::builder().put(put).build()
            }
            Change::Restore {
                document,
                run,
                previous,
                retracted,
            } => crate::saga::restore::item(
                &self.tables.documents,
                &document,
                &run,
                previous.as_ref(),
                retracted,
            ),
            Change::CreateRun(run) => TransactWriteItem::builder()
                .put(
                    put(
                        &self.tables.runs,
                        run_item(&run),
                        "attribute_not_exists(runId)",
                    )
                    .build()
                    .expect("complete put"),
                )
                .build(),
            Change::SetRunStatus {
                run_id,
                from,
                to,
                outputs,
                error,
            } => {
                let mut set = vec!["#status = :to".to_string()];
                let mut names = HashMap::from([
                    ("#status".to_string(), "status".to_string()),
                    ("#case".to_string(), items::CASE.to_string()),
                ]);
                let mut values = HashMap::from([
                    (":to".to_string(), s(to.as_str())),
                    (":from".to_string(), s(from.as_str())),
                ]);
                // In the operators' sparse index while a case, out of it otherwise.
                let case = if to.is_case() {
                    set.push("#case = :to".into());
                    ""
                } else {
                    " REMOVE #case"
                };
                for (i, (k, v)) in outputs.into_iter().enumerate() {
                    set.push(format!("outputs.#o{i} = :o{i}"));
                    names.insert(format!("#o{i}"), k);
                    values.insert(format!(":o{i}"), s(v));
                }
                if let Some(e) = error {
                    set.push("#error = :error".into());
                    names.insert("#error".into(), "error".into());
                    values.insert(":error".into(), s(e));
                }
                let update = Update::builder()
                    .table_name(&self.tables.runs)
                    .key("runId", s(run_id.as_str()))
                    .update_expression(format!("SET {}{case}", set.join(", ")))
                    .condition_expression("#status = :from")
                    .set_expression_attribute_names(Some(names))
                    .set_expression_attribute_values(Some(values))
                    .build()
                    .expect("complete update");
                TransactWriteItem::builder().update(update).build()
            }
            Change::Promote(doc) => {
                let item = HashMap::from([
                    ("documentId".into(), s(doc.document_id.as_str())),
                    ("tenant".into(), s(doc.tenant.as_str())),
                    ("currentRunId".into(), s(doc.current_run_id.as_str())),
                    ("sourceOrder".into(), s(&doc.source_order)),
                ]);
                let p = put(
                    &self.tables.documents,
                    item,
                    "attribute_not_exists(documentId) OR sourceOrder <= :order",
                )
                .expression_attribute_values(":order", s(&doc.source_order))
                .build()
                .expect("complete put");
                TransactWriteItem::builder().put(p).build()
            }
            Change::Ledger {
                op,
                fence,
                write,
                now,
            } => {
                let expr = crate::ledger::write_expression(fence, &write, now);
                let update = Update::builder()
                    .table_name(&self.tables.ledger)
                    .key("operationId", s(op.as_str()))
                    .update_expression(expr.update)
                    .condition_expression(expr.condition)
                    .set_expression_attribute_names(Some(expr.names))
                    .set_expression_attribute_values(Some(expr.values))
                    .build()
                    .expect("complete update");
                TransactWriteItem::builder().update(update).build()
            }
            Change::Audit(entry) => TransactWriteItem::builder()
                .put(
                    put(
                        &self.tables.audit,
                        audit_item(&entry),
                        "attribute_not_exists(seq)",
                    )
                    .build()
                    .expect("complete put"),
                )
                .build(),
        })
    }
}

impl Store for DynamoStore {
    async fn commit(&self, changes: Vec<Change>) -> Result<Result<(), Refused>, Error> {
        // Which change each transaction item belongs to, to name the refused change.
        let mut owners = Vec::new();
        let mut items = Vec::new();
        for (index, change) in changes.into_iter().enumerate() {
            for item in self.write_items(change)? {
                owners.push(index);
                items.push(item);
            }
        }
        // A lost answer may hide a committed transaction: the caller reconciles (steps::record).
        let committed = transact(&self.client, items, "dynamodb TransactWriteItems").await?;
        Ok(committed.map_err(|item| Refused {
            index: owners[item],
        }))
    }

    async fn run(&self, run_id: &RunId) -> Result<Option<RunRecord>, Error> {
        let key = ("runId", run_id.as_str());
        self.get(&self.tables.runs, key, "dynamodb GetItem run", run_from)
            .await
    }

    async fn document(&self, id: &DocumentId) -> Result<Option<DocumentRecord>, Error> {
        let key = ("documentId", id.as_str());
        self.get(
            &self.tables.documents,
            key,
            "dynamodb GetItem document",
            document_from,
        )
        .await
    }

    async fn audit_head(&self, id: &DocumentId) -> Result<Option<AuditEntry>, Error> {
        let out = self
            .audit_chain(id)
            .scan_index_forward(false)
            .limit(1)
            .send()
            .await
            .map_err(|e| classify("dynamodb Query audit head", e))?;
        out.items().first().map(audit_from).transpose()
    }

    async fn audit_checkpoint(&self, id: &DocumentId) -> Result<Option<Checkpoint>, Error> {
        let key = ("documentId", id.as_str());
        self.get(
            &self.tables.checkpoints,
            key,
            "dynamodb GetItem checkpoint",
            checkpoint_from,
        )
        .await
    }

    async fn audit_entries(&self, id: &DocumentId) -> Result<Vec<AuditEntry>, Error> {
        let items = self
            .audit_chain(id)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| classify("dynamodb Query audit", e))?;
        items.iter().map(audit_from).collect()
    }
}
