//! An EN 16931 invoice's five fields from its XML, in the two syntaxes the standard allows:
//! UN/CEFACT Cross Industry Invoice (what Factur-X and ZUGFeRD embed: `CrossIndustryInvoice`
//! since ZUGFeRD 2, `CrossIndustryDocument` in ZUGFeRD 1, and ZUGFeRD 1's release candidate's
//! `Invoice`) and OASIS UBL (`Invoice`, `CreditNote`; XRechnung's other syntax).
//!
//! Elements are matched by their local names, so a prefix or a namespace version does not
//! matter; the root's namespace tells the syntax. An XML of another root is no e-invoice
//! ([`read`]: `None`); a credit note's total is left out; so is a value that is not in its
//! normalized form (a date not `YYYYMMDD`, an amount with more than two decimals that are not
//! zeros): the page is read for it as for any invoice.

use roxmltree::{Document, Node, ParsingOptions};

use super::{EmbeddedInvoice, Syntax, Unreadable};
use crate::model::fields::FieldName;

/// The largest number of XML nodes read (an e-invoice of a thousand lines has tens of
/// thousands): a bound on the memory and work a hostile attachment can ask for (a node takes
/// about a hundred bytes).
const MAX_NODES: u32 = 250_000;

/// UN/EDIFACT 1001 document types whose total is a credit, not an amount to pay: the page shows
/// it as a negative or a positive amount, depending on the issuer, so the embedded total says
/// nothing about the page's sign and is left out.
const CREDIT_NOTE_TYPES: [&str; 4] = ["381", "261", "262", "396"];

/// The invoice `xml` states, `None` when it is no e-invoice (another XML attachment).
pub fn read(xml: &[u8]) -> Result<Option<EmbeddedInvoice>, Unreadable> {
    let text = std::str::from_utf8(xml.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(xml))
        .map_err(|_| Unreadable::NotUtf8)?;
    let options = ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_NODES,
    };
    let document = Document::parse_with_options(text, options).map_err(|e| match e {
        roxmltree::Error::DtdDetected => Unreadable::Refused("a DTD"),
        roxmltree::Error::NodesLimitReached => Unreadable::Refused("too many nodes"),
        other => Unreadable::Malformed(other.pos().to_string()),
    })?;
    let root = document.root_element();
    let namespace = root.tag_name().namespace().unwrap_or_default();
    let syntax = match root.tag_name().name() {
        "CrossIndustryInvoice" => Syntax::Cii,
        "CrossIndustryDocument" => Syntax::Zugferd1,
        "Invoice" if namespace.contains("CBFBUY") => Syntax::Zugferd1,
        "Invoice" | "CreditNote" if namespace.contains(":ubl:") => Syntax::Ubl,
        _ => return Ok(None),
    };
    let fields = match syntax {
        Syntax::Ubl => ubl(root),
        Syntax::Cii | Syntax::Zugferd1 => cross_industry(root),
    };
    Ok(Some(EmbeddedInvoice {
        syntax,
        sha256: crate::ids::sha256_hex(xml),
        fields: fields
            .into_iter()
            .filter_map(|(name, value)| Some((name, value?)))
            .collect(),
    }))
}

