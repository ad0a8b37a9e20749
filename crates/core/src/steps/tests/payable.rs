//! The consumer's step over the in-memory book: once per event id, a failed answer redelivered
//! and answered the same, a failed commit writes nothing, a lost race planned again.

use crate::ids::Tenant;
use crate::memory::{accepted_event, MemoryPayable};
use crate::saga::sink::{rules, Answer, Plan};
use crate::saga::EventBody;
use crate::steps::payable::{apply, apply_and_answer};

fn accepted(logical_key: &str, order: &str, number: &str) -> EventBody {
    accepted_event(&Tenant::parse("acme").unwrap(), logical_key, order, number)
}

#[tokio::test]
async fn a_failed_answer_is_redelivered_and_answered_the_same_with_one_receipt() {
    let ports = MemoryPayable::default();
    let event = accepted("inv.png", "1", "INV-1");
    *ports.fail_answers.lock().unwrap() = 1;
    let err = apply_and_answer(&ports, &event).await.unwrap_err();
    assert_eq!(err.name(), "Transient.Dependency");
    assert!(ports.answers.lock().unwrap().is_empty());
    let first = ports
        .book
        .lock()
        .unwrap()
        .receipt_for(&event.event_id)
        .cloned();
    assert!(first.is_some(), "the commit came before the answer");

    let answer = apply_and_answer(&ports, &event).await.unwrap();
    let again = apply_and_answer(&ports, &event).await.unwrap();
    assert_eq!(answer, again);
    assert_eq!(*ports.answers.lock().unwrap(), vec![answer.clone(), again]);
    let Answer::Recorded { receipt_id, .. } = answer else {
        panic!("{answer:?}")
    };
    assert_eq!(receipt_id, first.unwrap().receipt_id, "one receipt");
}

#[tokio::test]
async fn a_failed_commit_writes_nothing_and_the_redelivery_applies_it() {
    let ports = MemoryPayable::default();
    let event = accepted("inv.png", "1", "INV-1");
    *ports.fail_commits.lock().unwrap() = 1;
    let err = apply(&ports, &event).await.unwrap_err();
    assert_eq!(err.name(), "Transient.Dependency");
    assert!(ports
        .book
        .lock()
        .unwrap()
        .receipt_for(&event.event_id)
        .is_none());
    assert_eq!(
        apply(&ports, &event).await.unwrap().detail_type(),
        "document.recorded"
    );
}

#[tokio::test]
async fn a_commit_that_lost_the_invoice_to_another_document_is_refused_not_failed() {
    let ports = MemoryPayable::default();
    let mine = accepted("inv.png", "1", "INV-1");
    let theirs = accepted("copy.png", "1", "INV-1");
    let Plan::Write(first) = rules::plan(&theirs, &Default::default()) else {
        panic!()
    };
    *ports.race.lock().unwrap() = Some(*first);
    let answer = apply_and_answer(&ports, &mine).await.unwrap();
    assert_eq!(
        answer,
        Answer::Refused {
            event_id: mine.event_id.clone(),
            error: "Business.DuplicateInvoice".into()
        }
    );
    assert!(ports
        .book
        .lock()
        .unwrap()
        .receipt_for(&mine.event_id)
        .is_none());
    assert!(ports
        .book
        .lock()
        .unwrap()
        .receipt_for(&theirs.event_id)
        .is_some());
}
