//! Route's saga on DynamoDB: the per-run compensation journal (`journal.rs`), the outbox
//! (`outbox.rs`), the restore of a promotion on the documents table (`restore.rs`), and the
//! receipt waits (`waits.rs`, apart from every transaction).
//!
//! Each module gives the adapter of its port (reads, and the writes that have no audit entry of
//! their own) and the transaction item of its `Change`, which `DynamoStore` puts into the
//! `TransactWriteItems` that also appends the audit entry: the journal's settlement of an
//! effect, the outbox move that goes with it and the audit entry are one write. The conditions:
//!
//! - journal: [`journal::FIRST_CONDITION`] for version 1, else [`journal::NEXT_CONDITION`]
//!   (`version = :prev`): of two writers that read one version, one wins; the loser re-reads.
//! - outbox: [`outbox::PERSIST_CONDITION`] (`attribute_not_exists(eventId)`: an event is
//!   persisted once) and [`outbox::ADVANCE_CONDITION`] (`delivery = :from`: forward only, once).
//! - restore: [`restore::RESTORE_CONDITION`] (`currentRunId = :run`: a newer result is never
//!   undone).
//!
//! The key schemas and indexes are the template's (`SagaJournalTable`, `OutboxTable`); the
//! constants here are what `tests/localaws/saga.rs` compares with infra/template.yaml.

pub mod journal;
pub mod outbox;
pub mod restore;
pub mod waits;

pub use journal::DynamoJournal;
pub use outbox::DynamoOutbox;
pub use waits::DynamoWaits;

use crate::item::put_item;

/// The saga's table names.
#[derive(Debug, Clone)]
pub struct SagaTables {
    /// Journals, keyed by `runId` (`SAGA_JOURNAL_TABLE`).
    pub journal: String,
    /// Outbox records, keyed by `eventId` (`OUTBOX_TABLE`).
    pub outbox: String,
}

impl SagaTables {
    /// The names from `SAGA_JOURNAL_TABLE` and `OUTBOX_TABLE`, or `None` when neither is set (a
    /// function that runs no saga); one without the other is a configuration error.
    pub fn from_env() -> Result<Option<SagaTables>, docket_core::Error> {
        let journal = std::env::var("SAGA_JOURNAL_TABLE").ok();
        let outbox = std::env::var("OUTBOX_TABLE").ok();
        match (journal, outbox) {
            (None, None) => Ok(None),
            (Some(journal), Some(outbox)) => Ok(Some(SagaTables { journal, outbox })),
            _ => Err(docket_core::Error::Internal(
                "SAGA_JOURNAL_TABLE and OUTBOX_TABLE are set together or not at all".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests;
