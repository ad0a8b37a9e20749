//! Corrections, their diff, approvals and rejections.

use super::*;

#[test]
fn corrections_set_the_value_at_full_confidence_with_the_reviewer_as_source() {
    // given the extracted fields and a reviewer's corrections, one of a missing field
    let task = pending_task("acme", "a.pdf");
    let alice = reviewer("alice", "acme");
    let c = corrections(&[
        ("total_amount", " 1243.50 "),
        ("invoice_number", "INV-2026-0042"),
    ]);
    // when they are applied
    let fields = apply_corrections(&task.fields, &c, &alice, &config()).unwrap();
    // then the corrected fields are the reviewer's, trimmed, at confidence 1.0
    let by_alice = FieldSource::Reviewer { id: "alice".into() };
    assert_eq!(
        fields[&FieldName::TotalAmount],
        ReviewField {
            value: "1243.50".into(),
            confidence: 1.0,
            source: by_alice.clone(),
        }
    );
    assert_eq!(fields[&FieldName::InvoiceNumber].value, "INV-2026-0042");
    assert_eq!(fields[&FieldName::InvoiceNumber].source, by_alice);
    // and the others are as extracted
    assert_eq!(fields[&FieldName::Issuer], task.fields[&FieldName::Issuer]);
    assert_eq!(fields.len(), 5);
}

#[test]
fn the_refused_field_is_the_one_the_refusal_names() {
    let (task, alice) = (pending_task("acme", "a.pdf"), reviewer("alice", "acme"));
    for (given, refused) in [
        (
            vec![("invoice_date", "2026-04-03"), ("total_amount", "12.50")],
            None,
        ),
        (
            vec![("invoice_date", "2026-04-03"), ("total_amount", "12,5")],
            Some("total_amount"),
        ),
        // two refused: the first in name order, as the error names it
        (
            vec![("total_amount", "x"), ("invoice_date", "31/31/2026")],
            Some("invoice_date"),
        ),
        (
            vec![("vat_number", "GB123"), ("currency", "EUR")],
            Some("vat_number"),
        ),
    ] {
        let c = corrections(&given);
        match apply_corrections(&task.fields, &c, &alice, &config()) {
            Err(e) => {
                let named = refused_field(&c, &config(), &e);
                assert_eq!(named.as_deref(), refused, "{given:?}");
                assert!(e.to_string().contains(refused.unwrap()), "{e}");
            }
            Ok(_) => assert_eq!(refused, None, "{given:?}"),
        }
    }
    // an error about something else names no field, even beside a refused correction
    let c = corrections(&[("total_amount", "x")]);
    let other = crate::Error::BadInput("the reason is too long".into());
    assert_eq!(refused_field(&c, &config(), &other), None);
}

#[test]
fn a_correction_of_an_unknown_field_is_bad_input_naming_the_known_fields() {
    let task = pending_task("acme", "a.pdf");

    let err = apply_corrections(
        &task.fields,
        &corrections(&[("vat_number", "GB123")]),
        &reviewer("alice", "acme"),
        &config(),
    )
    .unwrap_err();

    assert_eq!(err.name(), "Fatal.BadInput");
    assert_eq!(
        err.to_string(),
        "bad input: cannot correct unknown field \"vat_number\"; fields are issuer, \
         invoice_number, invoice_date, total_amount, currency"
    );
}

#[test]
fn a_malformed_correction_is_bad_input_naming_the_field_and_form_but_not_the_value() {
    let task = pending_task("acme", "a.pdf");
    for (name, value, form) in [
        (
            "total_amount",
            "1.234,50",
            "a decimal amount with two decimals",
        ),
        (
            "total_amount",
            "1234.5",
            "a decimal amount with two decimals",
        ),
        (
            "total_amount",
            "twelve",
            "a decimal amount with two decimals",
        ),
        ("invoice_date", "14/03/2026", "an ISO date yyyy-mm-dd"),
        ("invoice_date", "2026-02-30", "an ISO date yyyy-mm-dd"),
        ("currency", "eur", "a three-letter ISO 4217 code"),
        ("currency", "XQZ", "a three-letter ISO 4217 code"),
        ("currency", "EURO", "a three-letter ISO 4217 code"),
        ("issuer", "7", "a company name"),
        ("invoice_number", "INV 42", "an invoice number"),
        ("invoice_number", "   ", "an invoice number"),
        ("issuer", "Acme\u{0}Ltd", "a company name"),
    ] {
        let err = apply_corrections(
            &task.fields,
            &corrections(&[(name, value)]),
            &reviewer("alice", "acme"),
            &config(),
        )
        .unwrap_err();
        let message = err.to_string();
        assert_eq!(err.name(), "Fatal.BadInput", "{name}={value}");
        assert!(
            message.contains(&format!("correction of {name} must be {form}")),
            "{message}"
        );
        assert!(
            value.trim().is_empty() || !message.contains(value),
            "{message}"
        );
    }
}

#[test]
fn a_recognised_currency_outside_the_allowed_list_can_be_approved() {
    // JPY is recognised by extraction but not allowed without review: a reviewer may approve it
    let config = config();
    assert!(config
        .extraction
        .currency_codes
        .contains(&"JPY".to_string()));
    assert!(!config
        .validation
        .allowed_currencies
        .contains(&"JPY".to_string()));
    let task = pending_task("acme", "a.pdf");

    let fields = apply_corrections(
        &task.fields,
        &corrections(&[("currency", "JPY")]),
        &reviewer("alice", "acme"),
        &config,
    )
    .unwrap();

    assert_eq!(fields[&FieldName::Currency].value, "JPY");
}

