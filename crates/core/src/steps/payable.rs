//! The reference downstream consumer's step: one event applied to its book by the per-item
//! rules ([`crate::saga::sink::rules`]), the dedup record and the effect committed together,
//! and its answer. A refusal is an answer, not a failure; a commit that lost a race is planned
//! again on what is there now.

use crate::ports::{AnswerBus, PayableBook};
use crate::saga::sink::{rules, Answer, Plan, Raced, Reads};
use crate::saga::EventBody;
use crate::Error;

/// How many times an event is planned before a race that keeps being lost is left to the
/// queue's redelivery (`Transient.InProgress`).
pub const MAX_PLANS: usize = 3;

/// Applies `event` to `book` once; the answer to publish (the same for every delivery of it).
pub async fn apply(book: &impl PayableBook, event: &EventBody) -> Result<Answer, Error> {
    let reads = Reads::of(event)?;
    for _ in 0..MAX_PLANS {
        match rules::plan(event, &book.seen(&reads).await?) {
            Plan::Repeat(answer) => return Ok(answer),
            Plan::Refuse(e) => return Ok(Answer::refused(&event.event_id, &e)),
            Plan::Write(writes) => match book.commit(&writes).await? {
                Ok(()) => return Ok(writes.answer()),
                Err(Raced) => continue,
            },
        }
    }
    Err(Error::InProgress(format!(
        "event {}: its items changed under {MAX_PLANS} plans in a row",
        event.event_id
    )))
}

/// Applies `event`, then publishes the answer; the answer is published after the commit, so a
/// failed publication (an error here) is retried by redelivery, which finds the dedup record
/// and publishes the same answer.
pub async fn apply_and_answer(
    ports: &(impl PayableBook + AnswerBus),
    event: &EventBody,
) -> Result<Answer, Error> {
    let answer = apply(ports, event).await?;
    ports.answer(&answer).await?;
    Ok(answer)
}
