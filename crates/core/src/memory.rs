//! In-memory implementations of the ports, side by side with the AWS ones in `docket-aws`: the
//! same contracts (conditional writes, versions, idempotency tokens), for unit tests of the steps.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::audit::{AuditEntry, Checkpoint};
use crate::ids::{DocumentId, OperationId, RunId};
use crate::model::run::ObjectRef;
use crate::ports::{
    BlobStore, Change, DocumentRecord, HasBlobs, HasCallback, HasLedger, HasOcr, HasReviews,
    HasStore, HasWorkflow, ObjectMeta, Ocr, OcrPoll, Refused, RunRecord, Started, Store, Workflow,
};
use crate::review::MemoryReviewStore;
use crate::Error;

/// Every in-memory port in one bundle, as the unit tests hand it to the steps. The ledger is the
/// store's: its [`Change::Ledger`] writes commit there.
#[derive(Debug, Default)]
pub struct MemoryPorts {
    /// Objects.
    pub blobs: MemoryBlobs,
    /// Runs, documents, audit chains, and the ledger.
    pub store: MemoryStore,
    /// OCR jobs.
    pub ocr: FakeOcr,
    /// Executions.
    pub workflow: MemoryWorkflow,
    /// Review tasks.
    pub reviews: MemoryReviewStore,
    /// Callbacks to waiting Tasks.
    pub callback: MemoryCallback,
}

impl HasBlobs for MemoryPorts {
    type Blobs = MemoryBlobs;
    fn blobs(&self) -> &MemoryBlobs {
        &self.blobs
    }
}

impl HasStore for MemoryPorts {
    type Store = MemoryStore;
    fn store(&self) -> &MemoryStore {
        &self.store
    }
}

impl HasLedger for MemoryPorts {
    type Ledger = MemoryLedger;
    fn ledger(&self) -> &MemoryLedger {
        &self.store.ledger
    }
}

impl HasOcr for MemoryPorts {
    type Ocr = FakeOcr;
    fn ocr(&self) -> &FakeOcr {
        &self.ocr
    }
}

impl HasWorkflow for MemoryPorts {
    type Workflow = MemoryWorkflow;
    fn workflow(&self) -> &MemoryWorkflow {
        &self.workflow
    }
}

impl HasReviews for MemoryPorts {
    type Reviews = MemoryReviewStore;
    fn reviews(&self) -> &MemoryReviewStore {
        &self.reviews
    }
}

impl HasCallback for MemoryPorts {
    type Callback = MemoryCallback;
    fn callback(&self) -> &MemoryCallback {
        &self.callback
    }
}

/// A versioned object store.
#[derive(Debug, Default)]
pub struct MemoryBlobs {
    /// (bucket, key) → versions, oldest first: (version id, bytes, metadata).
    objects: Mutex<BTreeMap<(String, String), Vec<StoredObject>>>,
}

type StoredObject = (String, Vec<u8>, BTreeMap<String, String>);

impl MemoryBlobs {
    /// Stores `body` as a new version and returns the version id.
    pub fn upload(&self, bucket: &str, key: &str, body: &[u8]) -> String {
        let mut objects = self.objects.lock().unwrap();
        let versions = objects.entry((bucket.into(), key.into())).or_default();
        let version = format!("v{}", versions.len() + 1);
        versions.push((version.clone(), body.to_vec(), BTreeMap::new()));
        version
    }

    /// The metadata of the latest version of an object.
    pub fn metadata(&self, bucket: &str, key: &str) -> Option<BTreeMap<String, String>> {
        let objects = self.objects.lock().unwrap();
        objects
            .get(&(bucket.into(), key.into()))
            .and_then(|v| v.last())
            .map(|(_, _, m)| m.clone())
    }

    /// Every key in a bucket.
    pub fn keys(&self, bucket: &str) -> Vec<String> {
        let objects = self.objects.lock().unwrap();
        objects
            .keys()
            .filter(|(b, _)| b == bucket)
            .map(|(_, k)| k.clone())
            .collect()
    }

