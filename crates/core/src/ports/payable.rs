//! The reference downstream consumer's own stores ("accounts payable"): its book, kept as
//! separate items and written with conditions ([`crate::saga::sink::rules`]), and the bus it
//! answers on.

use std::future::Future;

use crate::saga::sink::{Answer, Raced, Reads, Seen, Writes};
use crate::Error;

/// The consumer's book (DynamoDB: one item per event id, per receipt, per invoice key).
pub trait PayableBook: Send + Sync {
    /// The items `reads` names (strongly consistent).
    fn seen(&self, reads: &Reads) -> impl Future<Output = Result<Seen, Error>> + Send;
    /// Commits `writes` in one transaction, each write conditional on its item being as read;
    /// `Raced` (nothing written) when one is not.
    fn commit(
        &self,
        writes: &Writes,
    ) -> impl Future<Output = Result<Result<(), Raced>, Error>> + Send;
}

/// Where the consumer answers (EventBridge PutEvents, source `docket.downstream`).
pub trait AnswerBus: Send + Sync {
    /// Publishes `answer`; a publication that failed is retried by redelivering the event
    /// (answers are idempotent by event id).
    fn answer(&self, answer: &Answer) -> impl Future<Output = Result<(), Error>> + Send;
}
