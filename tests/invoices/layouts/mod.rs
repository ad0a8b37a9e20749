//! Where an invoice's content goes on the page: nine layouts seen in the wild, from a classic
//! letterhead to a till receipt, and what they share (`blocks`, `table`).

mod addressee_first;
pub mod blocks;
mod classic;
mod dense;
mod footer;
mod header_row;
mod items_table;
mod letterhead;
mod receipt;
pub mod sections;
pub mod table;
mod title_first;

use crate::render::Page;

use super::doc::Doc;
use super::rng::Rng;

/// A layout of the synthetic set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Letterhead top left, title and a key/value block on the right, addressee under the
    /// letterhead.
    Classic,
    /// Two-column letterhead (issuer left; contact, VAT, registration and bank right) over a
    /// rule, then addressee, title and fields.
    Letterhead,
    /// A window-envelope letter: the addressee first, under a one-line sender; the issuer top
    /// right; an info block beside the address; a greeting.
    AddresseeFirst,
    /// The title big at the top, the issuer small under it, the addressee beside.
    TitleFirst,
    /// Labels above values: a boxed header row (number, date, due, customer, total) with the
    /// values in the row below.
    HeaderRow,
    /// A ruled grid whose last rows are the subtotal, taxes and total, the total right-aligned
    /// in the amount column.
    ItemsTable,
    /// No letterhead: the issuer only in the footer, with registration, VAT, bank, e-mail and
    /// website.
    Footer,
    /// Small type, boxes, ship-to and bill-to, every date and number a form has, a rotated
    /// stamp and speckle noise.
    Dense,
    /// A till receipt on a narrow page.
    Receipt,
}

impl Layout {
    /// Every layout, in the order invoices cycle through them.
    pub const ALL: [Layout; 9] = [
        Layout::Classic,
        Layout::Letterhead,
        Layout::AddresseeFirst,
        Layout::TitleFirst,
        Layout::HeaderRow,
        Layout::ItemsTable,
        Layout::Footer,
        Layout::Dense,
        Layout::Receipt,
    ];

    /// The name in `expected.json` and in invoice ids.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Classic => "classic",
            Layout::Letterhead => "letterhead",
            Layout::AddresseeFirst => "addressee-first",
            Layout::TitleFirst => "title-first",
            Layout::HeaderRow => "header-row",
            Layout::ItemsTable => "items-table",
            Layout::Footer => "footer",
            Layout::Dense => "dense",
            Layout::Receipt => "receipt",
        }
    }

    /// Whether an invoice in this layout can run over two pages (a receipt cannot).
    pub fn can_run_over(self) -> bool {
        self != Layout::Receipt
    }

    /// How many lines an invoice in this layout has: enough to run over to a second page when
    /// `long`.
    pub fn items(self, rng: &mut Rng, long: bool) -> usize {
        match (self, long) {
            (_, true) => rng.range(50, 56) as usize,
            (Layout::Receipt, _) => rng.range(2, 7) as usize,
            _ => rng.range(1, 8) as usize,
        }
    }

    /// The pages of `doc` in this layout.
    pub fn render(self, doc: &Doc, rng: &mut Rng) -> Vec<Page> {
        match self {
            Layout::Classic => classic::render(doc, rng),
            Layout::Letterhead => letterhead::render(doc, rng),
            Layout::AddresseeFirst => addressee_first::render(doc, rng),
            Layout::TitleFirst => title_first::render(doc, rng),
            Layout::HeaderRow => header_row::render(doc, rng),
            Layout::ItemsTable => items_table::render(doc, rng),
            Layout::Footer => footer::render(doc, rng),
            Layout::Dense => dense::render(doc, rng),
            Layout::Receipt => receipt::render(doc, rng),
        }
    }
}

/// A blank page of the invoice's country: US Letter in the US, else A4.
pub fn blank(doc: &Doc) -> Page {
    if doc.locale.letter {
        Page::letter()
    } else {
        Page::a4()
    }
}