    fn find(&self, obj: &ObjectRef) -> Option<StoredObject> {
        let objects = self.objects.lock().unwrap();
        let versions = objects.get(&(obj.bucket.clone(), obj.key.clone()))?;
        match &obj.version_id {
            Some(v) => versions.iter().find(|(id, _, _)| id == v).cloned(),
            None => versions.last().cloned(),
        }
    }
}

impl BlobStore for MemoryBlobs {
    async fn head(&self, obj: &ObjectRef) -> Result<Option<ObjectMeta>, Error> {
        Ok(self.find(obj).map(|(version, bytes, _)| ObjectMeta {
            size: bytes.len() as u64,
            version_id: Some(version),
        }))
    }

    async fn get(&self, obj: &ObjectRef) -> Result<Vec<u8>, Error> {
        self.find(obj)
            .map(|(_, bytes, _)| bytes)
            .ok_or_else(|| Error::BadInput(format!("no such object {obj}")))
    }

    async fn put(&self, obj: &ObjectRef, body: Vec<u8>, _: &str) -> Result<Option<String>, Error> {
        Ok(Some(self.upload(&obj.bucket, &obj.key, &body)))
    }

    async fn copy(
        &self,
        from: &ObjectRef,
        to: &ObjectRef,
        metadata: &BTreeMap<String, String>,
    ) -> Result<(), Error> {
        let (_, bytes, _) = self
            .find(from)
            .ok_or_else(|| Error::BadInput(format!("no such object {from}")))?;
        let mut objects = self.objects.lock().unwrap();
        let versions = objects
            .entry((to.bucket.clone(), to.key.clone()))
            .or_default();
        let version = format!("v{}", versions.len() + 1);
        versions.push((version, bytes, metadata.clone()));
        Ok(())
    }
}

#[derive(Debug, Default)]
struct Tables {
    runs: BTreeMap<RunId, RunRecord>,
    documents: BTreeMap<DocumentId, DocumentRecord>,
    audit: BTreeMap<DocumentId, BTreeMap<u64, AuditEntry>>,
    checkpoints: BTreeMap<DocumentId, Checkpoint>,
}

/// Runs, documents and audit chains with the DynamoDB adapter's conditions, and the operation
/// ledger that [`Change::Ledger`] writes commit to (atomically with the rest).
#[derive(Debug, Default)]
pub struct MemoryStore {
    tables: Mutex<Tables>,
    /// The ledger the store's [`Change::Ledger`] writes go to ([`MemoryPorts`] hands it to the
    /// steps as theirs).
    pub ledger: MemoryLedger,
    /// Number of successful commits (each is one DynamoDB write request in the AWS adapter).
    pub commits: Mutex<usize>,
}

impl MemoryStore {
    /// Every run record.
    pub fn runs(&self) -> Vec<RunRecord> {
        self.tables.lock().unwrap().runs.values().cloned().collect()
    }
}

