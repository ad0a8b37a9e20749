//! The labelled set on disk (`tests/fixtures/invoices/<set>/<id>/`, format in that folder's
//! README): each invoice's expected fields and its normalized OCR.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use docket_core::einvoice::{self, Embedded, EmbeddedInvoice};
use docket_core::model::fields::FieldName;
use docket_core::ocr::OcrDocument;
use serde::Deserialize;

/// `expected.json`: what a careful reader finds on the invoice.
#[derive(Debug, Clone, Deserialize)]
pub struct Expected {
    /// Where the document comes from.
    pub source: String,
    /// Its licence (SPDX).
    pub licence: String,
    /// Its language (ISO 639-1).
    pub language: String,
    /// The issuer's country (ISO 3166-1 alpha-2).
    pub country: String,
    /// The renderer's layout (synthetic invoices only).
    #[serde(default)]
    pub layout: Option<String>,
    /// The right value of each field; `None` when the document does not show it.
    pub fields: BTreeMap<FieldName, Option<String>>,
    /// Other spellings of the issuer a reader would accept.
    #[serde(default)]
    pub issuer_also: Vec<String>,
}

/// One labelled invoice.
#[derive(Debug, Clone)]
pub struct Invoice {
    /// `<set>/<id>`.
    pub id: String,
    /// The set it belongs to (`real`, `synthetic`).
    pub set: String,
    /// What it should give.
    pub expected: Expected,
    /// Its normalized OCR.
    pub ocr: OcrDocument,
    /// The e-invoice its `document.pdf` carries, as validate reads it from the raw upload.
    pub embedded: Option<EmbeddedInvoice>,
}

/// Every invoice under `dir` (sorted by id). An invoice without `ocr.json` is an error that
/// says to run `make eval-ocr`: the set is measured whole or not at all.
pub fn load(dir: &Path) -> anyhow::Result<Vec<Invoice>> {
    let mut invoices = Vec::new();
    for set in subdirs(dir)? {
        let set_name = name(&set);
        if set_name == "LICENSES" {
            continue;
        }
        for folder in subdirs(&set)? {
            if name(&folder) == "LICENSES" {
                continue;
            }
            invoices.push(read(&set_name, &folder)?);
        }
    }
    if invoices.is_empty() {
        bail!("no labelled invoices under {}", dir.display());
    }
    invoices.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(invoices)
}

fn read(set: &str, folder: &Path) -> anyhow::Result<Invoice> {
    let id = format!("{set}/{}", name(folder));
    let expected_path = folder.join("expected.json");
    let expected: Expected = serde_json::from_str(
        &std::fs::read_to_string(&expected_path)
            .with_context(|| format!("{id}: reading {}", expected_path.display()))?,
    )
    .with_context(|| format!("{id}: expected.json does not match the README's format"))?;
    for field in FieldName::ALL {
        if !expected.fields.contains_key(&field) {
            bail!("{id}: expected.json has no {field} (null when the invoice does not show it)");
        }
    }
    let ocr_path = folder.join("ocr.json");
    let text = std::fs::read_to_string(&ocr_path).with_context(|| {
        format!("{id}: no ocr.json; `make eval-ocr` reads the documents that lack one")
    })?;
    let ocr = serde_json::from_str(&text).with_context(|| format!("{id}: ocr.json is not OCR"))?;
    let pdf = folder.join("document.pdf");
    let embedded = match std::fs::read(&pdf) {
        Ok(bytes) => match einvoice::from_document(&bytes) {
            Embedded::Read(invoice) => Some(invoice),
            Embedded::Absent | Embedded::Unreadable(_) => None,
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("{id}: reading {}", pdf.display())),
    };
    Ok(Invoice {
        id,
        set: set.to_string(),
        expected,
        ocr,
        embedded,
    })
}

fn subdirs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

fn name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}
