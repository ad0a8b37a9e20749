//! The classic invoice: letterhead top left, the title and a key/value block on the right,
//! the addressee under the letterhead, the items, the totals on the right, terms, and the
//! legal lines in the footer.

use crate::render::Page;

use super::super::doc::Doc;
use super::super::rng::Rng;
use super::blank;
use super::blocks::{fit, pairs, stack, stack_right, Kit, MARGIN};
use super::sections::{address, closing, contacts, items_and_totals, legal_footer, page_numbers};
use super::table::Table;

/// The pages of `doc` in this layout.
pub fn render(doc: &Doc, rng: &mut Rng) -> Vec<Page> {
    let (l, issuer) = (&doc.labels, &doc.issuer);
    let kit = Kit::draw(rng, 9.5);
    let mut page = blank(doc);
    let (width, height) = (page.width, page.height);
    let right = width - MARGIN;
    let column = width / 2.0 - MARGIN - 10.0;

    let name = kit.bold.at(rng.pick(&[15.0, 17.0, 19.0]));
    let name = fit(name, &issuer.name, column);
    let mut left = stack(&mut page, MARGIN, MARGIN, column, name, &[&issuer.name]);
    let address_lines = [issuer.street.clone(), issuer.city_line.clone()];
    left = stack(
        &mut page,
        MARGIN,
        left + 2.0,
        column,
        kit.body(),
        &address_lines,
    );
    left = stack(
        &mut page,
        MARGIN,
        left + 2.0,
        column,
        kit.small(),
        &contacts(doc, issuer),
    );

    let x = width / 2.0 + 20.0;
    let title = kit.bold.at(rng.pick(&[18.0, 22.0]));
    let mut top_right = stack_right(&mut page, right, MARGIN, right - x, title, &[&l.title]);
    let mut rows = vec![
        (doc.key(&l.number), doc.number.clone()),
        (doc.key(&l.date), doc.date(doc.date)),
        (doc.key(&l.due), doc.date(doc.due)),
        (doc.key(&l.customer_no), doc.customer_no.clone()),
    ];
    if rng.chance(0.6) {
        rows.push((doc.key(&l.order_no), doc.order_no.clone()));
    }
    let aligned = rng.chance(0.5);
    top_right = pairs(
        &mut page,
        x,
        top_right + 8.0,
        right - x,
        kit.body(),
        kit.body(),
        &rows,
        aligned,
    );

    let attention = rng.chance(0.5).then_some(l.attention.as_str());
    let bill_to = rng.chance(0.8).then(|| doc.key(&l.bill_to));
    let bill = address(
        &mut page,
        MARGIN,
        left + 22.0,
        column,
        kit,
        bill_to.as_deref(),
        &doc.customer,
        attention,
    );

    let bottom = height - 80.0;
    let table = Table {
        left: MARGIN,
        right,
        kit,
        ruled: false,
        shade: rng.chance(0.5),
        position: rng.chance(0.4),
        bottom,
    };
    let top = bill.max(top_right) + 26.0;
    let lines = closing(doc);
    let currency = rng.chance(0.5);
    let mut pages = items_and_totals(page, doc, &table, top, width * 0.55, currency, &lines);
    legal_footer(&mut pages, doc, kit);
    page_numbers(&mut pages, doc, kit);
    pages
}
