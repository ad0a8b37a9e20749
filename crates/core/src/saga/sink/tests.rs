//! The consumer's per-item rules: from the items read to the conditional writes and the answer;
//! the book's write conditions refuse a plan made on items that changed since.

use serde_json::json;

use super::*;
use crate::ids::Tenant;
use crate::memory::accepted_event;

fn accepted(logical_key: &str, order: &str, number: &str) -> EventBody {
    accepted_event(&Tenant::parse("acme").unwrap(), logical_key, order, number)
}

fn writes(plan: Plan) -> Writes {
    match plan {
        Plan::Write(w) => *w,
        other => panic!("expected writes, got {other:?}"),
    }
}

fn refusal(plan: Plan) -> Error {
    match plan {
        Plan::Refuse(e) => e,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_first_event_writes_its_dedup_record_receipt_and_entry_conditionally_on_none() {
    let event = accepted("inv.png", "1", "INV-1");
    let w = writes(rules::plan(&event, &Seen::default()));
    let receipt = ReceiptId::for_event(&event.event_id);
    assert_eq!(w.dedup.0, event.event_id);
    assert_eq!(w.receipt.as_ref().unwrap().receipt_id, receipt);
    let entry = w.entry.as_ref().unwrap();
    assert_eq!(entry.expected, None, "the entry is written only if absent");
    assert_eq!(entry.entry.receipt_id, receipt);
    assert_eq!((w.void.clone(), w.free.clone()), (None, None));
    let answer = w.answer();
    assert_eq!(answer.detail_type(), "document.recorded");
    assert_eq!(
        answer.detail(),
        json!({"eventId": event.event_id.as_str(), "receiptId": receipt.to_string()})
    );
}

#[test]
fn a_redelivery_repeats_the_first_answer_and_writes_nothing() {
    let event = accepted("inv.png", "1", "INV-1");
    let first = writes(rules::plan(&event, &Seen::default()));
    let seen = Seen {
        dedup: Some(first.dedup.1.clone()),
        ..Seen::default()
    };
    assert_eq!(rules::plan(&event, &seen), Plan::Repeat(first.answer()));
    let fenced = Seen {
        dedup: Some(Dedup::Fenced),
        ..Seen::default()
    };
    assert_eq!(
        refusal(rules::plan(&event, &fenced)).name(),
        "Conflict.FencedOut"
    );
}

#[test]
fn another_document_with_the_invoice_is_refused_a_newer_version_amends_an_older_is_stale() {
    let v2 = accepted("inv.png", "2", "INV-1");
    let live = Entry::of(
        writes(rules::plan(&v2, &Seen::default()))
            .receipt
            .as_ref()
            .unwrap(),
    );
    let seen = Seen {
        live: Some(live.clone()),
        ..Seen::default()
    };

    let copy = accepted("copy.png", "3", "INV-1");
    let err = refusal(rules::plan(&copy, &seen));
    assert_eq!(err.name(), "Business.DuplicateInvoice");
    assert_eq!(
        Answer::refused(&copy.event_id, &err).detail(),
        json!({"eventId": copy.event_id.as_str(), "error": "Business.DuplicateInvoice"})
    );

    let v3 = accepted("inv.png", "3", "INV-1");
    let w = writes(rules::plan(&v3, &seen));
    let new = ReceiptId::for_event(&v3.event_id);
    assert_eq!(
        w.entry.as_ref().unwrap().expected,
        Some(live.receipt_id.clone()),
        "the entry moves only from the receipt read"
    );
    assert_eq!(
        w.void,
        Some((live.receipt_id.clone(), format!("amended by {new}")))
    );
    assert_eq!(
        w.answer().detail()["voidedReceiptId"],
        json!(live.receipt_id.to_string())
    );

    let v1 = accepted("inv.png", "1", "INV-1");
    assert_eq!(
        refusal(rules::plan(&v1, &seen)).name(),
        "Conflict.StaleVersion"
    );
    assert_eq!(
        refusal(rules::plan(&v2, &seen)).name(),
        "Conflict.StaleVersion",
        "the same order is not newer"
    );
}

#[test]
fn a_retraction_voids_the_receipt_of_the_event_it_names_once_and_refuses_an_unknown_one() {
    let mut book = Book::default();
    let event = accepted("inv.png", "1", "INV-1");
    let receipt = book.apply(&event).unwrap().receipt().clone();
    let retraction = event.retraction();
    let reads = Reads::of(&retraction).unwrap();
    assert_eq!(reads.target, Some(receipt.clone()));

    let w = writes(rules::plan(&retraction, &book.seen(&retraction).unwrap()));
    assert_eq!(w.void.as_ref().map(|v| &v.0), Some(&receipt));
    assert_eq!(w.free, Some((event.invoice_key.clone(), receipt.clone())));
    book.commit(&w).unwrap();
    assert!(book.receipt(&receipt).unwrap().voided.is_some());
    assert_eq!(
        rules::plan(&retraction, &book.seen(&retraction).unwrap()),
        Plan::Repeat(w.answer()),
        "the same retraction again answers the same"
    );

    // Another retraction of the same event (another event id): a no-op that says so.
    let mut again = retraction.clone();
    again.event_id = accepted("x.png", "1", "INV-9").event_id;
    let w2 = writes(rules::plan(&again, &book.seen(&again).unwrap()));
    assert_eq!((w2.void.clone(), w2.free.clone()), (None, None));
    assert_eq!(w2.answer().detail()["alreadyVoided"], json!(true));

    let mut unknown = retraction.clone();
    unknown.event_id = accepted("y.png", "1", "INV-8").event_id;
    unknown.retracts = Some(accepted("never.png", "1", "INV-5").event_id);
    let err = refusal(rules::plan(&unknown, &book.seen(&unknown).unwrap()));
    assert_eq!(err.name(), "Conflict.UnknownReceipt");

    unknown.retracts = None;
    assert_eq!(Reads::of(&unknown).unwrap_err().name(), "Fatal.BadInput");
}

#[test]
fn a_plan_made_on_items_that_changed_since_writes_nothing() {
    let mut book = Book::default();
    let mine = accepted("inv.png", "1", "INV-1");
    let theirs = accepted("copy.png", "1", "INV-1");
    let plan_mine = writes(rules::plan(&mine, &book.seen(&mine).unwrap()));
    let plan_theirs = writes(rules::plan(&theirs, &book.seen(&theirs).unwrap()));
    book.commit(&plan_theirs).unwrap();
    let before = book.clone();
    assert_eq!(
        book.commit(&plan_mine),
        Err(Raced),
        "the entry is not the one read"
    );
    assert_eq!(book, before, "nothing written");
    assert_eq!(
        book.commit(&plan_theirs),
        Err(Raced),
        "the dedup record exists"
    );
    // Planned again on what is there now, it is a refusal.
    let again = rules::plan(&mine, &book.seen(&mine).unwrap());
    assert_eq!(refusal(again).name(), "Business.DuplicateInvoice");
}

#[test]
fn an_answer_round_trips_as_a_dedup_record() {
    let event = accepted("inv.png", "1", "INV-1");
    let dedup = writes(rules::plan(&event, &Seen::default())).dedup.1;
    let text = serde_json::to_string(&dedup).unwrap();
    assert_eq!(serde_json::from_str::<Dedup>(&text).unwrap(), dedup);
    let fenced = serde_json::to_string(&Dedup::Fenced).unwrap();
    assert_eq!(
        serde_json::from_str::<Dedup>(&fenced).unwrap(),
        Dedup::Fenced
    );
}

#[test]
fn only_a_recorded_answer_holds_a_receipt() {
    let event = accepted("inv.png", "1", "INV-1");
    let recorded = writes(rules::plan(&event, &Seen::default())).dedup.1;
    let receipt = ReceiptId::for_event(&event.event_id);
    assert_eq!(recorded.receipt_id(), Some(&receipt));
    let refused = Dedup::Answered {
        answer: Answer::refused(&event.event_id, &Error::DuplicateInvoice("x".into())),
    };
    let voided = Dedup::Answered {
        answer: Answer::Voided {
            event_id: event.event_id.clone(),
            receipt_id: receipt.clone(),
            already_voided: false,
        },
    };
    for none in [refused, voided, Dedup::Fenced] {
        assert_eq!(none.receipt_id(), None, "{none:?}");
    }
}
