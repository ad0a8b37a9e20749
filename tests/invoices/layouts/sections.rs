//! The parts of an invoice that layouts share: address blocks, contact and legal lines, the
//! totals block, the items with the totals and what ends an invoice under them, the footer,
//! page numbers, and how a page break goes.

use crate::render::{Font, Page, Style};

use super::super::doc::Doc;
use super::super::parties::Party;
use super::blocks::{baseline, fit, line_height, stack, stack_center, wrap, Kit, MARGIN};
use super::table::Table;

/// An address block: an optional label, the company in bold, an optional "attention" line
/// with the person, the street and the city. Returns the top below.
#[allow(clippy::too_many_arguments)]
pub fn address(
    page: &mut Page,
    x: f32,
    top: f32,
    width: f32,
    kit: Kit,
    label: Option<&str>,
    party: &Party,
    attention: Option<&str>,
) -> f32 {
    let mut top = top;
    if let Some(label) = label {
        top = stack(
            page,
            x,
            top,
            width,
            kit.bold().size(kit.size * 0.9),
            &[label.to_string()],
        );
    }
    top = stack(page, x, top, width, kit.bold(), &[&party.name]);
    let mut lines = Vec::new();
    if let Some(attention) = attention {
        lines.push(format!("{attention} {}", party.person));
    }
    lines.push(party.street.clone());
    lines.push(party.city_line.clone());
    stack(page, x, top, width, kit.body(), &lines)
}

/// Phone, e-mail and web of a party, labelled as the invoice labels them.
pub fn contacts(doc: &Doc, party: &Party) -> Vec<String> {
    let l = &doc.labels;
    vec![
        format!("{} {}", doc.key(&l.phone), party.phone),
        format!("{} {}", doc.key(&l.email), party.email),
        format!("{} {}", doc.key(&l.web), party.web),
    ]
}

/// The issuer's legal lines: VAT id, registration, bank account, and the share capital or
/// manager where the country prints them.
pub fn legal(doc: &Doc) -> Vec<String> {
    let (l, p) = (&doc.labels, &doc.issuer);
    let mut lines = vec![
        format!("{} {}", doc.key(&l.vat_id), p.vat),
        p.registration.clone(),
        format!("{} {}", l.bank, p.bank),
    ];
    if let Some(capital) = &doc.capital {
        lines.push(capital.clone());
    }
    if let Some(manager) = &l.manager {
        lines.push(format!("{manager}: {}", p.person));
    }
    lines
}

/// The totals block: each line's label from x, its amount right-aligned at `right`; the
/// amount to pay in bold with a rule above it. `currency` puts the currency on every line,
/// else only on the amount to pay. Returns the top below.
#[allow(clippy::too_many_arguments)]
pub fn totals(
    page: &mut Page,
    x: f32,
    right: f32,
    top: f32,
    kit: Kit,
    doc: &Doc,
    currency: bool,
) -> f32 {
    let mut top = top;
    for total in &doc.totals {
        let (style, amount) = if total.strong {
            page.line(x, top + 1.0, right, top + 1.0, 0.6);
            top += 3.0;
            (kit.bold().size(kit.size + 1.0), doc.money(total.cents))
        } else if currency {
            (kit.body(), doc.money(total.cents))
        } else {
            (kit.body(), doc.amount(total.cents))
        };
        let amount_w = style.width(&amount);
        let label = fit(style, &total.label, right - x - amount_w - 10.0);
        let y = baseline(top, style);
        page.text(x, y, label, &total.label);
        page.text_right(right, y, style, &amount);
        top += line_height(style);
    }
    top
}

/// The due date, then the closing lines, for layouts that give the due date after the totals.
pub fn due_and_closing(doc: &Doc) -> Vec<String> {
    let mut lines = vec![format!(
        "{} {}",
        doc.key(&doc.labels.due),
        doc.date(doc.due)
    )];
    lines.extend(closing(doc));
    lines
}

/// "Page n of m" at the foot of every page, when there is more than one.
pub fn page_numbers(pages: &mut [Page], doc: &Doc, kit: Kit) {
    let of = pages.len();
    if of < 2 {
        return;
    }
    for (i, page) in pages.iter_mut().enumerate() {
        let label = doc.labels.page(i + 1, of);
        let y = page.height - 22.0;
        page.text_right(page.width - MARGIN, y, kit.small(), &label);
    }
}

/// The lines after the totals: the amount in words (India), payment terms, legal notes
/// (France), thanks.
pub fn closing(doc: &Doc) -> Vec<String> {
    let l = &doc.labels;
    let mut lines: Vec<String> = doc.in_words.iter().cloned().collect();
    lines.push(l.terms.clone());
    lines.extend(l.legal.iter().cloned());
    lines.push(l.thanks.clone());
    lines
}

