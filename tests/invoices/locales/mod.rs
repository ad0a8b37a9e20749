//! The conventions of each country an invoice comes from: its language's invoice vocabulary
//! (several real synonyms for each label, drawn at random), how it prints amounts and dates,
//! its taxes and currency forms, and the parts that made-up companies, people and addresses are
//! built from. Every name and address here is invented; e-mail and web addresses use the
//! reserved `.example` domain, and phone numbers the ranges set aside for fiction where a
//! country has them.

mod dutch;
mod english;
mod french;
mod gb;
mod german;
mod india;
mod italian;
mod spanish;
mod us;

/// Every locale, in the order invoices cycle through them.
pub const ALL: [&Locale; 8] = [
    &us::US,
    &gb::GB,
    &german::DE,
    &dutch::NL,
    &french::FR,
    &spanish::ES,
    &italian::IT,
    &india::IN,
];

/// One country's conventions.
#[derive(Debug)]
pub struct Locale {
    /// The short name in invoice ids: `nl`, `en-us`.
    pub key: &'static str,
    /// ISO 639-1.
    pub language: &'static str,
    /// ISO 3166-1 alpha-2.
    pub country: &'static str,
    /// ISO 4217: what an invoice from here is in, whether it says so or not.
    pub currency: &'static str,
    /// US Letter paper rather than A4.
    pub letter: bool,
    /// The decimal separator of amounts.
    pub decimal: &'static str,
    /// Thousands separators seen here, one drawn per invoice (`""`: none).
    pub groups: &'static [&'static str],
    /// India's grouping: 1,23,456.00.
    pub lakh: bool,
    /// How an amount shows its currency, `{n}` the number: `{n} €`, `EUR {n}`, `₹{n}`.
    pub money: &'static [&'static str],
    /// Date templates (see `format::date`), one drawn per invoice.
    pub dates: &'static [&'static str],
    pub months: [&'static str; 12],
    pub months_short: [&'static str; 12],
    pub tax: Tax,
    /// A withholding on professional services (Spain's IRPF, Italy's ritenuta d'acconto) in
    /// basis points, that some invoices deduct from the total; 0 where there is none.
    pub withholding: u32,
    /// Templates of invoice numbers, customer numbers and order numbers: `#` a digit, `%` a
    /// digit but 0, `@` a capital letter, `{yyyy}`/`{yy}` the invoice's year.
    pub invoice_ids: &'static [&'static str],
    pub customer_ids: &'static [&'static str],
    pub order_ids: &'static [&'static str],
    /// What is sold: description and the range of a unit price, in whole currency units.
    pub items: &'static [(&'static str, u32, u32)],
    pub words: Words,
    pub names: Names,
}

/// A country's sales taxes, rates in basis points, one drawn per invoice.
#[derive(Debug)]
pub enum Tax {
    /// Value-added tax on the net amount.
    Vat(&'static [u32]),
    /// US sales tax (0: none charged).
    Sales(&'static [u32]),
    /// India's GST: CGST and SGST at half the rate each within a state, IGST between states.
    Gst(&'static [u32]),
}

/// A language's invoice vocabulary: synonyms of each label, drawn once per invoice. `{rate}`
/// is a tax rate, `{name}` a tax's name (CGST), `{days}` the payment term, `{n}`/`{of}`/
/// `{prev}`/`{next}` page numbers, `{words}` an amount in words, `{capital}` share capital.
#[derive(Debug)]
pub struct Words {
    pub title: &'static [&'static str],
    pub number: &'static [&'static str],
    pub date: &'static [&'static str],
    pub due: &'static [&'static str],
    pub order_date: &'static [&'static str],
    pub delivery: &'static [&'static str],
    pub customer_no: &'static [&'static str],
    pub order_no: &'static [&'static str],
    pub bill_to: &'static [&'static str],
    pub ship_to: &'static [&'static str],
    pub attention: &'static [&'static str],
    pub from: &'static [&'static str],
    pub subtotal: &'static [&'static str],
    pub tax: &'static [&'static str],
    pub withholding: &'static [&'static str],
    /// The total before a withholding, where a "to pay" line follows it.
    pub gross: &'static [&'static str],
    /// The amount to pay after a withholding.
    pub to_pay: &'static [&'static str],
    pub total: &'static [&'static str],
    pub round_off: &'static [&'static str],
    pub in_words: &'static [&'static str],
    pub description: &'static [&'static str],
    pub qty: &'static [&'static str],
    pub unit_price: &'static [&'static str],
    pub amount: &'static [&'static str],
    pub position: &'static [&'static str],
    pub page: &'static str,
    pub carried: &'static [&'static str],
    pub brought: &'static [&'static str],
    pub continued: &'static [&'static str],
    pub terms: &'static [&'static str],
    pub thanks: &'static [&'static str],
    /// Legal small print some countries require (France's recovery fee).
    pub legal: &'static [&'static str],
    pub stamp: &'static [&'static str],
    pub phone: &'static [&'static str],
    pub email: &'static [&'static str],
    pub web: &'static [&'static str],
    pub vat_id: &'static [&'static str],
    pub bank: &'static [&'static str],
    pub manager: &'static [&'static str],
    pub capital: &'static [&'static str],
    pub receipt_title: &'static [&'static str],
    pub paid_by: &'static [&'static str],
    pub greeting: &'static [&'static str],
    pub intro: &'static [&'static str],
    /// A line above the title some countries print (India's "ORIGINAL FOR RECIPIENT").
    pub copy_note: &'static [&'static str],
}

/// The parts of made-up companies, people and addresses of a country.
#[derive(Debug)]
pub struct Names {
    /// Company names: `{stem}` and `{trade}` from the lists below.
    pub patterns: &'static [&'static str],
    pub stems: &'static [&'static str],
    pub trades: &'static [&'static str],
    /// Legal forms (`""`: a sole trader, printed without one).
    pub forms: &'static [&'static str],
    pub first: &'static [&'static str],
    pub last: &'static [&'static str],
    /// Street lines, `{n}` a house number.
    pub streets: &'static [&'static str],
    pub cities: &'static [City],
    /// The line under the street: `{postcode}`, `{city}`, `{region}`.
    pub city_line: &'static str,
    pub postcode: &'static str,
    pub phone: &'static str,
    /// The VAT (or tax) id; `{code}` is the region's code (India's GSTIN begins with it).
    pub vat: &'static str,
    /// Company registration lines; `{city}` the registry's city.
    pub registration: &'static [&'static str],
    /// Bank account line, after the bank label.
    pub bank: &'static str,
}

/// A city, its region (US state, Italian province, Indian state) and that region's code.
#[derive(Debug, Clone, Copy)]
pub struct City {
    pub name: &'static str,
    pub region: &'static str,
    pub code: &'static str,
}

/// A city without a region.
pub const fn city(name: &'static str) -> City {
    City {
        name,
        region: "",
        code: "",
    }
}
