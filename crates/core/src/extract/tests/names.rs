//! Organisation names as invoices print them: legal forms of several words, names joined by
//! a connector, and web domains that spell a name in parts.

use super::*;

#[test]
fn the_longest_legal_form_ends_the_name() {
    for (line, name) in [
        (
            "Haustechnik Wiesentaler UG (haftungsbeschrankt) Telefon: +49 576 8410-37",
            "Haustechnik Wiesentaler UG (haftungsbeschrankt)",
        ),
        (
            "Werkzeugbau Acme GmbH & Co. KG Telefon: +49 30 123456",
            "Werkzeugbau Acme GmbH & Co. KG",
        ),
    ] {
        let x = run(&[line, "Rechnungsnummer: 4711"]);
        assert_eq!(value(&x, FieldName::Issuer), Some(name), "{line}");
    }
}

#[test]
fn a_label_before_a_name_is_not_part_of_it() {
    for line in [
        "Betreiber: Citadines Betriebs GmbH",
        "Betreiber: Citadines Betriebs GmbH, Sitz Hamburg",
    ] {
        let x = run(&[line, "Rechnungsnummer: 4711"]);
        assert_eq!(
            value(&x, FieldName::Issuer),
            Some("Citadines Betriebs GmbH"),
            "{line}"
        );
    }
}

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
fn a_connector_joins_the_words_of_a_name_but_never_starts_one() {
    let x = run(&[
        "Arrietxe y Valdeoro S.L.U. Factura",
        "Número de factura: 2025-A7333",
    ]);
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Arrietxe y Valdeoro S.L.U.")
    );
    let x = run(&[
        "Número de factura: 2025-A7333",
        "Pago por transferencia a favor de Valdeoro S.L.",
    ]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Valdeoro S.L."));
    // A brand's `by` or `par` joins the words of a hotel's name, heading the bill alone.
    for name in [
        "Hampton Inn par Hilton Montréal Centre-Ville",
        "Courtyard by Marriott Berlin",
    ] {
        let x = run(&[name, "Confirmation Number: 80087193", "Total: 42.00"]);
        assert_eq!(value(&x, FieldName::Issuer), Some(name));
    }
}

#[test]
fn a_domain_spells_a_name_in_its_parts() {
    // Both names have a legal form and sit in the letterhead: the domain decides.
    let doc = placed(&[
        (0.1, 0.11, "Ashcombe IT Services Ltd"),
        (0.6, 0.11, "Brightwell Foods Ltd"),
        (0.1, 0.17, "Web www.ashcombe-services.example"),
        (0.1, 0.30, "Invoice No: 1042"),
    ]);
    assert_clear_issuer(&doc, "Ashcombe IT Services Ltd");
    // A web address with its scheme spells it too.
    let doc = placed(&[
        (0.1, 0.11, "Ashcombe IT Services Ltd"),
        (0.6, 0.11, "Brightwell Foods Ltd"),
        (0.1, 0.17, "Help: https://www.brightwell-foods.example/help"),
        (0.1, 0.30, "Invoice No: 1042"),
    ]);
    assert_clear_issuer(&doc, "Brightwell Foods Ltd");
}

#[test]
fn a_label_and_its_value_or_a_copyright_notice_name_no_issuer() {
    // `Label : value` in the letterhead would contest the seller named lower down.
    let doc = placed(&[
        (0.1, 0.20, "Geschäftsprozess : Beispielgeschäftsprozess"),
        (0.1, 0.42, "Rohstoff AG Salzgitter"),
        (0.1, 0.50, "Rechnungsnummer 47110815"),
    ]);
    assert_clear_issuer(&doc, "Rohstoff AG");
    // The publisher of the form, with its legal form, in a copyright notice.
    let doc = placed(&[
        (0.1, 0.03, "Beispielrechnung 2014 - Copyright AWV e.V. 2014"),
        (0.1, 0.06, "Lieferant GmbH"),
        (0.1, 0.30, "Rechnungsnummer 471102"),
    ]);
    assert_clear_issuer(&doc, "Lieferant GmbH");
}

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
fn a_name_read_twice_counts_each_word_as_read_at_its_best() {
    // The footer smudges `Services,`; the title reads the same words clearly.
    let lines = [
        (0.4, 0.08, "Ashcombe Web Services Invoice"),
        (0.4, 0.15, "Invoice Number: 42183017"),
        (0.1, 0.85, "Ashcombe Web Services, Ltd."),
    ];
    let smudge = |doc: &mut OcrDocument, line: usize| {
        let word = &mut doc.pages[0].lines[line].words[2];
        assert!(word.text.starts_with("Services"));
        word.confidence = 0.38;
    };
    let mut doc = placed(&lines);
    smudge(&mut doc, 2);
    let x = extract(&doc, &rules());
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Ashcombe Web Services, Ltd.")
    );
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    // A word read nowhere else keeps its own reading: smudged in the title too, the name is
    // as doubtful as its best reading of that word.
    smudge(&mut doc, 0);
    let x = extract(&doc, &rules());
    assert_close(confidence(&x, FieldName::Issuer), 0.38 * ISSUER_WITH_SUFFIX);
}

