//! Event ids and bodies, outbox delivery states, and the consumer's book.

use super::*;

#[test]
fn event_ids_are_stable_per_run_and_kind_and_the_body_carries_ids_and_pointers_only() {
    let input = input_of("inv.png", "v1", "1");
    let body = accepted(&input, "INV-1");
    assert_eq!(body.event_id, accepted(&input, "INV-1").event_id);
    assert_eq!(
        body.event_id,
        EventId::new(&input.run_id, EventKind::Accepted)
    );
    assert_ne!(
        body.event_id,
        accepted(&input_of("inv.png", "v2", "2"), "INV-1").event_id
    );
    let retraction = body.retraction();
    assert_eq!(retraction.retracts.as_ref(), Some(&body.event_id));
    assert_eq!(retraction.event_id, body.retraction().event_id);
    assert_ne!(retraction.event_id, body.event_id);

    let json = serde_json::to_value(&retraction).unwrap();
    let Value::Object(map) = &json else {
        panic!("{json}")
    };
    let keys: Vec<_> = map.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "documentId",
            "eventId",
            "invoiceKey",
            "kind",
            "result",
            "resultSha256",
            "retracts",
            "runId",
            "sourceOrder",
            "tenant"
        ]
    );
    assert_eq!(json["kind"], "document.retracted");
    let text = json.to_string();
    for content in ["ACME", "Supplies", "INV-1"] {
        assert!(!text.contains(content), "{content} in {text}");
    }
    assert_eq!(
        body.invoice_key,
        invoice_key(&input.tenant, " acme  supplies LTD", "inv-1")
    );
}

#[test]
fn outbox_delivery_moves_forward_one_state_at_a_time() {
    let body = accepted(&input_of("inv.png", "v1", "1"), "INV-1");
    let receipt = ReceiptId::for_event(&body.event_id);
    let rec = OutboxRecord::prepare(body);
    let names = |r: &OutboxRecord| r.delivery.name();
    assert_eq!(names(&rec), "prepared");
    let skip = rec.advanced(&Advance::ProviderAccepted("entry-1".into()));
    assert!(matches!(skip, Err(Error::ParametersChanged(_))), "{skip:?}");
    let rec = rec.advanced(&Advance::Persist).unwrap().unwrap();
    let early = rec.advanced(&Advance::Delivered(receipt.clone()));
    assert!(
        matches!(early, Err(Error::ParametersChanged(_))),
        "only after the provider"
    );
    let rec = rec
        .advanced(&Advance::ProviderAccepted("entry-1".into()))
        .unwrap()
        .unwrap();
    assert_eq!(
        (names(&rec), rec.entry_id.as_deref()),
        ("provider-accepted", Some("entry-1"))
    );
    // A relay that published again: the first entry stays, nothing is written.
    assert_eq!(
        rec.advanced(&Advance::ProviderAccepted("entry-2".into()))
            .unwrap(),
        None
    );
    assert_eq!(rec.advanced(&Advance::Persist).unwrap(), None, "never back");
    let rec = rec
        .advanced(&Advance::Delivered(receipt.clone()))
        .unwrap()
        .unwrap();
    assert_eq!(names(&rec), "confirmed-delivered");
    assert_eq!(rec.advanced(&Advance::Delivered(receipt)).unwrap(), None);
    let other = ReceiptId::from_string("rc-other".into());
    assert!(matches!(
        rec.advanced(&Advance::Delivered(other)),
        Err(Error::ParametersChanged(_))
    ));
}

#[test]
fn the_consumer_applies_an_event_once_and_refuses_a_duplicate_invoice_of_another_document() {
    let mut book = Book::default();
    let first = accepted(&input_of("inv.png", "v1", "1"), "INV-1");
    let Applied::Recorded(receipt) = book.apply(&first).unwrap() else {
        panic!()
    };
    assert_eq!(book.apply(&first).unwrap(), Applied::Again(receipt.clone()));
    assert_eq!(
        book.receipt_for(&first.event_id).unwrap().receipt_id,
        receipt
    );

    let copy = accepted(&input_of("copy-of-inv.png", "v1", "1"), "INV-1");
    assert_eq!(copy.invoice_key, first.invoice_key, "the same invoice");
    let err = book.apply(&copy).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DuplicateInvoice);
    assert_eq!(err.name(), "Business.DuplicateInvoice");
    assert!(
        err.to_string().contains(first.document_id.as_str()),
        "{err}"
    );
    assert!(
        book.receipt_for(&copy.event_id).is_none(),
        "nothing recorded"
    );
    let other = accepted(&input_of("copy-of-inv.png", "v1", "1"), "INV-2");
    assert!(
        matches!(book.apply(&other), Ok(Applied::Recorded(_))),
        "another invoice"
    );
}

#[test]
fn a_newer_version_of_the_same_document_amends_its_entry() {
    let mut book = Book::default();
    let v1 = accepted(&input_of("inv.png", "v1", "1"), "INV-1");
    let v2 = accepted(&input_of("inv.png", "v2", "2"), "INV-1");
    let old = book.apply(&v1).unwrap().receipt().clone();
    let Applied::Amended { receipt, voided } = book.apply(&v2).unwrap() else {
        panic!()
    };
    assert_eq!(voided, old);
    assert!(book
        .receipt(&old)
        .unwrap()
        .voided
        .as_deref()
        .unwrap()
        .contains(receipt.to_string().as_str()));
    assert_eq!(book.receipt(&receipt).unwrap().voided, None);
    let stale = book.apply(&accepted(&input_of("inv.png", "v0", "0"), "INV-1"));
    assert!(matches!(stale, Err(Error::StaleVersion(_))), "{stale:?}");
}

#[test]
fn a_void_is_idempotent_frees_the_invoice_and_names_an_unknown_receipt() {
    let mut book = Book::default();
    let first = accepted(&input_of("inv.png", "v1", "1"), "INV-1");
    let receipt = book.apply(&first).unwrap().receipt().clone();
    assert_eq!(book.void(&receipt, "withdrawn").unwrap(), Voided::Voided);
    assert_eq!(
        book.void(&receipt, "again").unwrap(),
        Voided::AlreadyVoided("withdrawn".into())
    );
    let copy = accepted(&input_of("copy-of-inv.png", "v1", "1"), "INV-1");
    assert!(
        book.apply(&copy).is_ok(),
        "the voided invoice no longer blocks"
    );
    let unknown = ReceiptId::from_string("rc-nope".into());
    let err = book.void(&unknown, "x").unwrap_err();
    assert_eq!(err.name(), "Conflict.UnknownReceipt");
    assert!(err.to_string().contains("rc-nope"), "{err}");
}

#[test]
fn a_fenced_event_is_never_applied_and_an_applied_one_keeps_its_receipt() {
    let mut book = Book::default();
    let applied = accepted(&input_of("inv.png", "v1", "1"), "INV-1");
    let receipt = book.apply(&applied).unwrap().receipt().clone();
    assert_eq!(
        book.fence(&applied.event_id).map(|r| &r.receipt_id),
        Some(&receipt)
    );
    assert_eq!(book.apply(&applied).unwrap(), Applied::Again(receipt));

    let in_flight = accepted(&input_of("other.png", "v1", "1"), "INV-2");
    assert_eq!(book.fence(&in_flight.event_id), None);
    let late = book.apply(&in_flight).unwrap_err();
    assert_eq!(late.name(), "Conflict.FencedOut");
    assert!(
        late.to_string().contains(in_flight.event_id.as_str()),
        "{late}"
    );
    assert!(book.receipt_for(&in_flight.event_id).is_none());
}
