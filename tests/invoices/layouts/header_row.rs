//! Labels above values: under the letterhead, a boxed row of labels (number, date, due date,
//! customer number, total) with the values in the row below, as many invoicing services print;
//! then bill-to and ship-to, the items and the totals (the total again).

use crate::render::Page;

use super::super::doc::Doc;
use super::super::rng::Rng;
use super::blank;
use super::blocks::{baseline, fit, stack, stack_right, Kit, MARGIN};
use super::sections::{address, closing, contacts, items_and_totals, legal_footer, page_numbers};
use super::table::Table;

/// The pages of `doc` in this layout.
pub fn render(doc: &Doc, rng: &mut Rng) -> Vec<Page> {
    let (l, issuer) = (&doc.labels, &doc.issuer);
    let kit = Kit::draw(rng, 9.0);
    let mut page = blank(doc);
    let (width, height) = (page.width, page.height);
    let right = width - MARGIN;
    let column = width * 0.5 - MARGIN;

    let name = fit(kit.bold.at(rng.pick(&[15.0, 18.0])), &issuer.name, column);
    let mut left = stack(&mut page, MARGIN, MARGIN, column, name, &[&issuer.name]);
    let lines = [issuer.street.clone(), issuer.city_line.clone()];
    left = stack(&mut page, MARGIN, left + 2.0, column, kit.body(), &lines);
    left = stack(
        &mut page,
        MARGIN,
        left,
        column,
        kit.small(),
        &contacts(doc, issuer),
    );
    let title = kit.bold.at(22.0);
    let mut title_lines = vec![l.title.clone()];
    title_lines.extend(l.copy_note.clone());
    let head = stack_right(
        &mut page,
        right,
        MARGIN,
        right - MARGIN - column,
        title,
        &title_lines[..1],
    );
    let head = stack_right(
        &mut page,
        right,
        head,
        column,
        kit.small(),
        &title_lines[1..],
    );

    // The header row: labels over values, in boxes.
    let mut cells = vec![
        (l.number.clone(), doc.number.clone()),
        (l.date.clone(), doc.date(doc.date)),
        (l.due.clone(), doc.date(doc.due)),
    ];
    cells.push(if rng.chance(0.5) {
        (l.customer_no.clone(), doc.customer_no.clone())
    } else {
        (l.order_no.clone(), doc.order_no.clone())
    });
    let total = doc.totals.last().unwrap();
    cells.push((total.label.clone(), doc.money(total.cents)));
    let row = kit.leading() + 2.0;
    let top = left.max(head) + 20.0;
    let cell = (right - MARGIN) / cells.len() as f32;
    page.fill(MARGIN, top, right - MARGIN, row, 0.85);
    page.frame(MARGIN, top, right - MARGIN, 2.0 * row, 0.7);
    page.line(MARGIN, top + row, right, top + row, 0.5);
    let label_style = kit.bold().size(kit.size * 0.9);
    for (i, (label, value)) in cells.iter().enumerate() {
        let x = MARGIN + i as f32 * cell;
        if i > 0 {
            page.line(x, top, x, top + 2.0 * row, 0.5);
        }
        let y = baseline(top + 2.0, label_style);
        page.text(x + 4.0, y, fit(label_style, label, cell - 8.0), label);
        let value_style = fit(kit.body(), value, cell - 8.0);
        page.text(
            x + 4.0,
            baseline(top + row + 2.0, kit.body()),
            value_style,
            value,
        );
    }

    let below = top + 2.0 * row + 20.0;
    let bill_label = doc.key(&l.bill_to);
    let bill = address(
        &mut page,
        MARGIN,
        below,
        column - 10.0,
        kit,
        Some(&bill_label),
        &doc.customer,
        None,
    );
    let ship_label = doc.key(&l.ship_to);
    let attention = Some(l.attention.as_str());
    let ship = address(
        &mut page,
        MARGIN + column,
        below,
        column,
        kit,
        Some(&ship_label),
        &doc.customer,
        attention,
    );

    let bottom = height - 80.0;
    let table = Table {
        left: MARGIN,
        right,
        kit,
        ruled: rng.chance(0.5),
        shade: rng.chance(0.5),
        position: rng.chance(0.5),
        bottom,
    };
    let top = bill.max(ship) + 22.0;
    let lines = closing(doc);
    let currency = rng.chance(0.5);
    let mut pages = items_and_totals(page, doc, &table, top, width * 0.55, currency, &lines);
    legal_footer(&mut pages, doc, kit);
    page_numbers(&mut pages, doc, kit);
    pages
}
