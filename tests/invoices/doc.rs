//! What one invoice says, before any layout: issuer and customer, numbers, dates, lines and
//! totals, and how this invoice prints amounts and dates. A layout only places it.

use super::date::Date;
use super::format;
use super::labels::Labels;
use super::locales::{Locale, Tax};
use super::parties::Party;
use super::rng::Rng;

/// One line of goods or services.
#[derive(Clone, Debug)]
pub struct Line {
    pub description: String,
    pub qty: u32,
    /// Unit price and line amount, in cents.
    pub unit: i64,
    pub amount: i64,
}

/// A line of the totals block: subtotal, a tax, a withholding, a round-off, the total.
#[derive(Clone, Debug)]
pub struct Total {
    pub label: String,
    pub cents: i64,
    /// The amount to pay (the last line), set in bold.
    pub strong: bool,
}

/// An invoice's content.
#[derive(Clone, Debug)]
pub struct Doc {
    pub locale: &'static Locale,
    pub labels: Labels,
    pub issuer: Party,
    pub customer: Party,
    pub number: String,
    pub customer_no: String,
    pub order_no: String,
    pub date: Date,
    pub due: Date,
    pub order_date: Date,
    pub delivery: Date,
    pub lines: Vec<Line>,
    /// Subtotal first, the amount to pay last.
    pub totals: Vec<Total>,
    /// India's "amount in words" line.
    pub in_words: Option<String>,
    /// Share capital line (France, Italy), with the company's legal form.
    pub capital: Option<String>,
    /// How amounts show the currency (`{n} €`); `None` when the currency is only implied.
    money: Option<&'static str>,
    date_form: &'static str,
    group: &'static str,
}

/// The first and last invoice dates drawn.
const FIRST_DAY: Date = Date {
    year: 2025,
    month: 1,
    day: 6,
};
const LAST_DAY: Date = Date {
    year: 2026,
    month: 11,
    day: 20,
};

