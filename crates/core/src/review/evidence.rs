//! Where a task's fields were read: for each extracted field, the box on its page that a review
//! page outlines over the document ([`outlines`]). Pure: the OCR and the fields in, boxes out.
//!
//! A field records its page and its line's index within that page (`FieldSource::Extracted`);
//! its value is normalized (a date `2024-03-05` read as `05/03/2024`, an amount `1234.50` as
//! `1.234,50`), so the words that make it up are found again by comparing forms rather than
//! text: case and punctuation do not count, a date is its digits in any of the orders a
//! document prints them (or its day and year around a month name), an amount its digits, a
//! currency also its symbol. The box is the union of the fewest adjacent words on the line that
//! spell the value; when none do, the whole line's box; when the page or the line is not in the
//! OCR, or a reviewer set the value, no box.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{FieldSource, ReviewField};
use crate::model::fields::FieldName;
use crate::ocr::{BoundingBox, Line, OcrDocument, Word};

/// What a review page draws over a task's document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The document's pages, in order.
    pub pages: Vec<PageRef>,
    /// The box of each field that has one (a field set by a reviewer, or whose page or line is
    /// not in the OCR, is absent).
    pub fields: BTreeMap<FieldName, Outline>,
}

/// A page of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRef {
    /// 1-based page number.
    pub number: u32,
}

/// Where a field's value is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Outline {
    /// 1-based page number.
    pub page: u32,
    /// The value's box, in fractions of the page (0..=1 from the top-left corner).
    #[serde(rename = "box")]
    pub bbox: BoundingBox,
}

/// The pages of `ocr` and the box of each of `fields` on them (see the module docs).
pub fn outlines(fields: &BTreeMap<FieldName, ReviewField>, ocr: &OcrDocument) -> Evidence {
    let pages = ocr
        .pages
        .iter()
        .map(|p| PageRef { number: p.number })
        .collect();
    let fields = fields
        .iter()
        .filter_map(|(name, field)| {
            let FieldSource::Extracted { page, line } = field.source else {
                return None;
            };
            let line = ocr
                .pages
                .iter()
                .find(|p| p.number == page)?
                .lines
                .get(line)?;
            let bbox = value_box(*name, &field.value, line).unwrap_or(line.bbox);
            Some((
                *name,
                Outline {
                    page,
                    bbox: clamped(bbox),
                },
            ))
        })
        .collect();
    Evidence { pages, fields }
}

/// One form a value may be printed in.
enum Form {
    /// Letters and digits, lower-cased, nothing else.
    Text(String),
    /// Digits only.
    Digits(String),
    /// A word containing this symbol (a currency's `€`).
    Symbol(&'static str),
}

/// The union of the boxes of the fewest adjacent words of `line` that spell `value` in one of
/// its forms (tried most specific first); `None` when no words do.
fn value_box(name: FieldName, value: &str, line: &Line) -> Option<BoundingBox> {
    forms(name, value).into_iter().find_map(|form| {
        let words = match form {
            Form::Text(wanted) => fewest_words(&line.words, &wanted, text_key)?,
            Form::Digits(wanted) => fewest_words(&line.words, &wanted, digits)?,
            Form::Symbol(symbol) => {
                let i = line.words.iter().position(|w| w.text.contains(symbol))?;
                &line.words[i..=i]
            }
        };
        words.iter().map(|w| w.bbox).reduce(union)
    })
}

/// The shortest run of adjacent `words` whose keys (`key_of`) put together are `wanted`,
/// starting with a word that has one (the first such run among the shortest).
fn fewest_words<'a>(
    words: &'a [Word],
    wanted: &str,
    key_of: fn(&str) -> String,
) -> Option<&'a [Word]> {
    if wanted.is_empty() {
        return None;
    }
    let mut best: Option<&[Word]> = None;
    for start in 0..words.len() {
        if key_of(&words[start].text).is_empty() {
            continue;
        }
        let mut joined = String::new();
        for end in start..words.len() {
            joined.push_str(&key_of(&words[end].text));
            if joined.len() >= wanted.len() {
                if joined == wanted && best.is_none_or(|b| end + 1 - start < b.len()) {
                    best = Some(&words[start..=end]);
                }
                break;
            }
        }
    }
    best
}

