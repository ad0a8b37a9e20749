//! The reference consumer in memory: its book under a lock (the book checks the write
//! conditions as DynamoDB would) and the answers it sent.

use std::sync::Mutex;

use super::saga::take;
use crate::ports::{AnswerBus, PayableBook};
use crate::saga::sink::{Answer, Book, Raced, Reads, Seen, Writes};
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
