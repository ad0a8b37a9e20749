//! A dense form: small type, every block in a box, bill-to and ship-to, every date and number
//! a form can carry (order and delivery dates, customer and order numbers), a ruled table, a
//! rubber stamp at an angle and speckle noise, as a scanned copy of an ERP print looks.

use crate::render::{Font, Page};

use super::super::doc::Doc;
use super::super::rng::Rng;
use super::blank;
use super::blocks::{fit, pairs, stack, stack_right, Kit, MARGIN};
use super::sections::{
    address, closing, contacts, continuation, legal_footer, page_numbers, room, totals,
};
use super::table::Table;

/// The pages of `doc` in this layout.
pub fn render(doc: &Doc, rng: &mut Rng) -> Vec<Page> {
    let (l, issuer) = (&doc.labels, &doc.issuer);
    let kit = if rng.chance(0.4) {
        Kit::mono(7.5)
    } else {
        Kit {
            regular: rng.pick(&[Font::Helvetica, Font::TimesRoman]),
            bold: Font::HelveticaBold,
            size: 7.5,
        }
    };
    let mut page = blank(doc);
    let (width, height) = (page.width, page.height);
    let right = width - MARGIN;
    let split = width * 0.52;
    let pad = 6.0;

    // Issuer box, top left.
    let inner = split - MARGIN - 10.0 - 2.0 * pad;
    let x = MARGIN + pad;
    let name = fit(kit.bold.at(12.0), &issuer.name, inner);
    let mut left = stack(&mut page, x, MARGIN + pad, inner, name, &[&issuer.name]);
    let mut lines = vec![issuer.street.clone(), issuer.city_line.clone()];
    lines.extend(contacts(doc, issuer));
    lines.push(format!("{} {}", doc.key(&l.vat_id), issuer.vat));
    left = stack(&mut page, x, left + 2.0, inner, kit.body(), &lines) + pad;

    // Title and every field, top right.
    let x = split + pad;
    let inner_right = right - split - 2.0 * pad;
    let title = kit.bold.at(14.0);
    let mut side = stack_right(
        &mut page,
        right - pad,
        MARGIN + pad,
        inner_right,
        title,
        &[&l.title],
    );
    let rows = [
        (doc.key(&l.number), doc.number.clone()),
        (doc.key(&l.date), doc.date(doc.date)),
        (doc.key(&l.due), doc.date(doc.due)),
        (doc.key(&l.order_date), doc.date(doc.order_date)),
        (doc.key(&l.delivery), doc.date(doc.delivery)),
        (doc.key(&l.customer_no), doc.customer_no.clone()),
        (doc.key(&l.order_no), doc.order_no.clone()),
    ];
    side = pairs(
        &mut page,
        x,
        side + 4.0,
        inner_right,
        kit.body(),
        kit.body(),
        &rows,
        false,
    ) + pad;
    let head = left.max(side);
    page.frame(MARGIN, MARGIN, split - MARGIN - 10.0, head - MARGIN, 0.8);
    page.frame(split, MARGIN, right - split, head - MARGIN, 0.8);

    // Bill-to and ship-to boxes.
    let top = head + 10.0;
    let stamp_top = top;
    let bill_label = doc.key(&l.bill_to);
    let ship_label = doc.key(&l.ship_to);
    let bill = address(
        &mut page,
        MARGIN + pad,
        top + pad,
        inner,
        kit,
        Some(&bill_label),
        &doc.customer,
        None,
    );
    let attention = Some(l.attention.as_str());
    let ship = address(
        &mut page,
        split + pad,
        top + pad,
        inner_right,
        kit,
        Some(&ship_label),
        &doc.customer,
        attention,
    );
    let boxes = bill.max(ship) + pad;
    page.frame(MARGIN, top, split - MARGIN - 10.0, boxes - top, 0.8);
    page.frame(split, top, right - split, boxes - top, 0.8);

    let bottom = height - 75.0;
    let table = Table {
        left: MARGIN,
        right,
        kit,
        ruled: true,
        shade: rng.chance(0.5),
        position: true,
        bottom,
    };
    let mut pages = vec![page];
    let mut top = table.draw(doc, &mut pages, boxes + 12.0, &continuation(doc, kit));
    let lines = closing(doc);
    let need = (doc.totals.len() + lines.len() + 3) as f32 * kit.leading();
    top = room(&mut pages, doc, kit, top + 8.0, need, bottom);
    let page = pages.last_mut().unwrap();
    let x = width * 0.55;
    let end = totals(page, x + pad, right - pad, top + pad, kit, doc, true) + pad;
    page.frame(x, top, right - x, end - top, 0.8);
    let after = stack(page, MARGIN, end + 10.0, right - MARGIN, kit.body(), &lines);

    // The stamp over the ship-to box or below the closing lines, and the noise.
    let angle = rng.range(12, 28) as f32 * if rng.chance(0.5) { 1.0 } else { -1.0 };
    if rng.chance(0.5) || after + 70.0 > bottom {
        let y = (stamp_top + boxes) / 2.0;
        pages[0].stamp(right - 90.0, y, angle, 20.0, &l.stamp);
    } else {
        page.stamp(width * 0.6, after + 40.0, angle, 20.0, &l.stamp);
    }
    legal_footer(&mut pages, doc, kit);
    page_numbers(&mut pages, doc, kit);
    for page in pages.iter_mut() {
        let count = rng.range(250, 600);
        let specks: Vec<(f32, f32, f32)> = (0..count)
            .map(|_| {
                let x = rng.unit() * page.width;
                let y = rng.unit() * page.height;
                (x, y, 0.3 + rng.unit() * 1.2)
            })
            .collect();
        page.speckle(specks, 0.25 + rng.unit() * 0.35);
    }
    pages
}
