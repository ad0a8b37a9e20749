//! No letterhead: the title and fields at the top, the addressee beside them, and the issuer
//! only in the footer columns (name and address; contacts and VAT id; bank, registration).

use crate::render::Page;

use super::super::doc::Doc;
use super::super::rng::Rng;
use super::blank;
use super::blocks::{pairs, stack, Kit, MARGIN};
use super::sections::{address, closing, items_and_totals, page_numbers, FooterColumns};
use super::table::Table;

/// The pages of `doc` in this layout.
pub fn render(doc: &Doc, rng: &mut Rng) -> Vec<Page> {
    let l = &doc.labels;
    let kit = Kit::draw(rng, 9.5);
    let mut page = blank(doc);
    let (width, height) = (page.width, page.height);
    let right = width - MARGIN;
    let split = width * 0.56;
    let column = split - MARGIN - 16.0;

    let mut top = MARGIN;
    if let Some(note) = &l.copy_note {
        top = stack(&mut page, MARGIN, top, column, kit.small(), &[&note]);
    }
    let title = kit.bold.at(rng.pick(&[22.0, 26.0]));
    top = stack(&mut page, MARGIN, top, column, title, &[&l.title]) + 8.0;
    let mut rows = vec![
        (doc.key(&l.number), doc.number.clone()),
        (doc.key(&l.date), doc.date(doc.date)),
        (doc.key(&l.due), doc.date(doc.due)),
        (doc.key(&l.order_no), doc.order_no.clone()),
    ];
    if rng.chance(0.5) {
        rows.push((doc.key(&l.customer_no), doc.customer_no.clone()));
    }
    let fields = pairs(
        &mut page,
        MARGIN,
        top,
        column,
        kit.bold(),
        kit.body(),
        &rows,
        false,
    );
    let label = doc.key(&l.bill_to);
    let attention = rng.chance(0.5).then_some(l.attention.as_str());
    let bill = address(
        &mut page,
        split,
        MARGIN + 6.0,
        right - split,
        kit,
        Some(&label),
        &doc.customer,
        attention,
    );

    let footer = FooterColumns::new(doc, kit, width);
    let bottom = height - footer.height - 10.0;
    let table = Table {
        left: MARGIN,
        right,
        kit,
        ruled: rng.chance(0.3),
        shade: rng.chance(0.6),
        position: rng.chance(0.4),
        bottom,
    };
    top = fields.max(bill) + 26.0;
    let lines = closing(doc);
    let currency = rng.chance(0.5);
    let mut pages = items_and_totals(page, doc, &table, top, width * 0.55, currency, &lines);
    footer.draw(&mut pages);
    page_numbers(&mut pages, doc, kit);
    pages
}