#[test]
fn diff_lists_new_and_changed_fields_in_field_order_and_skips_unchanged_ones() {
    let task = pending_task("acme", "a.pdf");
    let after = apply_corrections(
        &task.fields,
        &corrections(&[
            ("total_amount", "1243.50"),
            ("invoice_number", "INV-1"),
            ("issuer", "Acme Widgets Ltd"),
        ]),
        &reviewer("alice", "acme"),
        &config(),
    )
    .unwrap();

    let changes = diff(&task.fields, &after);

    assert_eq!(
        changes,
        vec![
            // the same value, confirmed: its confidence changed
            FieldChange {
                field: FieldName::Issuer,
                before: Some(FieldValue {
                    value: "Acme Widgets Ltd".into(),
                    confidence: 0.95
                }),
                after: FieldValue {
                    value: "Acme Widgets Ltd".into(),
                    confidence: 1.0
                },
            },
            FieldChange {
                field: FieldName::InvoiceNumber,
                before: None,
                after: FieldValue {
                    value: "INV-1".into(),
                    confidence: 1.0
                },
            },
            FieldChange {
                field: FieldName::TotalAmount,
                before: Some(FieldValue {
                    value: "1234.50".into(),
                    confidence: 0.55
                }),
                after: FieldValue {
                    value: "1243.50".into(),
                    confidence: 1.0
                },
            },
        ]
    );
    assert!(diff(&task.fields, &task.fields).is_empty());
}

#[test]
fn an_approval_carries_the_checked_corrections_the_diff_and_the_corrected_fields() {
    let task = pending_task("acme", "a.pdf");
    let alice = reviewer("alice", "acme");

    let (decision, fields) = ReviewDecision::approve(
        &task,
        &alice,
        &corrections(&[("total_amount", "1243.50 ")]),
        Some("  checked against the PDF  "),
        &config(),
        instant(T0 + 30),
    )
    .unwrap();

    assert_eq!(decision.reviewer, alice);
    assert_eq!(decision.decided_at, at(T0 + 30));
    assert_eq!(
        decision.verdict,
        Verdict::Approve {
            corrections: BTreeMap::from([(FieldName::TotalAmount, "1243.50".to_string())]),
            comment: Some("checked against the PDF".into()),
        }
    );
    assert_eq!(decision.changes.len(), 1);
    assert_eq!(decision.changes[0].field, FieldName::TotalAmount);
    assert_eq!(fields[&FieldName::TotalAmount].value, "1243.50");
    assert_eq!(
        decision.summary(),
        format!("approved by alice at {}", at(T0 + 30))
    );
}

#[test]
fn a_rejection_needs_a_reason_and_free_text_is_bounded() {
    let task = pending_task("acme", "a.pdf");
    let alice = reviewer("alice", "acme");
    let now = instant(T0);

    let rejected = ReviewDecision::reject(&alice, " duplicate of INV-7 ", now).unwrap();
    let no_reason = ReviewDecision::reject(&alice, "  ", now).unwrap_err();
    let long = "x".repeat(MAX_TEXT_CHARS + 1);
    let too_long =
        ReviewDecision::approve(&task, &alice, &BTreeMap::new(), Some(&long), &config(), now)
            .unwrap_err();
    let (blank_comment, _) =
        ReviewDecision::approve(&task, &alice, &BTreeMap::new(), Some(" "), &config(), now)
            .unwrap();

    assert_eq!(
        rejected.verdict,
        Verdict::Reject {
            reason: "duplicate of INV-7".into()
        }
    );
    assert!(rejected.changes.is_empty());
    assert!(!rejected.is_approval());
    assert_eq!(no_reason.name(), "Fatal.BadInput");
    assert_eq!(too_long.name(), "Fatal.BadInput");
    assert!(matches!(
        blank_comment.verdict,
        Verdict::Approve { comment: None, .. }
    ));
}

#[test]
fn free_text_with_control_characters_is_refused_but_line_breaks_are_kept() {
    let task = pending_task("acme", "a.pdf");
    let alice = reviewer("alice", "acme");
    let now = instant(T0);

    let escape = ReviewDecision::reject(&alice, "ok\u{1b}[2Jwiped", now).unwrap_err();
    let nul = ReviewDecision::approve(
        &task,
        &alice,
        &BTreeMap::new(),
        Some("a\0b"),
        &config(),
        now,
    )
    .unwrap_err();
    let lines = ReviewDecision::reject(&alice, "line one\n\tline two", now).unwrap();

    assert_eq!(escape.name(), "Fatal.BadInput");
    assert!(
        escape.to_string().contains("control characters"),
        "{escape}"
    );
    assert_eq!(nul.name(), "Fatal.BadInput");
    assert!(
        matches!(lines.verdict, Verdict::Reject { reason } if reason == "line one\n\tline two")
    );
}

#[test]
fn a_decision_body_with_an_unknown_field_is_refused() {
    use crate::steps::review::Request;

    let misspelt = serde_json::from_value::<Request>(json!({
        "verdict": "approve", "corrections": {"total_amount": "1.00"}
    }))
    .unwrap_err();
    let extra = serde_json::from_value::<Request>(json!({
        "verdict": "reject", "reason": "dup", "reviewer": "mallory"
    }))
    .unwrap_err();
    let good = serde_json::from_value::<Request>(json!({
        "verdict": "approve", "set": {"total_amount": "1.00"}
    }))
    .unwrap();

    assert!(misspelt.to_string().contains("corrections"), "{misspelt}");
    assert!(extra.to_string().contains("reviewer"), "{extra}");
    assert!(matches!(good, Request::Approve { set, .. } if set.len() == 1));
}
