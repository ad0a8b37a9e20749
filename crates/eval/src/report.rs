//! The measures over a set: per-field accuracy, the auto-approve rate, silent errors, and how
//! well confidence predicts a right field (the share right among fields at or above the
//! auto-approve threshold, issue 14's "honest confidence").

use std::collections::BTreeMap;
use std::fmt::Write as _;

use docket_core::model::fields::FieldName;
use serde::Serialize;

use crate::score::InvoiceScore;

/// A count of right answers among some.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Share {
    /// How many were right.
    pub right: usize,
    /// Out of how many.
    pub of: usize,
}

impl Share {
    fn add(&mut self, right: bool) {
        self.of += 1;
        self.right += usize::from(right);
    }

    /// As a percentage (100 % of nothing).
    pub fn percent(&self) -> f64 {
        if self.of == 0 {
            100.0
        } else {
            100.0 * self.right as f64 / self.of as f64
        }
    }
}

/// The measures over one group of invoices (a set, or all).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// Invoices measured.
    pub invoices: usize,
    /// Right fields, by field.
    pub fields: BTreeMap<FieldName, Share>,
    /// Right fields over all fields.
    pub all_fields: Share,
    /// Invoices with every field right.
    pub all_right: usize,
    /// Invoices auto-approved.
    pub auto_approved: usize,
    /// Invoices sent to a person.
    pub needs_review: usize,
    /// Invoices found invalid.
    pub invalid: usize,
    /// Auto-approved invoices with a wrong field.
    pub silent_errors: usize,
    /// Extracted fields at or above the confidence threshold: how many were right.
    pub confident: Share,
    /// Extracted fields below the threshold: how many were right anyway.
    pub unsure: Share,
    /// Invoices whose language was detected as the one labelled (undetected counts as wrong).
    pub language: Share,
    /// Invoices whose PDF carries an e-invoice that was read.
    pub embedded: usize,
    /// Of those, invoices with a field the page reads confidently otherwise (a person decides).
    pub disputed: usize,
}

impl Summary {
    /// The measures over `scores`, with `threshold` the validation's `min_confidence`.
    pub fn of<'a>(scores: impl IntoIterator<Item = &'a InvoiceScore>, threshold: f64) -> Self {
        let mut s = Summary::default();
        for score in scores {
            s.invoices += 1;
            match score.decision {
                "auto_approve" => s.auto_approved += 1,
                "needs_review" => s.needs_review += 1,
                _ => s.invalid += 1,
            }
            s.silent_errors += usize::from(score.silent_error);
            s.embedded += usize::from(score.embedded.is_some());
            s.disputed += usize::from(!score.disputed.is_empty());
            s.language
                .add(score.detected_language.as_deref() == Some(score.language.as_str()));
            s.all_right += usize::from(score.fields.iter().all(|f| f.right));
            for f in &score.fields {
                s.fields.entry(f.field).or_default().add(f.right);
                s.all_fields.add(f.right);
                match f.confidence {
                    Some(c) if c >= threshold => s.confident.add(f.right),
                    Some(_) => s.unsure.add(f.right),
                    None => {}
                }
            }
        }
        s
    }
}

/// The whole evaluation: by set, over all, and each invoice.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The config version measured.
    pub config_version: String,
    /// The auto-approve threshold.
    pub min_confidence: f64,
    /// Per set (`real`, `synthetic`).
    pub sets: BTreeMap<String, Summary>,
    /// Every invoice.
    pub all: Summary,
    /// Each invoice's outcome.
    pub invoices: Vec<InvoiceScore>,
}

impl Report {
    /// The report as text: a table by set, then (with `each`) a line per invoice.
    pub fn text(&self, each: bool) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "config {}, auto-approve threshold {:.2}\n",
            self.config_version, self.min_confidence
        );
        let _ = writeln!(
            out,
            "{:<10} {:>4}  {:>7} {:>7} {:>7} {:>7} {:>7}  {:>6}  {:>13}  {:>6}  {:>13}  {:>6}",
            "set",
            "docs",
            "issuer",
            "number",
            "date",
            "total",
            "curr.",
            "all 5",
            "auto-approved",
            "silent",
            "confident ok",
            "lang."
        );
        let rows = self
            .sets
            .iter()
            .map(|(name, s)| (name.as_str(), s))
            .chain(std::iter::once(("all", &self.all)));
        for (name, s) in rows {
            let field = |f: FieldName| s.fields.get(&f).copied().unwrap_or_default().percent();
            let _ = writeln!(
                out,
                "{:<10} {:>4}  {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}%  {:>6}  {:>5} ({:>4.0}%)  {:>6}  {:>5.1}% of {:<3}  {:>5.1}%",
                name,
                s.invoices,
                field(FieldName::Issuer),
                field(FieldName::InvoiceNumber),
                field(FieldName::InvoiceDate),
                field(FieldName::TotalAmount),
                field(FieldName::Currency),
                s.all_right,
                s.auto_approved,
                100.0 * s.auto_approved as f64 / s.invoices.max(1) as f64,
                s.silent_errors,
                s.confident.percent(),
                s.confident.of,
                s.language.percent(),
            );
        }
        let _ = writeln!(
            out,
            "\nconfident ok: the share of extracted fields at or above the threshold that are right \
             (target 99 %); below it {:.1}% of {} were right. lang.: the language detected as labelled.",
            self.all.unsure.percent(),
            self.all.unsure.of
        );
        let _ = writeln!(
            out,
            "e-invoices: {} of the {} invoices carry one, read; {} of those have a field the page \
             reads otherwise (embedded_mismatch: a person decides).",
            self.all.embedded, self.all.invoices, self.all.disputed
        );
        if each {
            let _ = writeln!(out);
            for inv in &self.invoices {
                let _ = write!(out, "{:<44} {:<12}", inv.id, inv.decision);
                let detected = inv.detected_language.as_deref();
                if detected != Some(inv.language.as_str()) {
                    let _ = write!(
                        out,
                        "  language: {:?} (want {:?})",
                        detected.unwrap_or("-"),
                        inv.language
                    );
                }
                for f in inv.fields.iter().filter(|f| !f.right) {
                    let _ = write!(
                        out,
                        "  {}: {:?} (want {:?})",
                        f.field,
                        f.extracted.as_deref().unwrap_or("-"),
                        f.expected.as_deref().unwrap_or("-")
                    );
                }
                for f in &inv.disputed {
                    let _ = write!(out, "  {f}: page and e-invoice disagree");
                }
                if inv.silent_error {
                    let _ = write!(out, "  SILENT ERROR");
                }
                let _ = writeln!(out);
            }
        }
        out
    }
}