/// The forms `value` of field `name` may be printed in, most specific first.
fn forms(name: FieldName, value: &str) -> Vec<Form> {
    let mut forms = vec![Form::Text(text_key(value))];
    match name {
        FieldName::InvoiceDate => forms.extend(date_forms(value)),
        FieldName::TotalAmount => {
            let d = digits(value);
            // A whole amount may be printed without its cents (`1234` for `1234.00`).
            if let Some(whole) = value.trim().strip_suffix(".00") {
                forms.push(Form::Digits(d.clone()));
                forms.push(Form::Digits(digits(whole)));
            } else {
                forms.push(Form::Digits(d));
            }
        }
        FieldName::Currency => {
            if let Some(symbol) = currency_symbol(value.trim()) {
                forms.push(Form::Symbol(symbol));
            }
        }
        FieldName::Issuer | FieldName::InvoiceNumber => {}
    }
    forms
}

/// An ISO date's digits in the orders documents print dates in (day first, month first, year
/// first; with or without leading zeros; a four- or two-digit year), then its day and year
/// alone (a month printed as a name between or around them). None for a value that is not an
/// ISO date.
fn date_forms(value: &str) -> Vec<Form> {
    let parts: Vec<&str> = value.trim().split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return vec![];
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if y.len() != 4 || m.len() != 2 || d.len() != 2 || ![y, m, d].iter().all(|s| all_digits(s)) {
        return vec![];
    }
    let unpadded = |s: &str| s.trim_start_matches('0').to_string();
    let days = [d.to_string(), unpadded(d)];
    let months = [m.to_string(), unpadded(m)];
    let years = [y.to_string(), y[2..].to_string()];
    let mut seen = Vec::new();
    for year in &years {
        for day in &days {
            for month in &months {
                seen.push(format!("{day}{month}{year}"));
                seen.push(format!("{month}{day}{year}"));
                seen.push(format!("{year}{month}{day}"));
            }
        }
    }
    for day in &days {
        seen.push(format!("{day}{y}"));
    }
    let mut forms = Vec::new();
    for s in seen {
        if !forms
            .iter()
            .any(|f: &Form| matches!(f, Form::Digits(d) if *d == s))
        {
            forms.push(Form::Digits(s));
        }
    }
    forms
}

/// The symbol documents print for a currency code, for the common ones.
fn currency_symbol(code: &str) -> Option<&'static str> {
    Some(match code {
        "EUR" => "€",
        "USD" => "$",
        "GBP" => "£",
        "JPY" => "¥",
        "INR" => "₹",
        _ => return None,
    })
}

