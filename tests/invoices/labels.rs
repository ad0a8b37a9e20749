//! The words one invoice uses: a synonym of each label drawn from its language's vocabulary,
//! once, so that an invoice is consistent with itself and the set varies.

use super::locales::Words;
use super::rng::Rng;

/// One invoice's labels and fixed phrases.
#[derive(Clone, Debug)]
pub struct Labels {
    pub title: String,
    pub number: String,
    pub date: String,
    pub due: String,
    pub order_date: String,
    pub delivery: String,
    pub customer_no: String,
    pub order_no: String,
    pub bill_to: String,
    pub ship_to: String,
    pub attention: String,
    pub from: String,
    pub description: String,
    pub qty: String,
    pub unit_price: String,
    pub amount: String,
    pub position: String,
    pub carried: String,
    pub brought: String,
    pub continued: String,
    pub terms: String,
    pub thanks: String,
    pub legal: Vec<String>,
    pub stamp: String,
    pub phone: String,
    pub email: String,
    pub web: String,
    pub vat_id: String,
    pub bank: String,
    pub manager: Option<String>,
    pub receipt_title: String,
    pub paid_by: String,
    pub greeting: String,
    pub intro: String,
    pub copy_note: Option<String>,
    page: &'static str,
    /// Whether labels end in a colon ("Invoice No:") on this invoice.
    colon: bool,
}

impl Labels {
    /// Draws one of each from `words`; `days` is the payment term.
    pub fn draw(rng: &mut Rng, words: &Words, days: i64) -> Labels {
        let mut one = |list: &[&str]| rng.pick(list).to_string();
        let title = one(words.title);
        let number = one(words.number);
        let date = one(words.date);
        let due = one(words.due);
        let order_date = one(words.order_date);
        let delivery = one(words.delivery);
        let customer_no = one(words.customer_no);
        let order_no = one(words.order_no);
        let bill_to = one(words.bill_to);
        let ship_to = one(words.ship_to);
        let attention = one(words.attention);
        let from = one(words.from);
        let description = one(words.description);
        let qty = one(words.qty);
        let unit_price = one(words.unit_price);
        let amount = one(words.amount);
        let position = one(words.position);
        let carried = one(words.carried);
        let brought = one(words.brought);
        let continued = one(words.continued);
        let terms = one(words.terms).replace("{days}", &days.to_string());
        let thanks = one(words.thanks);
        let stamp = one(words.stamp);
        let phone = one(words.phone);
        let email = one(words.email);
        let web = one(words.web);
        let vat_id = one(words.vat_id);
        let bank = one(words.bank);
        let receipt_title = one(words.receipt_title);
        let paid_by = rng.pick(words.paid_by);
        let paid_by = rng.pattern(paid_by);
        let greeting = rng.pick(words.greeting).to_string();
        let intro = rng.pick(words.intro).to_string();
        let optional =
            |rng: &mut Rng, list: &[&str]| (!list.is_empty()).then(|| rng.pick(list).to_string());
        let manager = optional(rng, words.manager);
        let copy_note = optional(rng, words.copy_note);
        Labels {
            title,
            number,
            date,
            due,
            order_date,
            delivery,
            customer_no,
            order_no,
            bill_to,
            ship_to,
            attention,
            from,
            description,
            qty,
            unit_price,
            amount,
            position,
            carried,
            brought,
            continued,
            terms,
            thanks,
            legal: words.legal.iter().map(|s| s.to_string()).collect(),
            stamp,
            phone,
            email,
            web,
            vat_id,
            bank,
            manager,
            receipt_title,
            paid_by,
            greeting,
            intro,
            copy_note,
            page: words.page,
            colon: rng.chance(0.6),
        }
    }

    /// `label` as this invoice sets a label before its value: with a colon, or without.
    pub fn key(&self, label: &str) -> String {
        if self.colon && !label.ends_with(':') {
            format!("{label}:")
        } else {
            label.to_string()
        }
    }

    /// "Page 1 of 2" in the invoice's language.
    pub fn page(&self, n: usize, of: usize) -> String {
        self.page
            .replace("{n}", &n.to_string())
            .replace("{of}", &of.to_string())
    }
}

/// `template` with the page numbers around a page break filled in.
pub fn pages(template: &str, prev: usize) -> String {
    template
        .replace("{prev}", &prev.to_string())
        .replace("{next}", &(prev + 1).to_string())
}
