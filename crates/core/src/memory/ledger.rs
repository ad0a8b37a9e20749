//! The operation ledger under one lock.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::ids::OperationId;
use crate::Error;

pub(super) type Records = BTreeMap<OperationId, crate::ledger::OperationRecord>;

/// The operation ledger under one lock, deciding with the same pure functions as the DynamoDB
/// ledger ([`crate::ledger::decide_claim`], [`crate::ledger::decide_write`]).
#[derive(Debug, Default)]
pub struct MemoryLedger {
    pub(super) records: Mutex<Records>,
    /// Calls made (each is one DynamoDB request in the AWS adapter).
    pub requests: Mutex<usize>,
    /// The next this many calls fail with `Transient.Dependency`, as an unavailable store would.
    pub fail_next: Mutex<usize>,
}

impl MemoryLedger {
    fn call(&self, what: &str) -> Result<(), Error> {
        *self.requests.lock().unwrap() += 1;
        let mut fail = self.fail_next.lock().unwrap();
        if *fail > 0 {
            *fail -= 1;
            return Err(Error::Dependency(format!(
                "ledger {what}: store unavailable"
            )));
        }
        Ok(())
    }

    fn apply(
        &self,
        op: &OperationId,
        fence: u64,
        write: crate::ledger::Write,
        now: i64,
    ) -> Result<(), Error> {
        use crate::ledger::{apply_write, decide_write, WriteDecision};
        self.call("write")?;
        let mut records = self.records.lock().unwrap();
        match decide_write(records.get(op), op, fence, &write)? {
            WriteDecision::Apply => {
                let rec = records.get_mut(op).expect("decided on it");
                apply_write(rec, fence, &write, now);
            }
            WriteDecision::AlreadyApplied => {}
        }
        Ok(())
    }
}

impl crate::ports::Ledger for MemoryLedger {
    async fn claim(
        &self,
        op: &OperationId,
        fingerprint: &str,
        now: i64,
        rules: &crate::ledger::LeaseRules,
    ) -> Result<crate::ledger::Claimed, Error> {
        use crate::ledger::{claimed_record, decide_claim, Claimed};
        self.call("claim")?;
        let mut records = self.records.lock().unwrap();
        let previous = records.get(op);
        let claimed = decide_claim(previous, op, fingerprint, now)?;
        let fence = match &claimed {
            Claimed::Fresh { fence } | Claimed::TakenOver { fence, .. } => *fence,
            Claimed::AlreadyDone(_) => return Ok(claimed),
        };
        let rec = claimed_record(previous, op, fingerprint, fence, now, rules);
        records.insert(op.clone(), rec);
        Ok(claimed)
    }

    async fn write(
        &self,
        op: &OperationId,
        fence: u64,
        write: crate::ledger::Write,
        now: i64,
    ) -> Result<(), Error> {
        self.apply(op, fence, write, now)
    }

    async fn get(&self, op: &OperationId) -> Result<Option<crate::ledger::OperationRecord>, Error> {
        self.call("get")?;
        Ok(self.records.lock().unwrap().get(op).cloned())
    }

    async fn unresolved(&self) -> Result<Vec<crate::ledger::OperationRecord>, Error> {
        self.call("unresolved")?;
        let records = self.records.lock().unwrap();
        Ok(records
            .values()
            .filter(|r| r.status == crate::ledger::LedgerStatus::Unresolved)
            .cloned()
            .collect())
    }
}
