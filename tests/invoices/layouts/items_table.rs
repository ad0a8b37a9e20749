//! The items table carries the invoice: a ruled grid whose last rows are the subtotal, the
//! taxes and the total, each amount right-aligned in the amount column, under a compact
//! header (issuer left, title and fields right, addressee below).

use crate::render::Page;

use super::super::doc::Doc;
use super::super::rng::Rng;
use super::blank;
use super::blocks::{fit, pairs, stack, stack_right, Kit, MARGIN};
use super::sections::{address, closing, contacts, continuation, legal_footer, page_numbers, room};
use super::table::Table;

/// The pages of `doc` in this layout.
pub fn render(doc: &Doc, rng: &mut Rng) -> Vec<Page> {
    let (l, issuer) = (&doc.labels, &doc.issuer);
    let kit = Kit::draw(rng, 9.0);
    let mut page = blank(doc);
    let (width, height) = (page.width, page.height);
    let right = width - MARGIN;
    let column = width * 0.5 - MARGIN;
    let split = width * 0.55;

    let name = fit(kit.bold.at(14.0), &issuer.name, column);
    let mut left = stack(&mut page, MARGIN, MARGIN, column, name, &[&issuer.name]);
    let lines = [issuer.street.clone(), issuer.city_line.clone()];
    left = stack(&mut page, MARGIN, left, column, kit.body(), &lines);
    left = stack(
        &mut page,
        MARGIN,
        left,
        column,
        kit.small(),
        &contacts(doc, issuer)[..2],
    );
    let title = kit.bold.at(rng.pick(&[16.0, 20.0]));
    let mut side = stack_right(&mut page, right, MARGIN, right - split, title, &[&l.title]);
    let rows = [
        (doc.key(&l.number), doc.number.clone()),
        (doc.key(&l.date), doc.date(doc.date)),
        (doc.key(&l.order_no), doc.order_no.clone()),
        (doc.key(&l.customer_no), doc.customer_no.clone()),
    ];
    side = pairs(
        &mut page,
        split,
        side + 6.0,
        right - split,
        kit.body(),
        kit.body(),
        &rows,
        true,
    );
    let label = doc.key(&l.bill_to);
    let bill = address(
        &mut page,
        MARGIN,
        left + 18.0,
        column,
        kit,
        Some(&label),
        &doc.customer,
        None,
    );

    let bottom = height - 80.0;
    let table = Table {
        left: MARGIN,
        right,
        kit,
        ruled: true,
        shade: rng.chance(0.7),
        position: rng.chance(0.5),
        bottom,
    };
    let mut pages = vec![page];
    let mut top = table.draw(
        doc,
        &mut pages,
        bill.max(side) + 24.0,
        &continuation(doc, kit),
    );
    let lines = closing(doc);
    let need = (doc.totals.len() + lines.len() + 2) as f32 * table.row();
    let fresh = room(&mut pages, doc, kit, top, need, bottom);
    let page = pages.last_mut().unwrap();
    if fresh != top {
        page.line(MARGIN, fresh, right, fresh, 0.6);
    }
    top = fresh;

    // The totals as the grid's last rows: label in the quantity and price columns, amount in
    // the amount column.
    let c = table.columns();
    let (label_left, amount_left) = (c.qty - 42.0, c.unit + 5.0);
    let row = table.row();
    let currency = rng.chance(0.5);
    for total in &doc.totals {
        let style = if total.strong { kit.bold() } else { kit.body() };
        let amount = if total.strong || currency {
            doc.money(total.cents)
        } else {
            doc.amount(total.cents)
        };
        let y = top + row * 0.5 + kit.size * 0.3;
        let label = fit(style, &total.label, c.unit - label_left - 6.0);
        page.text_right(c.unit, y, label, &total.label);
        page.text_right(
            c.amount,
            y,
            fit(style, &amount, right - amount_left - 8.0),
            &amount,
        );
        page.frame(label_left, top, right - label_left, row, 0.4);
        page.line(amount_left, top, amount_left, top + row, 0.4);
        if total.strong {
            page.frame(label_left, top, right - label_left, row, 1.2);
        }
        top += row;
    }
    stack(page, MARGIN, top + 16.0, right - MARGIN, kit.body(), &lines);
    legal_footer(&mut pages, doc, kit);
    page_numbers(&mut pages, doc, kit);
    pages
}
