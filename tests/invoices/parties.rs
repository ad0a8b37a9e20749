//! Made-up companies and the people at them: a name with and without its legal form, an
//! address, and the ids and contact lines an invoice prints for them.

use super::locales::{Locale, Names};
use super::rng::Rng;

/// A company as invoices print it.
#[derive(Clone, Debug)]
pub struct Party {
    /// The name with its legal form: "Van Dijkhorst Installatietechniek B.V.".
    pub name: String,
    /// The name without it: "Van Dijkhorst Installatietechniek" (the same for a sole trader).
    pub short: String,
    pub legal_form: &'static str,
    pub street: String,
    /// Postcode and city (and region where the country prints one).
    pub city_line: String,
    pub city: &'static str,
    /// The region's code (India's GST state code), empty elsewhere.
    pub region_code: &'static str,
    pub phone: String,
    pub email: String,
    pub web: String,
    pub vat: String,
    pub registration: String,
    pub bank: String,
    /// Someone who works there: the addressee of an invoice, or the manager on a letterhead.
    pub person: String,
}

impl Party {
    /// A company of this locale whose name shares no word with `avoid`'s.
    pub fn draw(rng: &mut Rng, locale: &Locale, avoid: Option<&Party>) -> Party {
        let names = &locale.names;
        let short = loop {
            let short = company(rng, names);
            let clash = avoid.is_some_and(|other| {
                short
                    .split(' ')
                    .any(|word| word.len() > 3 && other.short.contains(word))
            });
            if !clash {
                break short;
            }
        };
        let legal_form = rng.pick(names.forms);
        let name = match legal_form {
            "" => short.clone(),
            form => format!("{short} {form}"),
        };
        let city = rng.pick(names.cities);
        let fill = |rng: &mut Rng, template: &str| {
            rng.pattern(
                &template
                    .replace("{city}", city.name)
                    .replace("{region}", city.region)
                    .replace("{code}", city.code),
            )
        };
        let postcode = rng.pattern(names.postcode);
        let city_line = names
            .city_line
            .replace("{postcode}", &postcode)
            .replace("{city}", city.name)
            .replace("{region}", city.region);
        let street = rng
            .pick(names.streets)
            .replace("{n}", &rng.range(1, 180).to_string());
        let domain = domain(&short);
        let registration = rng.pick(names.registration);
        Party {
            name,
            short,
            legal_form,
            street: rng.pattern(&street),
            city_line,
            city: city.name,
            region_code: city.code,
            phone: fill(rng, names.phone),
            email: format!(
                "{}@{domain}",
                rng.pick(&["info", "billing", "accounts", "office"])
            ),
            web: format!("www.{domain}"),
            vat: fill(rng, names.vat),
            registration: fill(rng, registration),
            bank: fill(rng, names.bank),
            person: format!("{} {}", rng.pick(names.first), rng.pick(names.last)),
        }
    }
}

/// A company name without legal form, from the country's patterns.
fn company(rng: &mut Rng, names: &Names) -> String {
    let stem = rng.pick(names.stems);
    let stem2 = loop {
        let other = rng.pick(names.stems);
        if other != stem {
            break other;
        }
    };
    rng.pick(names.patterns)
        .replace("{stem2}", stem2)
        .replace("{stem}", stem)
        .replace("{trade}", rng.pick(names.trades))
}

/// The company's web domain under the reserved `.example` top-level domain: its first word,
/// in ASCII letters, `brouwerhof.example`.
fn domain(short: &str) -> String {
    let word: String = short
        .split([' ', '&'])
        .filter(|w| w.len() > 3)
        .take(2)
        .collect::<Vec<_>>()
        .join("-");
    let ascii: String = word
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            'a'..='z' | '-' => Some(c),
            'à'..='å' => Some('a'),
            'è'..='ë' => Some('e'),
            'ì'..='ï' => Some('i'),
            'ò'..='ö' => Some('o'),
            'ù'..='ü' => Some('u'),
            'ñ' => Some('n'),
            'ç' => Some('c'),
            'ß' => Some('s'),
            _ => None,
        })
        .collect();
    format!("{ascii}.example")
}
