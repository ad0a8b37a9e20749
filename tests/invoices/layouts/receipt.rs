//! A till receipt on a narrow (80 mm) page as long as its content: the shop centred at the
//! top, number and date with a time, one item over two lines, the totals, how it was paid.

use crate::render::{Font, Page};

use super::super::doc::Doc;
use super::super::rng::Rng;
use super::blocks::{baseline, fit, line_height, stack, stack_center, wrap, Kit};

/// 80 mm in points, and the margin of a receipt.
const WIDTH: f32 = 226.0;
const SIDE: f32 = 12.0;

/// The pages of `doc` in this layout.
pub fn render(doc: &Doc, rng: &mut Rng) -> Vec<Page> {
    let (l, issuer) = (&doc.labels, &doc.issuer);
    let kit = if rng.chance(0.6) {
        Kit::mono(8.0)
    } else {
        Kit {
            regular: Font::Helvetica,
            bold: Font::HelveticaBold,
            size: 8.0,
        }
    };
    let mut page = Page::new(WIDTH, 2000.0);
    let (mid, width, right) = (WIDTH / 2.0, WIDTH - 2.0 * SIDE, WIDTH - SIDE);
    let rule = |page: &mut Page, top: f32| -> f32 {
        if kit.regular == Font::Courier {
            let dashes = "-".repeat((width / (0.6 * kit.size)) as usize);
            stack(page, SIDE, top, width, kit.body(), &[dashes])
        } else {
            page.line(SIDE, top + 4.0, right, top + 4.0, 0.5);
            top + 9.0
        }
    };

    let name = fit(kit.bold.at(11.0), &issuer.name, width);
    let mut top = stack_center(&mut page, mid, 16.0, width, name, &[&issuer.name]);
    let head = [
        issuer.street.clone(),
        issuer.city_line.clone(),
        format!("{} {}", doc.key(&l.phone), issuer.phone),
        format!("{} {}", doc.key(&l.vat_id), issuer.vat),
    ];
    top = stack_center(&mut page, mid, top + 2.0, width, kit.body(), &head);
    top = rule(&mut page, top + 2.0);
    top = stack_center(
        &mut page,
        mid,
        top,
        width,
        kit.bold().size(10.0),
        &[&l.receipt_title],
    );
    let time = format!("{:02}:{:02}", rng.range(8, 20), rng.range(0, 59));
    let mut fields = vec![
        format!("{} {}", doc.key(&l.number), doc.number),
        format!("{} {}  {time}", doc.key(&l.date), doc.date(doc.date)),
    ];
    if rng.chance(0.5) {
        fields.push(format!("{} {}", doc.key(&l.customer_no), doc.customer_no));
    }
    top = stack(&mut page, SIDE, top + 2.0, width, kit.body(), &fields);
    top = rule(&mut page, top);

    let body = kit.body();
    for line in &doc.lines {
        top = stack(&mut page, SIDE, top, width, body, &[&line.description]);
        let each = format!("  {} x {}", line.qty, doc.amount(line.unit));
        let y = baseline(top, body);
        page.text(SIDE, y, body, &each);
        page.text_right(right, y, body, &doc.amount(line.amount));
        top += line_height(body);
    }
    top = rule(&mut page, top);
    for total in &doc.totals {
        let (style, amount) = if total.strong {
            (kit.bold().size(11.0), doc.money(total.cents))
        } else {
            (body, doc.amount(total.cents))
        };
        let label = fit(style, &total.label, width - style.width(&amount) - 8.0);
        let y = baseline(top, style);
        page.text(SIDE, y, label, &total.label);
        page.text_right(right, y, style, &amount);
        top += line_height(style);
    }
    top = rule(&mut page, top);
    let mut after = vec![l.paid_by.clone()];
    after.extend(doc.in_words.clone());
    after.push(l.thanks.clone());
    let after: Vec<String> = after
        .iter()
        .flat_map(|line| wrap(body, line, width))
        .collect();
    top = stack_center(&mut page, mid, top, width, body, &after);
    page.height = top + 16.0;
    vec![page]
}