/// The issuer in three columns at the foot of every page: name and address; contacts and
/// VAT id; bank, registration and the rest (wrapped). Returns the footer's top, from the
/// bottom of the page, so that a layout can keep its table above it.
pub struct FooterColumns {
    columns: [Vec<String>; 3],
    style: Style,
    pub height: f32,
}

impl FooterColumns {
    pub fn new(doc: &Doc, kit: Kit, page_width: f32) -> FooterColumns {
        let style = kit.small();
        let width = (page_width - 2.0 * MARGIN) / 3.0 - 8.0;
        let p = &doc.issuer;
        let mut first = vec![p.name.clone(), p.street.clone(), p.city_line.clone()];
        let mut second = contacts(doc, p);
        let mut third = Vec::new();
        let mut rest = legal(doc).into_iter();
        second.extend(rest.next());
        for line in rest {
            third.extend(wrap(style, &line, width));
        }
        if third.len() > 5 {
            first.extend(third.drain(5..));
        }
        let rows = first.len().max(second.len()).max(third.len());
        FooterColumns {
            columns: [first, second, third],
            style,
            height: rows as f32 * line_height(style) + 40.0,
        }
    }

    /// Draws the columns on every page, with a rule above them.
    pub fn draw(&self, pages: &mut [Page]) {
        for page in pages.iter_mut() {
            let top = page.height - self.height + 8.0;
            let width = (page.width - 2.0 * MARGIN) / 3.0;
            page.line(MARGIN, top - 5.0, page.width - MARGIN, top - 5.0, 0.5);
            for (i, column) in self.columns.iter().enumerate() {
                let x = MARGIN + i as f32 * width;
                let (first, rest) = column.split_first().unwrap();
                // The issuer's name heads the first column, in black bold.
                let head = if i == 0 {
                    Font::HelveticaBold.at(self.style.size)
                } else {
                    self.style
                };
                let below = stack(page, x, top, width - 8.0, head, &[&first]);
                stack(page, x, below, width - 8.0, self.style, rest);
            }
        }
    }
}

/// How a continuation page begins: the title, number and date in small type. Returns where
/// the table goes on.
pub fn continuation(doc: &Doc, kit: Kit) -> impl Fn(&mut Page) -> f32 + '_ {
    move |page: &mut Page| {
        let l = &doc.labels;
        let line = format!(
            "{} - {} {} - {} {}",
            l.title,
            doc.key(&l.number),
            doc.number,
            doc.key(&l.date),
            doc.date(doc.date)
        );
        let style = fit(kit.body(), &line, page.width - 2.0 * MARGIN);
        page.text(MARGIN, baseline(MARGIN, style), style, &line);
        MARGIN + line_height(style) + 16.0
    }
}

/// `top`, or the top of a new page when `need` points from `top` would pass `bottom`.
pub fn room(pages: &mut Vec<Page>, doc: &Doc, kit: Kit, top: f32, need: f32, bottom: f32) -> f32 {
    if top + need <= bottom {
        return top;
    }
    let last = pages.last().unwrap();
    let mut page = Page::new(last.width, last.height);
    let top = continuation(doc, kit)(&mut page);
    pages.push(page);
    top
}

/// The rest of an invoice from `top` of its first `page`: the items `table`, then the totals
/// block from x to the table's amount column (`currency` as for `totals`) with `lines` under
/// it, both on a new page if they would pass the table's bottom. Returns the pages.
pub fn items_and_totals(
    page: Page,
    doc: &Doc,
    table: &Table,
    top: f32,
    x: f32,
    currency: bool,
    lines: &[String],
) -> Vec<Page> {
    let kit = table.kit;
    let mut pages = vec![page];
    let top = table.draw(doc, &mut pages, top, &continuation(doc, kit));
    let need = (doc.totals.len() + lines.len() + 2) as f32 * kit.leading();
    let top = room(&mut pages, doc, kit, top + 10.0, need, table.bottom);
    let page = pages.last_mut().unwrap();
    let top = totals(page, x, table.columns().amount, top, kit, doc, currency);
    let width = table.right - table.left;
    stack(page, table.left, top + 14.0, width, kit.body(), lines);
    pages
}

/// The issuer's legal lines, joined and centred small above the page number of every page.
pub fn legal_footer(pages: &mut [Page], doc: &Doc, kit: Kit) {
    let lines = legal(doc);
    let half = lines.len().div_ceil(2);
    let rows = [lines[..half].join("  ·  "), lines[half..].join("  ·  ")];
    for page in pages.iter_mut() {
        let width = page.width - 2.0 * MARGIN;
        let top = page.height - 62.0;
        page.line(MARGIN, top - 4.0, page.width - MARGIN, top - 4.0, 0.4);
        stack_center(page, page.width / 2.0, top, width, kit.small(), &rows);
    }
}
