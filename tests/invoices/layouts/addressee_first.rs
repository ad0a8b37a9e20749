//! A business letter for a window envelope: the addressee first, under a one-line sender; the
//! issuer's name and contact lines top right; an info block (number, dates, customer and
//! order numbers) beside the address; a subject line, a greeting, the items and totals; the
//! issuer's details in footer columns.

use crate::render::Page;

use super::super::doc::Doc;
use super::super::rng::Rng;
use super::blank;
use super::blocks::{fit, pairs, stack, stack_right, Kit, MARGIN};
use super::sections::{address, due_and_closing, items_and_totals, page_numbers, FooterColumns};
use super::table::Table;

/// The pages of `doc` in this layout.
pub fn render(doc: &Doc, rng: &mut Rng) -> Vec<Page> {
    let (l, issuer) = (&doc.labels, &doc.issuer);
    let kit = Kit::draw(rng, 9.5);
    let mut page = blank(doc);
    let (width, height) = (page.width, page.height);
    let right = width - MARGIN;
    let split = width * 0.58;

    let name = fit(
        kit.bold.at(rng.pick(&[16.0, 18.0])),
        &issuer.name,
        right - split,
    );
    let mut head = stack_right(&mut page, right, 40.0, right - split, name, &[&issuer.name]);
    let lines = [
        issuer.street.clone(),
        issuer.city_line.clone(),
        issuer.phone.clone(),
    ];
    head = stack_right(&mut page, right, head, right - split, kit.small(), &lines);

    let sender = format!("{} · {} · {}", issuer.name, issuer.street, issuer.city_line);
    let sender_style = fit(kit.regular.at(6.5), &sender, split - MARGIN - 20.0);
    let window = head.max(110.0) + 16.0;
    page.text(MARGIN, window, sender_style, &sender);
    let under = window + 2.0;
    page.line(
        MARGIN,
        under,
        MARGIN + sender_style.width(&sender),
        under,
        0.3,
    );
    let label = rng.chance(0.4).then(|| l.bill_to.clone());
    let attention = rng.chance(0.5).then_some(l.attention.as_str());
    let column = split - MARGIN - 20.0;
    let bill = address(
        &mut page,
        MARGIN,
        under + 10.0,
        column,
        kit,
        label.as_deref(),
        &doc.customer,
        attention,
    );

    let rows = [
        (doc.key(&l.number), doc.number.clone()),
        (doc.key(&l.date), doc.date(doc.date)),
        (doc.key(&l.customer_no), doc.customer_no.clone()),
        (doc.key(&l.order_no), doc.order_no.clone()),
        (doc.key(&l.order_date), doc.date(doc.order_date)),
        (doc.key(&l.delivery), doc.date(doc.delivery)),
    ];
    let info = pairs(
        &mut page,
        split,
        window - 8.0,
        right - split,
        kit.small(),
        kit.body(),
        &rows,
        false,
    );

    let mut top = bill.max(info) + 26.0;
    let subject = format!("{} {}", l.title, doc.number);
    top = stack(
        &mut page,
        MARGIN,
        top,
        right - MARGIN,
        kit.bold().size(kit.size + 3.0),
        &[subject],
    );
    let letter = [l.greeting.clone(), l.intro.clone()];
    top = stack(
        &mut page,
        MARGIN,
        top + 8.0,
        right - MARGIN,
        kit.body(),
        &letter,
    );

    let footer = FooterColumns::new(doc, kit, width);
    let bottom = height - footer.height - 10.0;
    let table = Table {
        left: MARGIN,
        right,
        kit,
        ruled: false,
        shade: rng.chance(0.3),
        position: true,
        bottom,
    };
    top += 10.0;
    let after = due_and_closing(doc);
    let currency = rng.chance(0.3);
    let mut pages = items_and_totals(page, doc, &table, top, width * 0.52, currency, &after);
    footer.draw(&mut pages);
    page_numbers(&mut pages, doc, kit);
    pages
}
