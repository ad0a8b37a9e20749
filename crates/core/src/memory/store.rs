//! Runs, documents and audit chains, committed together with ledger, saga journal and outbox
//! writes.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::ledger::Records;
use super::{MemoryJournal, MemoryLedger, MemoryOutbox};
use crate::audit::{AuditEntry, Checkpoint};
use crate::ids::{DocumentId, RunId};
use crate::ports::{Change, DocumentRecord, Refused, RunRecord, Store};
use crate::saga::{EventId, Journal, OutboxRecord};
use crate::Error;

#[derive(Debug, Default)]
pub(super) struct Tables {
    runs: BTreeMap<RunId, RunRecord>,
    pub(super) documents: BTreeMap<DocumentId, DocumentRecord>,
    audit: BTreeMap<DocumentId, BTreeMap<u64, AuditEntry>>,
    checkpoints: BTreeMap<DocumentId, Checkpoint>,
}

/// Runs, documents and audit chains with the DynamoDB adapter's conditions, and the operation
/// ledger, saga journals and outbox that [`Change::Ledger`], [`Change::Journal`] and
/// [`Change::Outbox`] write to (atomically with the rest).
#[derive(Debug, Default)]
pub struct MemoryStore {
    pub(super) tables: Mutex<Tables>,
    /// The ledger the store's [`Change::Ledger`] writes go to
    /// ([`MemoryPorts`](super::MemoryPorts) hands it to the steps as theirs).
    pub ledger: MemoryLedger,
    /// The saga journals [`Change::Journal`] writes go to (and the steps read).
    pub journal: MemoryJournal,
    /// The outbox [`Change::Outbox`] writes go to (and the steps read).
    pub outbox: MemoryOutbox,
    /// Number of successful commits (each is one DynamoDB write request in the AWS adapter).
    pub commits: Mutex<usize>,
}

impl MemoryStore {
    /// Every run record.
    pub fn runs(&self) -> Vec<RunRecord> {
        self.tables.lock().unwrap().runs.values().cloned().collect()
    }
}

/// Everything one commit may change, locked together.
struct Locked<'a> {
    tables: &'a mut Tables,
    ledger: &'a mut Records,
    journals: &'a mut BTreeMap<RunId, Journal>,
    outbox: &'a mut BTreeMap<EventId, OutboxRecord>,
}

fn allowed(locked: &Locked<'_>, change: &Change) -> bool {
    let (tables, ledger) = (&*locked.tables, &*locked.ledger);
    match change {
        Change::Journal(journal) => {
            let stored = locked
                .journals
                .get(&journal.run_id)
                .map_or(0, |j| j.version);
            stored + 1 == journal.version
        }
        Change::Outbox { record, from } => {
            let stored = locked.outbox.get(&record.body.event_id).map(|r| r.delivery);
            stored == *from
        }
        Change::Restore { document, run, .. } => tables
            .documents
            .get(document)
            .is_some_and(|d| &d.current_run_id == run),
        Change::Ledger {
            op, fence, write, ..
        } => matches!(
            crate::ledger::decide_write(ledger.get(op), op, *fence, write),
            Ok(crate::ledger::WriteDecision::Apply)
        ),
        Change::CreateRun(run) => !tables.runs.contains_key(&run.run_id),
        Change::SetRunStatus { run_id, from, .. } => {
            tables.runs.get(run_id).is_some_and(|r| r.status == *from)
        }
        Change::Promote(doc) => tables
            .documents
            .get(&doc.document_id)
            .is_none_or(|current| current.source_order <= doc.source_order),
        Change::Audit(entry) => {
            let seq_free = !tables
                .audit
                .get(&entry.document_id)
                .is_some_and(|chain| chain.contains_key(&entry.seq));
            let checkpoint_at_prev = match tables.checkpoints.get(&entry.document_id) {
                None => entry.seq == 1,
                Some(cp) => cp.seq + 1 == entry.seq,
            };
            seq_free && checkpoint_at_prev
        }
    }
}

