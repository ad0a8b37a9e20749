//! A two-column letterhead: the issuer's name and address on the left, its contact, VAT,
//! registration and bank lines on the right, a rule under both; then the addressee with the
//! title and fields beside it, the items and the totals.

use crate::render::Page;

use super::super::doc::Doc;
use super::super::rng::Rng;
use super::blank;
use super::blocks::{fit, pairs, stack, Kit, MARGIN};
use super::sections::{address, contacts, due_and_closing, items_and_totals, legal, page_numbers};
use super::table::Table;

/// The pages of `doc` in this layout.
pub fn render(doc: &Doc, rng: &mut Rng) -> Vec<Page> {
    let (l, issuer) = (&doc.labels, &doc.issuer);
    let kit = Kit::draw(rng, 9.5);
    let mut page = blank(doc);
    let (width, height) = (page.width, page.height);
    let right = width - MARGIN;
    let split = width * 0.56;
    let column = split - MARGIN - 16.0;

    let mut top = MARGIN;
    if let Some(note) = &l.copy_note {
        top = stack(
            &mut page,
            MARGIN,
            top,
            right - MARGIN,
            kit.small(),
            &[&note],
        ) + 4.0;
    }
    let name = fit(
        kit.bold.at(rng.pick(&[16.0, 18.0, 20.0])),
        &issuer.name,
        column,
    );
    let mut left = stack(&mut page, MARGIN, top, column, name, &[&issuer.name]);
    let lines = [issuer.street.clone(), issuer.city_line.clone()];
    left = stack(&mut page, MARGIN, left + 2.0, column, kit.body(), &lines);
    let mut details = contacts(doc, issuer);
    details.extend(legal(doc).into_iter().take(3));
    let side = stack(&mut page, split, top, right - split, kit.small(), &details);
    let rule = left.max(side) + 8.0;
    page.line(MARGIN, rule, right, rule, 1.0);

    let attention = rng.chance(0.4).then_some(l.attention.as_str());
    let label = rng.chance(0.5).then(|| doc.key(&l.bill_to));
    let bill = address(
        &mut page,
        MARGIN,
        rule + 22.0,
        column,
        kit,
        label.as_deref(),
        &doc.customer,
        attention,
    );
    let title = kit.bold.at(rng.pick(&[16.0, 20.0]));
    let mut fields = stack(
        &mut page,
        split,
        rule + 18.0,
        right - split,
        title,
        &[&l.title],
    );
    let rows = [
        (doc.key(&l.number), doc.number.clone()),
        (doc.key(&l.date), doc.date(doc.date)),
        (doc.key(&l.delivery), doc.date(doc.delivery)),
        (doc.key(&l.customer_no), doc.customer_no.clone()),
        (doc.key(&l.order_no), doc.order_no.clone()),
    ];
    fields = pairs(
        &mut page,
        split,
        fields + 6.0,
        right - split,
        kit.body(),
        kit.body(),
        &rows,
        false,
    );

    let bottom = height - 50.0;
    let table = Table {
        left: MARGIN,
        right,
        kit,
        ruled: rng.chance(0.3),
        shade: rng.chance(0.5),
        position: rng.chance(0.5),
        bottom,
    };
    let top = bill.max(fields) + 24.0;
    let after = due_and_closing(doc);
    let currency = rng.chance(0.5);
    let mut pages = items_and_totals(page, doc, &table, top, width * 0.55, currency, &after);
    page_numbers(&mut pages, doc, kit);
    pages
}