fn cross_industry(root: Node) -> Vec<(FieldName, Option<String>)> {
    let document =
        child(root, "ExchangedDocument").or_else(|| child(root, "HeaderExchangedDocument"));
    let transaction = child(root, "SupplyChainTradeTransaction")
        .or_else(|| child(root, "SpecifiedSupplyChainTradeTransaction"));
    let agreement = transaction.and_then(|t| {
        child(t, "ApplicableHeaderTradeAgreement")
            .or_else(|| child(t, "ApplicableSupplyChainTradeAgreement"))
    });
    let settlement = transaction.and_then(|t| {
        child(t, "ApplicableHeaderTradeSettlement")
            .or_else(|| child(t, "ApplicableSupplyChainTradeSettlement"))
    });
    let summation = settlement.and_then(|s| {
        s.children()
            .find(|n| n.is_element() && n.tag_name().name().ends_with("MonetarySummation"))
    });
    let issued = document.and_then(|d| child(d, "IssueDateTime"));
    let date = issued.and_then(|i| {
        let stamp = child(i, "DateTimeString").unwrap_or(i);
        let format = stamp.attribute("format").unwrap_or("102");
        (format == "102").then(|| date_102(&text(stamp)?)).flatten()
    });
    let credit = document
        .and_then(|d| child(d, "TypeCode"))
        .and_then(text)
        .is_some_and(|code| CREDIT_NOTE_TYPES.contains(&code.as_str()));
    let total = summation.and_then(|s| {
        child(s, "DuePayableAmount")
            .or_else(|| child(s, "GrandTotalAmount"))
            .and_then(text)
            .and_then(|a| amount(&a))
    });
    vec![
        (
            FieldName::Issuer,
            agreement
                .and_then(|a| child(a, "SellerTradeParty"))
                .and_then(|p| child(p, "Name"))
                .and_then(text),
        ),
        (
            FieldName::InvoiceNumber,
            document.and_then(|d| child(d, "ID")).and_then(text),
        ),
        (FieldName::InvoiceDate, date),
        (FieldName::TotalAmount, total.filter(|_| !credit)),
        (
            FieldName::Currency,
            settlement
                .and_then(|s| child(s, "InvoiceCurrencyCode"))
                .and_then(text)
                .filter(|c| crate::model::fields::is_currency_code(c)),
        ),
    ]
}

fn ubl(root: Node) -> Vec<(FieldName, Option<String>)> {
    let party = child(root, "AccountingSupplierParty").and_then(|s| child(s, "Party"));
    let issuer = party.and_then(|p| {
        child(p, "PartyLegalEntity")
            .and_then(|l| child(l, "RegistrationName"))
            .or_else(|| child(p, "PartyName").and_then(|n| child(n, "Name")))
            .and_then(text)
    });
    let credit = root.tag_name().name() == "CreditNote";
    let total = child(root, "LegalMonetaryTotal")
        .and_then(|t| child(t, "PayableAmount"))
        .and_then(text)
        .and_then(|a| amount(&a));
    let date = child(root, "IssueDate")
        .and_then(text)
        .and_then(|d| date_102(&d.replace('-', "")));
    vec![
        (FieldName::Issuer, issuer),
        (FieldName::InvoiceNumber, child(root, "ID").and_then(text)),
        (FieldName::InvoiceDate, date),
        (FieldName::TotalAmount, total.filter(|_| !credit)),
        (
            FieldName::Currency,
            child(root, "DocumentCurrencyCode")
                .and_then(text)
                .filter(|c| crate::model::fields::is_currency_code(c)),
        ),
    ]
}

/// The element child of `node` with the local name `name`.
fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children()
        .find(|n| n.is_element() && n.tag_name().name() == name)
}

/// The element's text, its whitespace trimmed and runs of it made one space; `None` when empty.
fn text(node: Node) -> Option<String> {
    let joined = node
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect::<String>();
    let squeezed = joined.split_whitespace().collect::<Vec<_>>().join(" ");
    (!squeezed.is_empty()).then_some(squeezed)
}

/// A date in UN/EDIFACT format 102 (`YYYYMMDD`) as `YYYY-MM-DD`, when it is a calendar day.
fn date_102(s: &str) -> Option<String> {
    if s.len() != 8 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let iso = format!("{}-{}-{}", &s[..4], &s[4..6], &s[6..]);
    time::Date::parse(
        &iso,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .ok()?;
    Some(iso)
}

/// An XML decimal (`1005.5`, `-12.00`, `447.8800`) as a normalized amount (`1005.50`): `None`
/// when it is no decimal or has a non-zero digit past the cents.
fn amount(s: &str) -> Option<String> {
    let (negative, body) = s.strip_prefix('-').map_or((false, s), |rest| (true, rest));
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || frac.bytes().skip(2).any(|b| b != b'0') {
        return None;
    }
    let cents: String = frac.chars().chain("00".chars()).take(2).collect();
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let sign = if negative { "-" } else { "" };
    let value = format!("{sign}{int}.{cents}");
    crate::model::fields::parse_amount_cents(&value).map(|_| value)
}
