//! The reference consumer in memory: its book under a lock (the book checks the write
//! conditions as DynamoDB would) and the answers it sent; [`accepted_event`] builds the events
//! the consumer's tests publish.

use std::sync::Mutex;

use super::saga::take;
use crate::ids::{sha256_hex, DocumentId, RunId, SourceVersion, Tenant};
use crate::model::run::{ObjectRef, RunInput};
use crate::ports::{AnswerBus, PayableBook};
use crate::saga::outbox::invoice_key;
use crate::saga::sink::{Answer, Book, Raced, Reads, Seen, Writes};
use crate::saga::EventBody;
use crate::Error;

/// The book, the answers published, and faults to inject.
#[derive(Debug, Default)]
pub struct MemoryPayable {
    /// The book.
    pub book: Mutex<Book>,
    /// Every answer published, in order.
    pub answers: Mutex<Vec<Answer>>,
    /// The next this many commits fail (`Transient.Dependency`) and write nothing.
    pub fail_commits: Mutex<usize>,
    /// The next this many publications fail (`Transient.Dependency`).
    pub fail_answers: Mutex<usize>,
    /// Before the next commit, this plan's writes are committed first (a racing consumer).
    pub race: Mutex<Option<Writes>>,
}

impl PayableBook for MemoryPayable {
    async fn seen(&self, reads: &Reads) -> Result<Seen, Error> {
        Ok(self.book.lock().unwrap().seen_by(reads))
    }

    async fn commit(&self, writes: &Writes) -> Result<Result<(), Raced>, Error> {
        if take(&self.fail_commits) {
            return Err(Error::Dependency("TransactWriteItems: throttled".into()));
        }
        let mut book = self.book.lock().unwrap();
        if let Some(first) = self.race.lock().unwrap().take() {
            book.commit(&first).expect("the racing plan commits");
        }
        Ok(book.commit(writes))
    }
}

impl AnswerBus for MemoryPayable {
    async fn answer(&self, answer: &Answer) -> Result<(), Error> {
        if take(&self.fail_answers) {
            return Err(Error::Dependency("PutEvents: throttled".into()));
        }
        self.answers.lock().unwrap().push(answer.clone());
        Ok(())
    }
}

/// The `document.accepted` event of version `order` of `tenant`'s `logical_key` for invoice
/// `number` (issuer "ACME Supplies Ltd"), as the consumer's tests publish it.
pub fn accepted_event(tenant: &Tenant, logical_key: &str, order: &str, number: &str) -> EventBody {
    let document_id = DocumentId::new(tenant, logical_key);
    let source = SourceVersion {
        version_id: format!("v{order}"),
        sha256: sha256_hex(format!("{logical_key}\n{order}").as_bytes()),
    };
    let run = RunInput {
        run_id: RunId::new(&document_id, &source, "pconfig", 0),
        tenant: tenant.clone(),
        raw: ObjectRef::new("raw", format!("inbox/{tenant}/{logical_key}")),
        sha256: source.sha256.clone(),
        document_id,
        source_order: order.into(),
        config_fingerprint: "pconfig".into(),
        reuse_ocr: None,
        pages: None,
        read_at_ms: None,
    };
    let result = ObjectRef::new("derived", format!("{tenant}/{}/result.json", run.run_id));
    let key = invoice_key(tenant, "ACME Supplies Ltd", number);
    EventBody::accepted(&run, &result, &"cd".repeat(32), key)
}