fn apply(locked: &mut Locked<'_>, change: Change) {
    let (tables, ledger) = (&mut *locked.tables, &mut *locked.ledger);
    match change {
        Change::Journal(journal) => {
            locked.journals.insert(journal.run_id.clone(), journal);
        }
        Change::Outbox { record, .. } => {
            locked.outbox.insert(record.body.event_id.clone(), record);
        }
        Change::Restore {
            document,
            run,
            previous,
            retracted,
        } => match previous {
            Some(p) => {
                let doc = tables.documents.get_mut(&document).expect("checked");
                doc.current_run_id = p.run_id;
                doc.source_order = p.source_order;
                doc.retracted_run_id = retracted.then_some(run);
            }
            None => {
                tables.documents.remove(&document);
            }
        },
        Change::Ledger {
            op,
            fence,
            write,
            now,
        } => {
            let rec = ledger.get_mut(&op).expect("checked");
            crate::ledger::apply_write(rec, fence, &write, now);
        }
        Change::CreateRun(run) => {
            tables.runs.insert(run.run_id.clone(), run);
        }
        Change::SetRunStatus {
            run_id,
            to,
            outputs,
            error,
            ..
        } => {
            let run = tables.runs.get_mut(&run_id).expect("checked");
            run.status = to;
            run.outputs.extend(outputs);
            if error.is_some() {
                run.error = error;
            }
        }
        Change::Promote(doc) => {
            tables.documents.insert(doc.document_id.clone(), doc);
        }
        Change::Audit(entry) => {
            tables
                .checkpoints
                .insert(entry.document_id.clone(), entry.checkpoint());
            tables
                .audit
                .entry(entry.document_id.clone())
                .or_default()
                .insert(entry.seq, entry);
        }
    }
}

impl Store for MemoryStore {
    async fn commit(&self, changes: Vec<Change>) -> Result<Result<(), Refused>, Error> {
        let mut tables = self.tables.lock().unwrap();
        let mut ledger = self.ledger.records.lock().unwrap();
        let mut journals = self.journal.journals.lock().unwrap();
        let mut outbox = self.outbox.records.lock().unwrap();
        let mut locked = Locked {
            tables: &mut tables,
            ledger: &mut ledger,
            journals: &mut journals,
            outbox: &mut outbox,
        };
        if let Some(index) = changes.iter().position(|c| !allowed(&locked, c)) {
            return Ok(Err(Refused { index }));
        }
        let journal_writes = changes
            .iter()
            .filter(|c| matches!(c, Change::Journal(_)))
            .count();
        let moved: Vec<EventId> = changes
            .iter()
            .filter_map(|c| match c {
                Change::Outbox { record, .. } => Some(record.body.event_id.clone()),
                _ => None,
            })
            .collect();
        for change in changes {
            apply(&mut locked, change);
        }
        self.outbox.entered(moved);
        *self.journal.writes.lock().unwrap() += journal_writes;
        *self.commits.lock().unwrap() += 1;
        Ok(Ok(()))
    }

    async fn run(&self, run_id: &RunId) -> Result<Option<RunRecord>, Error> {
        Ok(self.tables.lock().unwrap().runs.get(run_id).cloned())
    }

    async fn document(&self, id: &DocumentId) -> Result<Option<DocumentRecord>, Error> {
        Ok(self.tables.lock().unwrap().documents.get(id).cloned())
    }

    async fn audit_head(&self, id: &DocumentId) -> Result<Option<AuditEntry>, Error> {
        let tables = self.tables.lock().unwrap();
        Ok(tables
            .audit
            .get(id)
            .and_then(|chain| chain.values().next_back().cloned()))
    }

    async fn audit_checkpoint(&self, id: &DocumentId) -> Result<Option<Checkpoint>, Error> {
        Ok(self.tables.lock().unwrap().checkpoints.get(id).cloned())
    }

    async fn audit_entries(&self, id: &DocumentId) -> Result<Vec<AuditEntry>, Error> {
        let tables = self.tables.lock().unwrap();
        Ok(tables
            .audit
            .get(id)
            .map(|chain| chain.values().cloned().collect())
            .unwrap_or_default())
    }
}