fn allowed(tables: &Tables, ledger: &Records, change: &Change) -> bool {
    match change {
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

fn apply(tables: &mut Tables, ledger: &mut Records, change: Change) {
    match change {
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
        if let Some(index) = changes.iter().position(|c| !allowed(&tables, &ledger, c)) {
            return Ok(Err(Refused { index }));
        }
        for change in changes {
            apply(&mut tables, &mut ledger, change);
        }
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

/// A scripted OCR provider: one job per operation id (like Textract's ClientRequestToken); polls
/// answer from `results` by the document's key, `InProgress` for the first `pending_polls` polls.
#[derive(Debug, Default)]
pub struct FakeOcr {
    /// Operation id → (job id, document).
    jobs: Mutex<BTreeMap<OperationId, (String, ObjectRef)>>,
    /// Document key → what the job ends with.
    pub results: Mutex<BTreeMap<String, OcrPoll>>,
    /// Polls that answer `InProgress` before the result.
    pub pending_polls: Mutex<usize>,
    /// Every start call, including repeats.
    pub start_calls: Mutex<usize>,
    /// The next this many start calls start (or find) the job and then lose the answer:
    /// `Ambiguous.OutcomeUnknown`, as after a timeout.
    pub lose_start_answers: Mutex<usize>,
}

impl FakeOcr {
    /// Number of distinct jobs started.
    pub fn job_count(&self) -> usize {
        self.jobs.lock().unwrap().len()
    }
}

impl Ocr for FakeOcr {
    async fn start(
        &self,
        op: &OperationId,
        document: &ObjectRef,
        _: &str,
    ) -> Result<String, Error> {
        *self.start_calls.lock().unwrap() += 1;
        let mut jobs = self.jobs.lock().unwrap();
        let n = jobs.len();
        let (job, _) = jobs
            .entry(op.clone())
            .or_insert_with(|| (format!("job-{n}"), document.clone()));
        let mut lose = self.lose_start_answers.lock().unwrap();
        if *lose > 0 {
            *lose -= 1;
            return Err(Error::OutcomeUnknown(format!("start of {op}: answer lost")));
        }
        Ok(job.clone())
    }

    async fn poll(&self, job_id: &str) -> Result<OcrPoll, Error> {
        {
            let mut pending = self.pending_polls.lock().unwrap();
            if *pending > 0 {
                *pending -= 1;
                return Ok(OcrPoll::InProgress);
            }
        }
        let jobs = self.jobs.lock().unwrap();
        let (_, document) = jobs
            .values()
            .find(|(job, _)| job == job_id)
            .ok_or_else(|| Error::BadInput(format!("unknown job {job_id}")))?;
        self.results
            .lock()
            .unwrap()
            .get(&document.key)
            .cloned()
            .ok_or_else(|| Error::Internal(format!("no scripted result for {}", document.key)))
    }
}

/// A workflow engine that records executions by name.
#[derive(Debug, Default)]
pub struct MemoryWorkflow {
    /// Execution name → input.
    pub executions: Mutex<BTreeMap<String, Value>>,
}

impl Workflow for MemoryWorkflow {
    async fn start(&self, run: &RunId, input: &Value) -> Result<Started, Error> {
        let mut executions = self.executions.lock().unwrap();
        if executions.contains_key(run.as_str()) {
            return Ok(Started::AlreadyExists);
        }
        executions.insert(run.as_str().to_string(), input.clone());
        Ok(Started::New)
    }
}

/// Task callbacks as recorded calls: (token, `Ok(output)` or `Err(error name)`). Tokens in
/// `closed` answer `Conflict.ReviewExpired`, as Step Functions does after the Task timed out.
#[derive(Debug, Default)]
pub struct MemoryCallback {
    /// Every accepted callback, in order.
    pub calls: Mutex<Vec<(String, Result<Value, String>)>>,
    /// Tokens the workflow no longer waits on.
    pub closed: Mutex<Vec<String>>,
}

impl MemoryCallback {
    fn call(
        &self,
        token: &crate::model::run::TaskToken,
        what: Result<Value, String>,
    ) -> Result<(), Error> {
        if self
            .closed
            .lock()
            .unwrap()
            .iter()
            .any(|t| t == token.expose())
        {
            return Err(Error::ReviewExpired("TaskTimedOut".into()));
        }
        self.calls
            .lock()
            .unwrap()
            .push((token.expose().to_string(), what));
        Ok(())
    }
}

impl crate::ports::TaskCallback for MemoryCallback {
    async fn succeed(
        &self,
        token: &crate::model::run::TaskToken,
        output: &Value,
    ) -> Result<(), Error> {
        self.call(token, Ok(output.clone()))
    }

    async fn fail(
        &self,
        token: &crate::model::run::TaskToken,
        error: crate::error::ErrorKind,
        _cause: &str,
    ) -> Result<(), Error> {
        self.call(token, Err(error.name().to_string()))
    }
}

type Records = BTreeMap<OperationId, crate::ledger::OperationRecord>;

/// The operation ledger under one lock, deciding with the same pure functions as the DynamoDB
/// ledger ([`crate::ledger::decide_claim`], [`crate::ledger::decide_write`]).
#[derive(Debug, Default)]
pub struct MemoryLedger {
    records: Mutex<Records>,
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
