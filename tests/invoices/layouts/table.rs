//! The items table: a header, one row a line, and page breaks with a carried-forward sum when
//! the rows do not fit (the invoice then goes on over two pages, its totals on the last).

use crate::render::Page;

use super::super::doc::Doc;
use super::super::labels::pages;
use super::blocks::{fit, Kit};

/// How an items table is drawn, and where.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    pub left: f32,
    pub right: f32,
    pub kit: Kit,
    /// A full grid: a rule under every row and between the columns.
    pub ruled: bool,
    /// A grey band behind the header.
    pub shade: bool,
    /// A position column before the description.
    pub position: bool,
    /// The lowest a row may reach on a page.
    pub bottom: f32,
}

/// The x positions of the columns: left edges of position and description, right edges of
/// the numbers.
#[derive(Clone, Copy, Debug)]
pub struct Columns {
    pub position: f32,
    pub description: f32,
    pub description_width: f32,
    pub qty: f32,
    pub unit: f32,
    pub amount: f32,
}

impl Table {
    /// The columns of this table.
    pub fn columns(&self) -> Columns {
        let amount = self.right - 5.0;
        let description = self.left + if self.position { 32.0 } else { 5.0 };
        let qty = self.right - 180.0;
        Columns {
            position: self.left + 5.0,
            description,
            description_width: qty - 45.0 - description,
            qty,
            unit: self.right - 95.0,
            amount,
        }
    }

    /// The height of a row.
    pub fn row(&self) -> f32 {
        self.kit.leading()
    }

    /// Draws the table from `top` on the last of `pages`. When a row would pass `bottom`, the
    /// page ends with the sum so far and a note, and a new page (begun by `continued`, which
    /// returns where the table goes on) repeats the header after a brought-forward row.
    /// Returns the top below the last row, on the last page.
    pub fn draw(
        &self,
        doc: &Doc,
        pages_so_far: &mut Vec<Page>,
        top: f32,
        continued: &dyn Fn(&mut Page) -> f32,
    ) -> f32 {
        let l = &doc.labels;
        let row = self.row();
        let mut top = self.header(pages_so_far.last_mut().unwrap(), doc, top);
        let mut segment = top;
        let mut sum = 0;
        for (i, line) in doc.lines.iter().enumerate() {
            if top + 3.0 * row > self.bottom {
                let number = pages_so_far.len();
                let page = pages_so_far.last_mut().unwrap();
                top = self.sum_row(page, doc, top, &l.carried, sum);
                self.verticals(page, segment, top - row);
                let note = pages(&l.continued, number);
                let style = self.kit.small();
                page.text(self.left, top + row * 0.7, style, &note);
                let mut next = Page::new(page.width, page.height);
                let begin = continued(&mut next);
                pages_so_far.push(next);
                let brought = pages(&l.brought, number);
                let page = pages_so_far.last_mut().unwrap();
                top = self.header(page, doc, begin);
                segment = top;
                top = self.sum_row(page, doc, top, &brought, sum);
            }
            let page = pages_so_far.last_mut().unwrap();
            top = self.line_row(page, doc, top, i, line);
            sum += line.amount;
        }
        self.verticals(pages_so_far.last_mut().unwrap(), segment, top);
        top
    }

    /// The header row; returns the top below it.
    fn header(&self, page: &mut Page, doc: &Doc, top: f32) -> f32 {
        let (l, c, row) = (&doc.labels, self.columns(), self.row());
        let width = self.right - self.left;
        if self.shade {
            page.fill(self.left, top, width, row, 0.86);
        }
        if self.ruled {
            page.frame(self.left, top, width, row, 0.6);
        } else {
            page.line(self.left, top + row, self.right, top + row, 0.8);
        }
        let style = self.kit.bold().size(self.kit.size * 0.95);
        let y = self.text_y(top);
        if self.position {
            page.text(c.position, y, fit(style, &l.position, 24.0), &l.position);
        }
        let d = fit(style, &l.description, c.description_width);
        page.text(c.description, y, d, &l.description);
        page.text_right(c.qty, y, fit(style, &l.qty, 40.0), &l.qty);
        page.text_right(c.unit, y, fit(style, &l.unit_price, 78.0), &l.unit_price);
        page.text_right(c.amount, y, fit(style, &l.amount, 78.0), &l.amount);
        top + row
    }

    /// A row of the items.
    fn line_row(
        &self,
        page: &mut Page,
        doc: &Doc,
        top: f32,
        i: usize,
        line: &super::super::doc::Line,
    ) -> f32 {
        let (c, row, body) = (self.columns(), self.row(), self.kit.body());
        let y = self.text_y(top);
        if self.position {
            page.text(c.position, y, body, &(i + 1).to_string());
        }
        let d = fit(body, &line.description, c.description_width);
        page.text(c.description, y, d, &line.description);
        page.text_right(c.qty, y, body, &line.qty.to_string());
        page.text_right(c.unit, y, body, &doc.amount(line.unit));
        page.text_right(c.amount, y, body, &doc.amount(line.amount));
        if self.ruled {
            page.line(self.left, top + row, self.right, top + row, 0.3);
        }
        top + row
    }

    /// A row of the sum so far (carried forward, brought forward).
    fn sum_row(&self, page: &mut Page, doc: &Doc, top: f32, label: &str, sum: i64) -> f32 {
        let (c, row, bold) = (self.columns(), self.row(), self.kit.bold());
        let y = self.text_y(top);
        page.text(
            c.description,
            y,
            fit(bold, label, c.description_width),
            label,
        );
        page.text_right(c.amount, y, bold, &doc.amount(sum));
        page.line(self.left, top + row, self.right, top + row, 0.6);
        top + row
    }

    /// The rules between the columns of a grid, from `from` to `to`.
    fn verticals(&self, page: &mut Page, from: f32, to: f32) {
        if !self.ruled || to <= from {
            return;
        }
        let c = self.columns();
        let mut xs = vec![
            self.left,
            c.qty - 42.0,
            c.qty + 5.0,
            c.unit + 5.0,
            self.right,
        ];
        if self.position {
            xs.push(c.description - 5.0);
        }
        for x in xs {
            page.line(x, from, x, to, 0.4);
        }
    }

    /// The baseline of a row's text, centred in the row.
    fn text_y(&self, top: f32) -> f32 {
        top + self.row() * 0.5 + self.kit.size * 0.3
    }
}
