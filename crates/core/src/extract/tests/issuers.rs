//! The issuer from evidence in real-world layouts, in small: sender lines, the addressee's window
//! and blocks, a second mention, a domain, names inside sentences, legal forms.

use super::*;

#[test]
fn addressee_lines_are_not_taken_for_the_issuer() {
    for first in [
        "ATTN: Globex Limited",
        "Factuuradres",
        "Delivery Address:",
        "Herrn",
    ] {
        let x = run(&[first, "Globex Corporation", "Initech", "Invoice No: 7"]);
        assert_eq!(
            value(&x, FieldName::Issuer),
            Some("Initech"),
            "after {first}"
        );
    }
}

#[test]
fn a_sender_line_names_the_issuer_and_the_window_below_it_is_the_addressee() {
    let doc = placed(&[
        (0.1, 0.14, "Acme GmbH | Europa-Allee 19 | 60486 Frankfurt"),
        (0.1, 0.16, "Beispiel AG"),
        (0.1, 0.18, "Feldstraße 34"),
        (0.1, 0.20, "54321 Hinterhausen"),
        (0.1, 0.30, "Rechnung RE-1001"),
        (0.1, 0.50, "Lieferung an Beispiel AG, Werk 2"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Acme GmbH"));
    // The customer, named twice, would tie with the sender if its window counted.
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("RE-1001"));
    assert_close(
        confidence(&x, FieldName::InvoiceNumber),
        0.99 * TITLE_NUMBER,
    );
}

#[test]
fn a_name_without_a_legal_form_that_its_sender_line_and_a_second_line_name_is_sure() {
    let page = |letterhead: &'static str| {
        placed(&[
            (0.1, 0.14, "acmeshop.io | Somestreet 42 | 08155 Some city"),
            (0.1, 0.15, "Beispiel AG"),
            (0.1, 0.17, "54321 Hinterhausen"),
            (0.65, 0.14, letterhead),
            (0.65, 0.15, "Somestreet 42"),
            (0.1, 0.25, "Rechnung RE1001"),
        ])
    };
    // The letterhead repeats the name, lower case as the sender line prints it.
    let x = extract(&page("acmeshop.io"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("acmeshop.io"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    // Named by its sender line alone: a guess.
    let x = extract(&page("Phone: 06661556"), &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("acmeshop.io"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_GUESSED);
}

#[test]
fn a_footer_line_of_parts_heads_no_addressee_block() {
    // A shop's bill: the buyer at the top, the seller's legal name only in the footer, under a
    // line of register data written like a sender line.
    let doc = placed(&[
        (0.1, 0.16, "Globex Consulting GmbH"),
        (0.1, 0.18, "Friedrichstrasse 123"),
        (0.1, 0.30, "Rechnungsnr. 6002298172"),
        (
            0.1,
            0.90,
            "Registergericht: Amtsgericht Dresden HRB 16246 | Ust.-IdNr.: DE195033395 | Steuer-Nr.: 202/107/09526",
        ),
        (0.1, 0.92, "Acme GmbH E-Mail: info@acme.de Commerzbank"),
        (0.1, 0.93, "Am Brauhaus 5 Telefon: +49 351 3395-60"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Acme GmbH"));
}

#[test]
fn an_issuer_named_once_beside_another_company_is_contested() {
    // No label, no sender line: the customer's block comes first, the seller sits at the right.
    let doc = placed(&[
        (0.1, 0.13, "Adatum Corporation"),
        (0.1, 0.15, "Station Road 21"),
        (0.8, 0.13, "Cronus Trading Ltd"),
        (0.1, 0.30, "Invoice No: 103767"),
    ]);
    let x = extract(&doc, &rules());
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_CONTESTED);

    // The seller's web domain and a second mention settle it.
    let doc = placed(&[
        (0.1, 0.13, "Adatum Corporation"),
        (0.1, 0.15, "Station Road 21"),
        (0.8, 0.13, "Cronus Trading Ltd"),
        (0.8, 0.15, "www.cronus.example.com"),
        (0.1, 0.30, "Invoice No: 103767"),
        (
            0.1,
            0.92,
            "Cronus Trading Ltd, registered in England 0123456",
        ),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(value(&x, FieldName::Issuer), Some("Cronus Trading Ltd"));
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
}

#[test]
fn a_company_named_inside_a_sentence_is_cut_to_its_name() {
    let doc = placed(&[
        (0.4, 0.08, "Amazon Web Services Invoice"),
        (0.4, 0.15, "Invoice Number: 42183017"),
        (
            0.1,
            0.84,
            "Check the statement attached at the end of this Invoice Amazon Web Services, Inc.",
        ),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("Amazon Web Services, Inc.")
    );
}

#[test]
fn a_label_word_that_starts_a_company_name_is_not_its_label() {
    let x = run(&["Lieferant GmbH", "Rechnungsnummer 471102"]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Lieferant GmbH"));
}

#[test]
fn seller_and_buyer_blocks_give_the_seller_and_never_a_label_or_the_buyer() {
    let x = run(&[
        "Handelsrechnung Nr. 47110815 vom 31.10.2018",
        "Verkäufer:",
        "Nummer : 12345676",
        "Rohstoff AG Salzgitter",
        "Marktstr. 153",
        "Käufer/Leistungsempfänger:",
        "Nummer : 75969813",
        "Metallbau Leipzig GmbH & Co. KG",
        "Pappelallee 15",
        "Zahlbetrag 521,91",
    ]);
    assert_eq!(value(&x, FieldName::Issuer), Some("Rohstoff AG"));
    // The buyer's block (past its reference line) is left out: no runner-up.
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
    assert_eq!(value(&x, FieldName::InvoiceNumber), Some("47110815"));
    assert_eq!(value(&x, FieldName::InvoiceDate), Some("2018-10-31"));
    assert_close(
        confidence(&x, FieldName::InvoiceDate),
        0.99 * DATE_WITH_NUMBER,
    );

    // A label line (`Name:`) after the seller's label is no name.
    let x = run(&["Verkaufer", "Name:", "Invoice No: 5"]);
    assert_eq!(value(&x, FieldName::Issuer), None);
}

#[test]
fn a_web_domain_set_apart_by_ocr_still_vouches_for_the_issuer() {
    let doc = placed(&[
        (0.1, 0.11, "Beaufortin Plomberie SAS"),
        (0.1, 0.17, "Email accounts @ beaufortin-plomberie.example"),
        (0.6, 0.11, "Sauvaget Menuiserie SARL"),
        (0.1, 0.22, "N° facture FAC75944"),
    ]);
    assert_clear_issuer(&doc, "Beaufortin Plomberie SAS");
}

#[test]
fn a_customer_named_under_the_billing_label_is_never_the_issuer_elsewhere_either() {
    let doc = placed(&[
        (0.1, 0.06, "Dubreuilh & Rocheblave SAS"),
        (0.1, 0.09, "106 rue des Tanneurs"),
        (0.1, 0.23, "Adresse de facturation:"),
        (0.1, 0.24, "Menuiserie Sauvaget EURL"),
        (0.1, 0.25, "41 allée des Erables"),
        (0.6, 0.24, "Menuiserie Sauvaget EURL"),
        (0.1, 0.30, "N° facture 202609-554"),
    ]);
    assert_clear_issuer(&doc, "Dubreuilh & Rocheblave SAS");
}

#[test]
fn each_label_of_a_line_of_addressee_labels_heads_its_own_block() {
    // `Livré à` is the fourth word of its line (words sit a twentieth apart): its block at 0.25.
    let mut doc = placed(&[
        (0.1, 0.06, "Dubreuilh & Rocheblave SAS"),
        (0.1, 0.09, "106 rue des Tanneurs"),
        (0.1, 0.23, "Adresse de facturation: Livré à:"),
        (0.1, 0.24, "Menuiserie Sauvaget EURL"),
        (0.1, 0.25, "41 allée des Erables"),
        (0.25, 0.24, "Atelier Sauvaget SARL"),
        (0.25, 0.25, "12 quai du Port"),
        (0.1, 0.30, "N° facture 202609-554"),
    ]);
    doc.pages[0].lines[2].words[3].bbox.left = 0.25;
    assert_clear_issuer(&doc, "Dubreuilh & Rocheblave SAS");
}

#[test]
fn a_city_and_its_postcode_are_no_sender_line() {
    let doc = placed(&[
        (0.1, 0.05, "Bhandarkar Enterprises LLP"),
        (0.6, 0.08, "Mysuru - 570001"),
        (0.1, 0.30, "Tax Invoice No: TI-1"),
    ]);
    assert_clear_issuer(&doc, "Bhandarkar Enterprises LLP");
}

#[test]
fn one_name_with_two_spellings_of_its_legal_form_is_one_name() {
    let doc = placed(&[
        (0.1, 0.05, "PAYMENT RECEIPT"),
        (0.1, 0.13, "Hotel Details Check In Check Out Rooms"),
        (0.1, 0.54, "Oravel Stays Pvt. Ltd."),
        (0.1, 0.66, "New Delhi - 110001"),
        (0.4, 0.75, "Oravel Stays Private Limited"),
    ]);
    let x = extract(&doc, &rules());
    assert_eq!(
        value(&x, FieldName::Issuer).map(|v| v.starts_with("Oravel Stays")),
        Some(true)
    );
    assert_close(confidence(&x, FieldName::Issuer), 0.99 * ISSUER_WITH_SUFFIX);
}

#[test]
fn an_australian_company_keeps_its_pty_ltd_and_a_euro_country_is_no_name() {
    let x = run(&[
        "Tax Invoice",
        "Invoice #: 00095757",
        "Please make all cheques payable to : CENTRE COM HAWTHORN PTY LTD",
    ]);
    assert_eq!(
        value(&x, FieldName::Issuer),
        Some("CENTRE COM HAWTHORN PTY LTD")
    );
    // The last line of an address (`Lithuania`) names a country, not a company.
    let x = run(&["Invoice 15293", "Lithuania", "Total EUR 36.00"]);
    assert_eq!(value(&x, FieldName::Issuer), None);
}
