//! The audit log: append-only, one hash chain per document.
//!
//! Entry `n` carries the hash of entry `n-1` (the first carries [`GENESIS`]) and its own hash over
//! every other field, in canonical JSON. Appends are conditional on the sequence number (the store
//! refuses a second entry with the same seq: no forks; seq is always last + 1: no gaps). Nothing
//! updates or deletes an entry. [`verify`] recomputes a chain and names the first bad entry;
//! [`digest`] anchors the chains' heads outside the tables, which catches a rewrite that
//! recomputed the hashes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{canonical_json, sha256_hex, DocumentId, OperationId, RunId};

pub mod digest;

/// The previous-hash of the first entry of every chain.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What a step wants recorded; [`seal`] turns it into a chained entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditDraft {
    /// Who acted: a component (`docket/ingest`) or a person (`reviewer:alice@acme`).
    pub actor: String,
    /// What happened, e.g. `document.accepted`, `ocr.completed`, `run.completed`.
    pub action: String,
    /// The run, when the action belongs to one.
    pub run_id: Option<RunId>,
    /// The operation, when the action is one.
    pub operation_id: Option<OperationId>,
    /// Hashes of what the action read (name → sha256).
    pub input_hashes: BTreeMap<String, String>,
    /// Where its outputs are (name → pointer such as `s3://bucket/key`).
    pub output_pointers: BTreeMap<String, String>,
    /// Small structured facts (ids, statuses, reasons). Never document content.
    pub detail: Value,
}

impl AuditDraft {
    /// A draft with no inputs, outputs or detail.
    pub fn new(actor: &str, action: &str, run_id: Option<&RunId>) -> Self {
        AuditDraft {
            actor: actor.into(),
            action: action.into(),
            run_id: run_id.cloned(),
            operation_id: None,
            input_hashes: BTreeMap::new(),
            output_pointers: BTreeMap::new(),
            detail: Value::Null,
        }
    }

    /// Adds the operation id.
    pub fn operation(mut self, id: &OperationId) -> Self {
        self.operation_id = Some(id.clone());
        self
    }

    /// Adds an input hash.
    pub fn input(mut self, name: &str, sha256: &str) -> Self {
        self.input_hashes.insert(name.into(), sha256.into());
        self
    }

    /// Adds an output pointer.
    pub fn output(mut self, name: &str, pointer: &str) -> Self {
        self.output_pointers.insert(name.into(), pointer.into());
        self
    }

    /// Sets the detail.
    pub fn detail(mut self, detail: Value) -> Self {
        self.detail = detail;
        self
    }
}

/// One sealed entry of a document's chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// The chain this entry belongs to.
    pub document_id: DocumentId,
    /// 1-based position in the chain.
    pub seq: u64,
    /// Hash of entry `seq - 1` ([`GENESIS`] for the first).
    pub prev_hash: String,
    /// RFC 3339 UTC time of the append.
    pub time: String,
    /// The recorded facts.
    #[serde(flatten)]
    pub draft: AuditDraft,
    /// SHA-256 over the canonical JSON of every other field.
    pub hash: String,
}

/// The head of a chain: enough to append the next entry and to detect truncation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The last entry's seq.
    pub seq: u64,
    /// The last entry's hash.
    pub hash: String,
}

impl AuditEntry {
    /// The hash this entry should have.
    pub fn compute_hash(&self) -> String {
        let mut v = serde_json::to_value(self).expect("entries serialize");
        v.as_object_mut().expect("an object").remove("hash");
        sha256_hex(canonical_json(&v).as_bytes())
    }

    /// This entry as a checkpoint.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            seq: self.seq,
            hash: self.hash.clone(),
        }
    }
}

/// Seals `draft` as the entry after `prev` (or the first of the chain).
pub fn seal(
    document_id: &DocumentId,
    prev: Option<&Checkpoint>,
    time: String,
    draft: AuditDraft,
) -> AuditEntry {
    let mut entry = AuditEntry {
        document_id: document_id.clone(),
        seq: prev.map_or(1, |p| p.seq + 1),
        prev_hash: prev.map_or(GENESIS.to_string(), |p| p.hash.clone()),
        time,
        draft,
        hash: String::new(),
    };
    entry.hash = entry.compute_hash();
    entry
}

/// The first problem found in a chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// Entry `seq`'s stored hash is not the hash of its content (it was edited).
    #[error("entry {seq}: content does not match its hash (edited)")]
    Tampered {
        /// The entry.
        seq: u64,
    },
    /// Entry `seq`'s previous-hash is not the hash of the entry before it.
    #[error("entry {seq}: previous-hash does not match entry {}", seq - 1)]
    BrokenLink {
        /// The entry.
        seq: u64,
    },
    /// The entry at position `expected` is missing (deleted, or entries reordered).
    #[error("entry {expected} missing: found seq {found} in its place")]
    Gap {
        /// The seq that should be next.
        expected: u64,
        /// The seq found there.
        found: u64,
    },
    /// The chain ends before the checkpoint (tail truncated).
    #[error("chain ends at entry {last} but the checkpoint records entry {checkpoint}")]
    Truncated {
        /// The last entry present.
        last: u64,
        /// The seq the checkpoint records.
        checkpoint: u64,
    },
    /// The checkpoint's hash differs from the entry it names.
    #[error("checkpoint hash differs from entry {seq}")]
    CheckpointMismatch {
        /// The entry.
        seq: u64,
    },
    /// An entry belongs to another document's chain.
    #[error("entry {seq} belongs to another document")]
    ForeignEntry {
        /// The entry.
        seq: u64,
    },
}

impl ChainError {
    /// The seq of the first entry at fault (for a truncation: the first missing one).
    pub fn seq(&self) -> u64 {
        match self {
            ChainError::Tampered { seq }
            | ChainError::BrokenLink { seq }
            | ChainError::CheckpointMismatch { seq }
            | ChainError::ForeignEntry { seq } => *seq,
            ChainError::Gap { expected, .. } => *expected,
            ChainError::Truncated { last, .. } => last + 1,
        }
    }
}

/// Recomputes `entries` (in storage order) as one document's chain, and checks it against the
/// checkpoint kept outside the chain, if there is one. Returns the first problem.
pub fn verify(
    document_id: &DocumentId,
    entries: &[AuditEntry],
    checkpoint: Option<&Checkpoint>,
) -> Result<(), ChainError> {
    let mut prev_hash = GENESIS.to_string();
    for (i, entry) in entries.iter().enumerate() {
        let expected = i as u64 + 1;
        if entry.seq != expected {
            return Err(ChainError::Gap {
                expected,
                found: entry.seq,
            });
        }
        if &entry.document_id != document_id {
            return Err(ChainError::ForeignEntry { seq: entry.seq });
        }
        if entry.compute_hash() != entry.hash {
            return Err(ChainError::Tampered { seq: entry.seq });
        }
        if entry.prev_hash != prev_hash {
            return Err(ChainError::BrokenLink { seq: entry.seq });
        }
        prev_hash = entry.hash.clone();
    }
    if let Some(cp) = checkpoint {
        let last = entries.len() as u64;
        if last < cp.seq {
            return Err(ChainError::Truncated {
                last,
                checkpoint: cp.seq,
            });
        }
        if entries[cp.seq as usize - 1].hash != cp.hash {
            return Err(ChainError::CheckpointMismatch { seq: cp.seq });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