#[test]
fn a_listed_legal_forms_word_counts_as_read_whatever_the_ocrs_doubt_over_its_dots() {
    let doc = |name_word: f64, form_word: f64| {
        let mut doc = placed(&[
            (0.7, 0.06, "Coolblue B.V."),
            (0.7, 0.08, "Weena 664"),
            (0.1, 0.20, "Factuurnummer: 993548900"),
        ]);
        doc.pages[0].lines[0].words[0].confidence = name_word;
        doc.pages[0].lines[0].words[1].confidence = form_word;
        doc
    };
    let x = extract(&doc(0.99, 0.6), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Coolblue B.V."));
    assert_close(
        confidence(&x, FieldName::Issuer),
        LEGAL_FORM_READING * ISSUER_WITH_SUFFIX,
    );
    // The name's own words keep their reading: they could be any word.
    let x = extract(&doc(0.6, 0.99), &rules());
    assert_close(confidence(&x, FieldName::Issuer), 0.6 * ISSUER_WITH_SUFFIX);
}

#[test]
fn a_company_with_limited_liability_abbreviated_mbh_is_named_by_it() {
    // The letterhead's `Immobiliengesellschaft mbH` over a window address with a `GmbH`.
    let x = run(&[
        "Immobiliengesellschaft mbH",
        "Musterstrasse 3 12345 Berlin",
        "Muster GmbH Kunden-Nr. 6010060",
        "Beispielstrasse 207 Datum 11.07.2018",
        "Rechnung Nr. 201851853",
        "Endbetrag 184,00 EUR",
        "Immobiliengesellschaft mbH Sparkasse Niederlausitz",
    ]);
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Immobiliengesellschaft mbH")
    );
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
fn a_name_read_with_the_words_of_its_sentence_is_the_name_mentioned_alone() {
    // The addressee's company in the window without a label; the seller only in the footer's
    // sentences, once with the sentence's own words before it.
    let doc = placed(&[
        (0.1, 0.05, "Premier Inn Hamburg City Zentrum 4"),
        (0.1, 0.20, "Apimeister Consulting GmbH"),
        (0.1, 0.22, "Friedrichstrasse 114A"),
        (0.1, 0.30, "Invoice Number : GABI66950"),
        (
            0.1,
            0.90,
            "Premier Inn GmbH ist ein Mitglied der Whitbread Group",
        ),
        (
            0.1,
            0.92,
            "Sitz der Premier Inn GmbH: Europa-Allee 22, 60327 Frankfurt am Main.",
        ),
    ]);
    assert_clear_issuer(&doc, "Premier Inn GmbH");
}

#[test]
fn central_european_and_asian_legal_forms_end_a_name() {
    for (line, name) in [
        (
            "Motel One Prague Hybernska s.r.o., Ovocny trh 1096/8",
            "Motel One Prague Hybernska s.r.o.",
        ),
        (
            "Valamar Riviera d.d. Stancija Kaligari 1",
            "Valamar Riviera d.d.",
        ),
        ("Budapest Kávé Kft. Váci út 12", "Budapest Kávé Kft."),
        (
            "Lion City Traders Pte Ltd 8 Marina View",
            "Lion City Traders Pte Ltd",
        ),
    ] {
        let x = run(&["Invoice No: 4711", line]);
        assert_eq!(value(&x, FieldName::Issuer), Some(name), "{line}");
    }
}

#[test]
fn a_name_is_reported_without_the_borders_and_underlines_read_around_it() {
    for (line, name) in [
        ("|Le Fournisseur SARL", "Le Fournisseur SARL"),
        ("__Leonardo Hotels GmbH|", "Leonardo Hotels GmbH"),
        ("Acme Tools Ltd™", "Acme Tools Ltd"),
    ] {
        let x = run(&[line, "Invoice No: 4711"]);
        assert_eq!(value(&x, FieldName::Issuer), Some(name), "{line}");
    }
}

#[test]
fn a_web_sites_name_alone_signs_a_letterhead_in_lower_case() {
    // A brand's logo read as its site's name (its mark read as a quote), over its address.
    let letterhead = |logo: &'static str| {
        placed(&[
            (0.13, 0.08, logo),
            (0.13, 0.13, "Papendorpseweg 100"),
            (0.13, 0.14, "3528 BJ Utrecht"),
            (0.58, 0.25, "Factuurnummer: 3904228357264"),
        ])
    };
    let x = extract(&letterhead("bol.com”"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("bol.com"));
    // A host name with a path, a top-level domain with a digit, no domain: no site alone.
    for logo in ["bol.com/help", "bol.c0m", "bol.", "www.bol.com"] {
        let x = extract(&letterhead(logo), &rules());
        assert_eq!(value(&x, FieldName::Issuer), None, "{logo}");
    }
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
fn a_logos_word_alone_that_begins_a_name_mentions_it_again() {
    let receipt = |logo: &'static str| {
        placed(&[
            (0.75, 0.05, logo),
            (0.4, 0.09, "Travel Receipt"),
            (0.1, 0.3, "Booking reference: KPE6BN"),
            (
                0.12,
                0.95,
                "Norwegian Air Shuttle - PB 115, N-1366 Lysaker, Norway - Tel: +47 2149 0015",
            ),
        ])
    };
    let x = extract(&receipt("norwegian _"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Norwegian Air Shuttle"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    // Named by its sender line alone: a guess.
    let x = extract(&receipt("Fly better"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Norwegian Air Shuttle"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_GUESSED);
}

#[test]
fn the_company_behind_a_payees_label_is_paid_most_likely_the_seller() {
    let page = |bank: &'static str| {
        placed(&[
            (0.17, 0.07, "Annonces légales et formalités en ligne"),
            (0.65, 0.14, "ALEXINUX"),
            (0.65, 0.17, "27 rue Henri Rolland"),
            (0.41, 0.21, "Facture n° 2022089083"),
            (0.08, 0.61, bank),
            (0.47, 0.94, "NETPRESSE"),
        ])
    };
    let x = extract(
        &page("Virement BRED BANQUE POPULAIRE - Titulaire du compte : NETPRESSE"),
        &rules(),
    );
    assert_eq!(value(&x, FieldName::Issuer), Some("NETPRESSE"));
    // No label's colon (`TVA PAYÉE SUR LES DÉBITS`), or a person behind it: no payee.
    for line in ["TVA PAYÉE SUR LES DÉBITS", "Kontoinhaber: Max Mustermann"] {
        let x = extract(&page(line), &rules());
        assert_eq!(value(&x, FieldName::Issuer), Some("ALEXINUX"), "{line}");
    }
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
fn a_name_with_its_legal_form_starts_in_the_legal_forms_column() {
    // The OCR read two columns of a row as one line: the customer's street, the seller.
    let mut doc = placed(&[
        (0.04, 0.03, "BILLED TO:"),
        (0.04, 0.06, "SimFin Analytics GmbH"),
        (0.04, 0.07, "Pfalzer Ufer 4 Semrush Inc."),
        (0.04, 0.16, "Invoice: 2530418"),
    ]);
    let words = &mut doc.pages[0].lines[2].words;
    words[3].bbox.left = 0.52; // `Semrush`, far right of `4`
    words[4].bbox.left = 0.57;
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Semrush Inc."));
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