/// Letters and digits of `s`, lower-cased.
fn text_key(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The ASCII digits of `s`.
fn digits(s: &str) -> String {
    s.chars().filter(char::is_ascii_digit).collect()
}

/// The smallest box holding both.
fn union(a: BoundingBox, b: BoundingBox) -> BoundingBox {
    let left = a.left.min(b.left);
    let top = a.top.min(b.top);
    let right = (a.left + a.width).max(b.left + b.width);
    let bottom = (a.top + a.height).max(b.top + b.height);
    BoundingBox {
        left,
        top,
        width: right - left,
        height: bottom - top,
    }
}

/// `b` cut to the page (an OCR box may reach a hair past an edge; a NaN becomes 0).
fn clamped(b: BoundingBox) -> BoundingBox {
    let unit = |x: f64| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    let within = |x: f64| (0.0..=1.0).contains(&x);
    if [b.left, b.top, b.left + b.width, b.top + b.height]
        .into_iter()
        .all(within)
    {
        return b;
    }
    let (left, top) = (unit(b.left), unit(b.top));
    let (right, bottom) = (unit(b.left + b.width), unit(b.top + b.height));
    BoundingBox {
        left,
        top,
        width: (right - left).max(0.0),
        height: (bottom - top).max(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ocr::Page;

    fn extracted(value: &str, page: u32, line: usize) -> ReviewField {
        ReviewField {
            value: value.into(),
            confidence: 0.9,
            source: FieldSource::Extracted { page, line },
        }
    }

    /// The box of `words` (0-based indexes) of line `line` of page 1 of `ocr`.
    fn words_box(ocr: &OcrDocument, line: usize, words: &[usize]) -> BoundingBox {
        let line = &ocr.pages[0].lines[line];
        words
            .iter()
            .map(|i| line.words[*i].bbox)
            .reduce(union)
            .unwrap()
    }

    fn one(name: FieldName, field: ReviewField, ocr: &OcrDocument) -> Option<Outline> {
        outlines(&BTreeMap::from([(name, field)]), ocr)
            .fields
            .get(&name)
            .copied()
    }

    #[test]
    fn a_normalized_date_is_found_in_the_words_it_was_read_from() {
        let ocr = OcrDocument::from_lines(&["ACME", "Invoice Date: 05/03/2024 due now"], 0.9);

        let outline = one(FieldName::InvoiceDate, extracted("2024-03-05", 1, 1), &ocr);

        assert_eq!(
            outline,
            Some(Outline {
                page: 1,
                bbox: words_box(&ocr, 1, &[2])
            })
        );
    }

    #[test]
    fn a_date_with_a_month_name_is_its_day_month_and_year_words() {
        let ocr = OcrDocument::from_lines(&["Date: 5 March 2024 ref 77"], 0.9);

        let outline = one(FieldName::InvoiceDate, extracted("2024-03-05", 1, 0), &ocr);

        assert_eq!(outline.unwrap().bbox, words_box(&ocr, 0, &[1, 2, 3]));
    }

    #[test]
    fn an_amount_is_found_in_its_grouped_words_and_a_whole_one_without_cents() {
        let ocr = OcrDocument::from_lines(&["Total: 1 234,50 EUR", "Amount due 99 EUR"], 0.9);
        let fields = BTreeMap::from([
            (FieldName::TotalAmount, extracted("1234.50", 1, 0)),
            (FieldName::Currency, extracted("EUR", 1, 1)),
        ]);

        let evidence = outlines(&fields, &ocr);
        let whole = one(FieldName::TotalAmount, extracted("99.00", 1, 1), &ocr);

        assert_eq!(
            evidence.fields[&FieldName::TotalAmount].bbox,
            words_box(&ocr, 0, &[1, 2])
        );
        assert_eq!(
            evidence.fields[&FieldName::Currency].bbox,
            words_box(&ocr, 1, &[3])
        );
        assert_eq!(whole.unwrap().bbox, words_box(&ocr, 1, &[2]));
    }

    #[test]
    fn text_is_compared_without_case_or_punctuation_and_a_symbol_stands_for_its_currency() {
        let ocr = OcrDocument::from_lines(&["From acme supplies ltd.", "Total €99.00"], 0.9);

        let issuer = one(
            FieldName::Issuer,
            extracted("ACME Supplies Ltd", 1, 0),
            &ocr,
        );
        let currency = one(FieldName::Currency, extracted("EUR", 1, 1), &ocr);

        assert_eq!(issuer.unwrap().bbox, words_box(&ocr, 0, &[1, 2, 3]));
        assert_eq!(currency.unwrap().bbox, words_box(&ocr, 1, &[1]));
    }

    #[test]
    fn a_value_no_word_spells_outlines_its_whole_line() {
        let ocr = OcrDocument::from_lines(&["Invoice No: INV 77", "Total 12"], 0.9);

        let outline = one(
            FieldName::InvoiceNumber,
            extracted("INV-2026-0042", 1, 0),
            &ocr,
        );

        assert_eq!(outline.unwrap().bbox, ocr.pages[0].lines[0].bbox);
    }

    #[test]
    fn a_missing_page_or_line_or_a_reviewers_value_has_no_box() {
        let ocr = OcrDocument::from_lines(&["Invoice Date: 05/03/2024"], 0.9);
        let by_reviewer = ReviewField {
            value: "2024-03-05".into(),
            confidence: 1.0,
            source: FieldSource::Reviewer { id: "alice".into() },
        };
        let fields = BTreeMap::from([
            (FieldName::InvoiceDate, extracted("2024-03-05", 1, 1)),
            (FieldName::TotalAmount, extracted("1.00", 2, 0)),
            (FieldName::Issuer, extracted("ACME", 1, usize::MAX)),
            (FieldName::Currency, by_reviewer),
        ]);

        let evidence = outlines(&fields, &ocr);

        assert!(evidence.fields.is_empty(), "{:?}", evidence.fields);
        assert_eq!(evidence.pages, [PageRef { number: 1 }]);
    }

    #[test]
    fn every_page_is_listed_and_boxes_stay_within_the_page() {
        let mut ocr = OcrDocument::from_lines(&["Total 12.00"], 0.9);
        ocr.pages[0].lines[0].words[1].bbox = BoundingBox {
            left: 0.95,
            top: -0.01,
            width: 0.2,
            height: 0.03,
        };
        ocr.pages.push(Page {
            number: 2,
            lines: vec![],
        });

        let evidence = outlines(
            &BTreeMap::from([(FieldName::TotalAmount, extracted("12.00", 1, 0))]),
            &ocr,
        );

        let b = evidence.fields[&FieldName::TotalAmount].bbox;
        assert_eq!(
            evidence.pages,
            [PageRef { number: 1 }, PageRef { number: 2 }]
        );
        assert_eq!((b.left, b.top), (0.95, 0.0));
        assert!((b.left + b.width - 1.0).abs() < 1e-9 && (b.height - 0.02).abs() < 1e-9);
        let json = serde_json::to_value(&evidence).unwrap();
        assert_eq!(json["fields"]["total_amount"]["box"]["left"], 0.95);
        assert_eq!(json["pages"][1]["number"], 2);
    }
}