impl Doc {
    /// A new invoice from `locale` with `items` lines.
    pub fn draw(rng: &mut Rng, locale: &'static Locale, items: usize) -> Doc {
        let issuer = Party::draw(rng, locale, None);
        let customer = Party::draw(rng, locale, Some(&issuer));
        let days = rng.pick(&[14, 14, 30, 30, 30, 10, 45, 60]);
        let labels = Labels::draw(rng, &locale.words, days);
        let date = Date::from_days(rng.range(FIRST_DAY.days(), LAST_DAY.days()));
        let id = |rng: &mut Rng, templates: &[&str]| {
            let template = rng
                .pick(templates)
                .replace("{yyyy}", &date.year.to_string())
                .replace("{yy}", &format!("{:02}", date.year % 100))
                .replace("{mm}", &format!("{:02}", date.month));
            rng.pattern(&template)
        };
        let number = id(rng, locale.invoice_ids);
        let customer_no = id(rng, locale.customer_ids);
        let order_no = id(rng, locale.order_ids);
        // Each catalogue item once before any comes again.
        let mut order: Vec<usize> = (0..locale.items.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let few = items <= 8;
        let lines = (0..items)
            .map(|i| line(rng, locale.items[order[i % order.len()]], few))
            .collect();
        let money = (!rng.chance(0.15)).then(|| rng.pick(locale.money));
        let mut doc = Doc {
            locale,
            labels,
            number,
            customer_no,
            order_no,
            due: date.plus(days),
            order_date: date.plus(-rng.range(14, 45)),
            delivery: date.plus(-rng.range(1, 10)),
            date,
            lines,
            totals: Vec::new(),
            in_words: None,
            capital: None,
            money,
            date_form: rng.pick(locale.dates),
            group: rng.pick(locale.groups),
            issuer,
            customer,
        };
        doc.totals = doc.draw_totals(rng);
        let words = &locale.words;
        if !words.in_words.is_empty() {
            let (rupees, paise) = (doc.total() / 100, doc.total() % 100);
            let mut said = format::indian_words(rupees as u64);
            if paise > 0 {
                said = format!("{said} and {} Paise", format::indian_words(paise as u64));
            }
            doc.in_words = Some(rng.pick(words.in_words).replace("{words}", &said));
        }
        if !words.capital.is_empty() && !doc.issuer.legal_form.is_empty() {
            let capital = 100 * 1000 * rng.pick(&[10, 20, 50, 100, 250]);
            doc.capital = Some(
                rng.pick(words.capital)
                    .replace("{form}", doc.issuer.legal_form)
                    .replace("{capital}", &doc.amount(capital).replace(",00", "")),
            );
        }
        doc
    }

    /// The subtotal, taxes, withholding or round-off, and the amount to pay.
    fn draw_totals(&self, rng: &mut Rng) -> Vec<Total> {
        let locale = self.locale;
        let words = &locale.words;
        let net: i64 = self.lines.iter().map(|l| l.amount).sum();
        let line = |label: String, cents: i64| Total {
            label,
            cents,
            strong: false,
        };
        let share = |bp: u32| (net * i64::from(bp) + 5_000).div_euclid(10_000);
        let tax_label = |rng: &mut Rng, name: &str, bp: u32| {
            rng.pick(words.tax)
                .replace("{name}", name)
                .replace("{rate}", &format::rate(bp, locale.decimal))
        };
        let mut totals = vec![line(rng.pick(words.subtotal).to_string(), net)];
        match locale.tax {
            Tax::Vat(rates) => {
                let bp = rng.pick(rates);
                totals.push(line(tax_label(rng, "", bp), share(bp)));
            }
            Tax::Sales(rates) => match rng.pick(rates) {
                0 => {}
                bp => totals.push(line(tax_label(rng, "", bp), share(bp))),
            },
            Tax::Gst(rates) => {
                let bp = rng.pick(rates);
                if self.issuer.region_code == self.customer.region_code {
                    for name in ["CGST", "SGST"] {
                        totals.push(line(tax_label(rng, name, bp / 2), share(bp / 2)));
                    }
                } else {
                    totals.push(line(tax_label(rng, "IGST", bp), share(bp)));
                }
            }
        }
        let mut total: i64 = totals.iter().map(|t| t.cents).sum();
        let mut last = rng.pick(words.total).to_string();
        if locale.withholding > 0 && rng.chance(0.3) {
            if !words.gross.is_empty() {
                totals.push(line(rng.pick(words.gross).to_string(), total));
            }
            let held = share(locale.withholding);
            let label = rng
                .pick(words.withholding)
                .replace("{rate}", &format::rate(locale.withholding, locale.decimal));
            totals.push(line(label, -held));
            total -= held;
            last = rng.pick(words.to_pay).to_string();
        }
        if !words.round_off.is_empty() && total % 100 != 0 && rng.chance(0.6) {
            let rounded = (total + 50).div_euclid(100) * 100;
            totals.push(line(rng.pick(words.round_off).to_string(), rounded - total));
            total = rounded;
        }
        totals.push(Total {
            label: last,
            cents: total,
            strong: true,
        });
        totals
    }

    /// The amount to pay, in cents.
    pub fn total(&self) -> i64 {
        self.totals.last().map_or(0, |t| t.cents)
    }

    /// An amount as a plain number in the locale's separators: `1.234,56`.
    pub fn amount(&self, cents: i64) -> String {
        format::number(cents, self.locale.decimal, self.group, self.locale.lakh)
    }

    /// An amount with the currency as this invoice shows it (`1.234,56 €`), or plain when the
    /// currency is only implied.
    pub fn money(&self, cents: i64) -> String {
        match self.money {
            Some(form) => form.replace("{n}", &self.amount(cents)),
            None => self.amount(cents),
        }
    }

    /// The currency sign or code this invoice prints (`€`, `Rs.`, `EUR`), if any.
    pub fn currency_shown(&self) -> Option<String> {
        self.money
            .map(|form| form.replace("{n}", "").trim().to_string())
    }

    /// A date in this invoice's format.
    pub fn date(&self, date: Date) -> String {
        format::date(date, self.date_form, self.locale)
    }

    /// The label of a field before its value.
    pub fn key(&self, label: &str) -> String {
        self.labels.key(label)
    }
}

/// A line of goods or services: a catalogue item, a quantity (larger for cheap items, smaller
/// on a short invoice), and a unit price in the item's range.
fn line(rng: &mut Rng, (description, low, high): (&str, u32, u32), few: bool) -> Line {
    let qty = match (high < 100, few) {
        (true, _) => rng.range(2, 40),
        (false, true) => rng.pick(&[1, 1, 1, 2, 3, 4, 5]),
        (false, false) => rng.pick(&[1, 1, 1, 2, 3, 4, 5, 8, 10, 12]),
    } as u32;
    let whole = rng.range(i64::from(low), i64::from(high));
    let any = rng.range(1, 99);
    let cents = rng.pick(&[0, 0, 0, 50, 95, 99, any]);
    let unit = whole * 100 + cents;
    Line {
        description: description.to_string(),
        qty,
        unit,
        amount: unit * i64::from(qty),
    }
}
