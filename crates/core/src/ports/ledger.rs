//! The operation ledger (DynamoDB): claims and the fenced writes of their holders.

use std::future::Future;

use crate::error::ErrorKind;
use crate::ids::OperationId;
use crate::ledger::{Claimed, LeaseRules, OperationRecord, Write};
use crate::Error;

/// The operation ledger: every write is conditional; the rules are [`crate::ledger`]'s.
pub trait Ledger: Send + Sync {
    /// Claims `op` for parameters `fingerprint` at `now` (one conditional write). Errors:
    /// [`Error::ParametersChanged`], [`Error::InProgress`] (a live claim by someone else),
    /// the recorded error of a failed operation, [`Error::Unresolved`],
    /// [`Error::RetentionExpired`], or a store error.
    fn claim(
        &self,
        op: &OperationId,
        fingerprint: &str,
        now: i64,
        rules: &LeaseRules,
    ) -> impl Future<Output = Result<Claimed, Error>> + Send;
    /// A write by the holder of `fence` (one conditional write): applied only while the record
    /// carries that fence and a status the write moves from; the same write repeated after a
    /// lost acknowledgement succeeds without writing again; anything else is
    /// [`Error::FencedOut`] (see [`decide_write`](crate::ledger::decide_write)).
    fn write(
        &self,
        op: &OperationId,
        fence: u64,
        write: Write,
        now: i64,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// In progress → accepted: a provider holds the work as `job_id`; extends the lease.
    fn accept(
        &self,
        op: &OperationId,
        fence: u64,
        job_id: &str,
        now: i64,
    ) -> impl Future<Output = Result<(), Error>> + Send {
        let job_id = job_id.to_string();
        self.write(op, fence, Write::Accept { job_id }, now)
    }
    /// In progress or accepted → completed, with where the result is and its hash.
    fn complete(
        &self,
        op: &OperationId,
        fence: u64,
        result_pointer: &str,
        result_hash: &str,
        now: i64,
    ) -> impl Future<Output = Result<(), Error>> + Send {
        let write = Write::Complete {
            result_pointer: result_pointer.to_string(),
            result_hash: result_hash.to_string(),
        };
        self.write(op, fence, write, now)
    }
    /// In progress or accepted → failed with `error` (not `Transient.*`: a transient error is
    /// not an outcome, the lease runs out and a retry takes over).
    fn fail(
        &self,
        op: &OperationId,
        fence: u64,
        error: ErrorKind,
        now: i64,
    ) -> impl Future<Output = Result<(), Error>> + Send {
        self.write(op, fence, Write::Fail { error }, now)
    }
    /// In progress or accepted → unresolved, with who decides and what they should do.
    fn mark_unresolved(
        &self,
        op: &OperationId,
        fence: u64,
        owner: &str,
        next_action: &str,
        now: i64,
    ) -> impl Future<Output = Result<(), Error>> + Send {
        let write = Write::MarkUnresolved {
            owner: owner.to_string(),
            next_action: next_action.to_string(),
        };
        self.write(op, fence, write, now)
    }
    /// The record of `op` (strongly consistent).
    fn get(
        &self,
        op: &OperationId,
    ) -> impl Future<Output = Result<Option<OperationRecord>, Error>> + Send;
    /// Every unresolved operation, for operators.
    fn unresolved(&self) -> impl Future<Output = Result<Vec<OperationRecord>, Error>> + Send;
}
