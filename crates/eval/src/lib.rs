//! `make eval`: docket's extraction and validation measured on the labelled invoices in
//! `tests/fixtures/invoices/` (their format in that folder's README). Pure: the invoices'
//! normalized OCR is stored beside them (`make eval-ocr` writes it from the local Textract), so
//! the measure needs no AWS and no OCR engine, and runs in the unit tests.
//!
//! - [`set`]: the invoices on disk;
//! - [`score`]: one invoice through `extract` and `validate`, each field compared;
//! - [`report`]: the measures over a set, as text or JSON.

pub mod report;
pub mod score;
pub mod set;

use std::path::{Path, PathBuf};

use docket_core::config::PipelineConfig;

use report::{Report, Summary};

/// Where the labelled invoices are in this repository.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/invoices")
}

/// Measures every invoice under `dir` with `config`.
pub fn evaluate(dir: &Path, config: &PipelineConfig) -> anyhow::Result<Report> {
    let invoices = set::load(dir)?;
    let scores: Vec<_> = invoices.iter().map(|i| score::score(i, config)).collect();
    let threshold = config.validation.min_confidence;
    let mut sets = std::collections::BTreeMap::new();
    for name in scores.iter().map(|s| s.set.clone()) {
        sets.entry(name.clone())
            .or_insert_with(|| Summary::of(scores.iter().filter(|s| s.set == name), threshold));
    }
    Ok(Report {
        config_version: config.version.clone(),
        min_confidence: threshold,
        all: Summary::of(&scores, threshold),
        sets,
        invoices: scores,
    })
}

#[cfg(test)]
mod tests;
