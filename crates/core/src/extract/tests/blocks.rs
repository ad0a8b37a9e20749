//! The parties' blocks (`blocks.rs`): the addressee's, never the issuer, and the seller's.

use super::*;

/// The buyer's block of a two-column layout: labels at the left, values beside them.
const BUYER_BLOCK: &[(f64, f64, &str)] = &[
    (0.12, 0.51, "Käufer/Leistungsempfänger"),
    (0.12, 0.53, "Nummer:"),
    (0.44, 0.53, "16259"),
    (0.12, 0.55, "Name:"),
    (0.44, 0.55, "ConsultingService GmbH"),
    (0.12, 0.57, "Anschrift:"),
    (0.44, 0.57, "Musterstr. 18"),
];

#[test]
fn a_party_behind_a_border_and_a_bank_behind_its_label_are_not_the_issuer() {
    let doc = placed(&[
        (0.4, 0.15, "DILIP TYRES"),
        (0.4, 0.16, "PUSHPARAJ CHOWK,SANGLI"),
        (0.4, 0.24, "Tax Invoice"),
        (0.37, 0.27, "Party | ALD AUTOMOTIVE PVT LTD"),
        (
            0.27,
            0.66,
            "Bank Name: THE KARAD URBAN CO-OPRATIVE BANK LTD - 20",
        ),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("DILIP TYRES"));
}

#[test]
fn blocks_of_labels_with_values_beside_them_name_the_seller_and_never_the_buyer() {
    // The seller's block names the issuer, beside its `Name:` label.
    let mut lines = vec![
        (0.12, 0.06, "Baurechnung Nr. 181301674 vom 25.04.2018"),
        (0.12, 0.17, "Liselotte Miller-Lidenscheidt"),
        (0.12, 0.34, "Verkäufer"),
        (0.12, 0.36, "Nummer:"),
        (0.44, 0.36, "549910"),
        (0.12, 0.38, "Name:"),
        (0.44, 0.38, "ELEKTRON Industrieservice GmbH"),
    ];
    lines.extend_from_slice(BUYER_BLOCK);
    assert_clear_issuer(&placed(&lines), "ELEKTRON Industrieservice GmbH");

    // Without a seller's block: the buyer's name beside its `Name:` label is no candidate.
    let mut lines = vec![
        (0.12, 0.05, "ELEKTRON Industrieservice GmbH"),
        (0.12, 0.17, "Liselotte Miller-Lidenscheidt"),
        (0.12, 0.30, "Baurechnung Nr. 181301674 vom 25.04.2018"),
    ];
    lines.extend_from_slice(BUYER_BLOCK);
    assert_clear_issuer(&placed(&lines), "ELEKTRON Industrieservice GmbH");
}

#[test]
fn a_recipient_label_with_another_column_beside_it_or_a_border_glued_to_it_heads_the_addressee() {
    for label in [
        "Rechnungsempfänger Kundennummer GE2020211",
        "IRechnungsempfänger Kundennummer GE2020211",
    ] {
        let mut doc = placed(&[
            (0.07, 0.06, "Lieferant GmbH"),
            (0.07, 0.17, label),
            (0.07, 0.19, "Kunden AG Mitte"),
            (0.07, 0.22, "Kundenstraße 15"),
            (0.07, 0.30, "Rechnungsnummer 471102"),
        ]);
        // `Kundennummer GE2020211` is the right-hand column's.
        doc.pages[0].lines[1].words[1].bbox.left = 0.61;
        doc.pages[0].lines[1].words[2].bbox.left = 0.87;
        assert_clear_issuer(&doc, "Lieferant GmbH");
    }
}

#[test]
fn a_buyer_after_to_and_a_country_alone_name_no_issuer() {
    let x = run(&[
        "Acme Widgets",
        "PO Box 16122, Collins Street West, VIC 8007",
        "Australia",
        "To: Globex Ltd",
        "Invoice No. 12429647",
    ]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Acme Widgets"));
    let x = run(&[
        "PO Box 16122, Collins Street West, VIC 8007",
        "Australia",
        "To: Globex Ltd",
        "Invoice No. 12429647",
    ]);
    assert_eq!(value(&x, FieldName::Issuer), None);
}

#[test]
fn an_unlabelled_address_without_contact_details_beside_one_with_them_is_the_addressee() {
    // A hotel's bill: the hotel's address with its phone and web site at the right, the
    // guest's company in the window, the hotel's legal name in the footer.
    let bill = |person: &'static str, contact: &'static str| {
        placed(&[
            (0.1, 0.19, person),
            (0.1, 0.20, "Globex Consulting GmbH"),
            (0.1, 0.21, "Friedrichstrasse 123"),
            (0.1, 0.22, "10117 Berlin"),
            (0.75, 0.03, "Ibis Styles Konstanz"),
            (0.75, 0.05, "Oberlohnstrasse 5b"),
            (0.75, 0.06, "78467 Konstanz"),
            (0.75, 0.07, contact),
            (0.1, 0.30, "Rechnungsnr. 9282-52756"),
            (0.8, 0.91, "Smart Hotel Gesellschaft mbH"),
        ])
    };
    let hotel = Some("Smart Hotel Gesellschaft mbH");
    let x = extract(&bill("Jens Walter", "Tel: +49 7531 92 15 151"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), hotel);
    // Neither address says how to reach it, but a person's salutation heads the guest's: a
    // letter's window, never a letterhead.
    let x = extract(&bill("Mr. Jens Walter", "Deutschland"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), hotel);
    // Neither says how to reach it, no salutation: nothing tells the guest's from the hotel's.
    let x = extract(&bill("Jens Walter", "Deutschland"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Globex Consulting GmbH"));
}

#[test]
fn a_salutations_window_ends_at_its_postcode_and_its_country() {
    // The guest's company in the window under `Mr`, beside the hotel's labelled bill; the
    // agent's office below the window's country is no part of it.
    let doc = placed(&[
        (0.1, 0.10, "Mr Jens Walter"),
        (0.1, 0.12, "Globex Consulting GmbH"),
        (0.1, 0.14, "Friedrichstrasse 123"),
        (0.1, 0.16, "10117 Berlin"),
        (0.1, 0.18, "Germany"),
        (0.1, 0.20, "Versicherungsbuero Hansen GmbH"),
        (0.1, 0.22, "Bill To: Jens Walter"),
        (0.1, 0.30, "Invoice No: 377904"),
    ]);
    assert_clear_issuer(&doc, "Versicherungsbuero Hansen GmbH");
}

#[test]
fn a_letterhead_whose_contact_details_stand_in_another_column_is_no_addressee() {
    let doc = placed(&[
        (0.08, 0.06, "Tannreuther & Eibenwerth GmbH"),
        (0.08, 0.09, "Industriestrasse 120"),
        (0.08, 0.10, "91550 Freiburg"),
        (0.56, 0.06, "Telefon: +49 166 9395-80"),
        (0.56, 0.08, "Web: www.tannreuther-eibenwerth.example"),
        (0.08, 0.17, "Brandtner & Vosskamp GmbH"),
        (0.08, 0.19, "Gewerbepark Sued 45"),
        (0.08, 0.20, "41811 Kassel"),
        (0.56, 0.20, "Re.-Nr.: 20268136"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Tannreuther & Eibenwerth GmbH")
    );
}

#[test]
fn a_recipient_labels_block_ends_where_its_lines_stop_following_each_other() {
    // `TO` of `INVOICE TO` stands over the footer's column, far below: not its block.
    let doc = placed(&[
        (0.03, 0.07, "Document Number 9235321787"),
        (0.03, 0.22, "INVOICE TO"),
        (0.03, 0.24, "Sofitel Hotel Maintenance"),
        (0.03, 0.26, "21 Viaduct Harbour Ave"),
        (0.03, 0.50, "TOTAL NET AMOUNT 226.50"),
        (
            0.06,
            0.79,
            "Schneider Electric (NZ) Limited GST No : 81-854-572",
        ),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Schneider Electric (NZ) Limited")
    );
}

#[test]
fn a_company_after_the_person_to_attend_to_it_belongs_to_the_addressees_block() {
    let doc = placed(&[
        (0.09, 0.05, "Google"),
        (0.08, 0.14, "Invoice number: 4836212534"),
        (0.08, 0.20, "Bill to"),
        (0.08, 0.22, "Thomas Flassbeck"),
        (0.08, 0.24, "SimFin Analytics GmbH"),
        (0.08, 0.26, "Pfalzer Ufer 4"),
        (0.75, 0.07, "Google Cloud EMEA Limited"),
        (0.81, 0.11, "Clanwilliam Place"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Google Cloud EMEA Limited")
    );
}

#[test]
fn rechnung_hash_names_the_number_and_rechnung_an_the_addressee() {
    // The addressee read first: without its label it would come first among equals.
    let doc = placed(&[
        (0.08, 0.22, "Rechnung an: SimFin Analytics GmbH"),
        (
            0.07,
            0.11,
            "Indeed Ireland Operations Ltd Rechnung #: 67389368",
        ),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("67389368"));
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Indeed Ireland Operations Ltd")
    );
}
