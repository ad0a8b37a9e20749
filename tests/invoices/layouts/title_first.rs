//! The title first: "FACTUUR", "RECHNUNG", "INVOICE" big at the top, the issuer small under
//! it, the addressee beside the issuer, two columns of fields, then items and totals.

use crate::render::Page;

use super::super::doc::Doc;
use super::super::rng::Rng;
use super::blank;
use super::blocks::{fit, pairs, stack, stack_center, Kit, MARGIN};
use super::sections::{address, closing, contacts, items_and_totals, legal_footer, page_numbers};
use super::table::Table;

/// The pages of `doc` in this layout.
pub fn render(doc: &Doc, rng: &mut Rng) -> Vec<Page> {
    let (l, issuer) = (&doc.labels, &doc.issuer);
    let kit = Kit::draw(rng, 9.5);
    let mut page = blank(doc);
    let (width, height) = (page.width, page.height);
    let right = width - MARGIN;
    let split = width * 0.55;
    let column = split - MARGIN - 16.0;

    let mut top = MARGIN - 10.0;
    if let Some(note) = &l.copy_note {
        top = stack(
            &mut page,
            MARGIN,
            top,
            right - MARGIN,
            kit.small(),
            &[&note],
        );
    }
    let title = kit.bold.at(rng.pick(&[26.0, 30.0, 34.0]));
    top = if rng.chance(0.5) {
        stack_center(
            &mut page,
            width / 2.0,
            top,
            right - MARGIN,
            title,
            &[&l.title],
        )
    } else {
        stack(&mut page, MARGIN, top, right - MARGIN, title, &[&l.title])
    };
    top += 14.0;

    let mut left = top;
    if rng.chance(0.5) {
        left = stack(
            &mut page,
            MARGIN,
            left,
            column,
            kit.small(),
            &[doc.key(&l.from)],
        );
    }
    let name = fit(kit.bold().size(kit.size + 2.0), &issuer.name, column);
    left = stack(&mut page, MARGIN, left, column, name, &[&issuer.name]);
    let lines = [issuer.street.clone(), issuer.city_line.clone()];
    left = stack(&mut page, MARGIN, left, column, kit.body(), &lines);
    left = stack(
        &mut page,
        MARGIN,
        left + 2.0,
        column,
        kit.small(),
        &contacts(doc, issuer),
    );
    let label = doc.key(&l.bill_to);
    let attention = rng.chance(0.3).then_some(l.attention.as_str());
    let bill = address(
        &mut page,
        split,
        top,
        right - split,
        kit,
        Some(&label),
        &doc.customer,
        attention,
    );

    let fields_top = left.max(bill) + 20.0;
    let first = [
        (doc.key(&l.number), doc.number.clone()),
        (doc.key(&l.date), doc.date(doc.date)),
    ];
    let second = [
        (doc.key(&l.due), doc.date(doc.due)),
        (doc.key(&l.customer_no), doc.customer_no.clone()),
    ];
    let a = pairs(
        &mut page,
        MARGIN,
        fields_top,
        column,
        kit.bold(),
        kit.body(),
        &first,
        false,
    );
    let b = pairs(
        &mut page,
        split,
        fields_top,
        right - split,
        kit.bold(),
        kit.body(),
        &second,
        false,
    );

    let bottom = height - 80.0;
    let table = Table {
        left: MARGIN,
        right,
        kit,
        ruled: rng.chance(0.4),
        shade: true,
        position: rng.chance(0.3),
        bottom,
    };
    let top = a.max(b) + 22.0;
    let lines = closing(doc);
    let currency = rng.chance(0.5);
    let mut pages = items_and_totals(page, doc, &table, top, width * 0.55, currency, &lines);
    legal_footer(&mut pages, doc, kit);
    page_numbers(&mut pages, doc, kit);
    pages
}
