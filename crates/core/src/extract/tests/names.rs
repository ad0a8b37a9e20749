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
fn a_seller_block_of_labelled_lines_gives_the_name_behind_its_label() {
    let x = run(&[
        "Handelsrechnung (380) Nr. TX-471102 vom 30.10.2019",
        "Verkäufer",
        "Name: Taxiunternehmen TX GmbH",
        "Anschrift: Lieferantenstraße 20",
        "Käufer/Leistungsempfänger",
        "Name: Taxi-Zentrale GmbH",
    ]);
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Taxiunternehmen TX GmbH")
    );
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
fn the_words_before_a_capitals_statement_name_the_company_as_surely_as_a_legal_form() {
    // A utility's bill: its legal statement printed up the margin, its site and a service
    // address in the letterhead.
    let bill = |statement: &'static str| {
        placed(&[
            (0.03, 0.20, statement),
            (0.06, 0.04, "NOUS CONTACTER"),
            (0.17, 0.13, "edf.fr"),
            (0.12, 0.15, "mail : serviceclient@edf.fr"),
            (0.36, 0.42, "Facture TTC 62,86 €"),
        ])
    };
    let x = extract(
        &bill("EDF-SA au capital de 1 549 961 789,50 € Siège social : 22-30 avenue de Wagram"),
        &rules(),
    );
    assert_eq!(value(&x, FieldName::Issuer), Some("EDF-SA"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    // A legal form alone before it names nobody: the site's name is a guess.
    let x = extract(
        &bill("SASU au capital de 200000€ - SIRET 12345682400016"),
        &rules(),
    );
    assert_eq!(value(&x, FieldName::Issuer), Some("edf.fr"));
    assert!(confidence(&x, FieldName::Issuer) < 0.8);
}

#[test]
fn a_capitals_statement_without_a_name_states_the_capital_of_the_name_just_above_it() {
    // A footer: the name, its address, then its legal form and capital.
    let footer = |gap: f64| {
        placed(&[
            (0.65, 0.14, "ALEXINUX"),
            (0.65, 0.17, "27 rue Henri Rolland"),
            (0.41, 0.21, "Facture n° 2022089083"),
            (0.45, 0.94, "Société Hôtelière du Pacano"),
            (0.35, 0.95, "2, rue de la Paix — 75000 Paris"),
            (
                0.17,
                0.94 + gap,
                "SASU au capital de 200000€ - SIRET 12345682400016",
            ),
        ])
    };
    assert_clear_issuer(&footer(0.025), "Société Hôtelière du Pacano");
    // A statement three lines down states another name's capital, or nobody's.
    let x = extract(&footer(0.045), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("ALEXINUX"));
}

#[test]
fn a_letterheads_name_before_its_street_is_named_as_a_sender_line_names_it() {
    // A hotel's logo stacks its name's last words; the line under it gives the whole name and
    // the street.
    let letterhead = |address: &'static str| {
        placed(&[
            (0.41, 0.11, "Leenardo"),
            (0.42, 0.13, "Edinburgh Haymarket"),
            (0.26, 0.15, address),
            (0.41, 0.17, "Edinburgh, EH3 8DN"),
            (0.10, 0.30, "Folio No. 49358"),
        ])
    };
    let x = extract(
        &letterhead("Leonardo Royal Edinburgh Haymarket, 1 Morrison Link"),
        &rules(),
    );
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Leonardo Royal Edinburgh Haymarket")
    );
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    // A street before its number, or another column's label joined after it, names nobody.
    for address in [
        "Paseo de la Ribera, 22 Web: www.penascar.example",
        "Via Roma, 12 - 00100 Roma",
    ] {
        let x = extract(&letterhead(address), &rules());
        assert_ne!(
            value(&x, FieldName::Issuer),
            Some(address.split(',').next().unwrap_or_default()),
            "{address}"
        );
    }
}

#[test]
fn a_name_before_an_iban_or_behind_a_banks_label_is_the_accounts_bank() {
    // An Estonian hotel's bill: the bank beside its account in the letterhead and the footer,
    // the hotel's own name in the footer alone.
    let bill = |bank_line: &'static str| {
        placed(&[
            (0.05, 0.10, "Arve nr 7008605"),
            (0.05, 0.13, bank_line),
            (0.05, 0.90, "Peoleo Hotell Ltd"),
            (0.05, 0.95, "COOP PANK AS EE55 4204 2786 3891 7403 EKRDEE22"),
        ])
    };
    assert_clear_issuer(
        &bill("Eesti COOP PANK AS EE554204278638917403"),
        "Peoleo Hotell Ltd",
    );
    assert_clear_issuer(&bill("Pank = COOP PANK AS"), "Peoleo Hotell Ltd");
    // Without an account after it, a company with its legal form in the letterhead is a party.
    let x = extract(&bill("Eesti COOP PANK AS"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Eesti COOP PANK AS"));
}
