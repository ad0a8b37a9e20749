//! The normalized OCR model: what the `ocr` step writes to the normalized bucket and the rest of
//! the pipeline reads. Provider-neutral (no Textract types); confidences are 0.0..=1.0.

use serde::{Deserialize, Serialize};

/// An axis-aligned box in page-relative coordinates (0.0..=1.0 from the top-left corner).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BoundingBox {
    /// Distance of the left edge from the page's left edge.
    pub left: f64,
    /// Distance of the top edge from the page's top edge.
    pub top: f64,
    /// Width as a fraction of the page width.
    pub width: f64,
    /// Height as a fraction of the page height.
    pub height: f64,
}

impl BoundingBox {
    /// Distance of the right edge from the page's left edge.
    pub fn right(&self) -> f64 {
        self.left + self.width
    }
}

/// One recognised word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Word {
    /// The text of the word.
    pub text: String,
    /// Recognition confidence, 0.0..=1.0.
    pub confidence: f64,
    /// Where the word is on its page.
    pub bbox: BoundingBox,
}

/// One line of text, with its words in reading order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// The text of the line (words joined by single spaces).
    pub text: String,
    /// Recognition confidence, 0.0..=1.0.
    pub confidence: f64,
    /// Where the line is on its page.
    pub bbox: BoundingBox,
    /// The line's words.
    pub words: Vec<Word>,
}

/// One page, with its lines in reading order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// 1-based page number.
    pub number: u32,
    /// The page's lines.
    pub lines: Vec<Line>,
}

/// A whole document's OCR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OcrDocument {
    /// Which engine produced it (e.g. "textract:DetectDocumentText:1.0").
    pub engine: String,
    /// The pages in order.
    pub pages: Vec<Page>,
}

impl OcrDocument {
    /// Every line of every page, in reading order.
    pub fn lines(&self) -> impl Iterator<Item = &Line> {
        self.pages.iter().flat_map(|p| p.lines.iter())
    }

    /// A document made of the given line texts, one page, each word at `confidence`.
    /// For tests and examples: real documents come from the OCR adapter.
    pub fn from_lines(lines: &[&str], confidence: f64) -> Self {
        let lines = lines
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let top = 0.05 + i as f64 * 0.03;
                let words = text
                    .split_whitespace()
                    .enumerate()
                    .map(|(j, w)| Word {
                        text: w.to_string(),
                        confidence,
                        bbox: BoundingBox {
                            left: 0.05 + j as f64 * 0.1,
                            top,
                            width: 0.09,
                            height: 0.02,
                        },
                    })
                    .collect();
                Line {
                    text: text.split_whitespace().collect::<Vec<_>>().join(" "),
                    confidence,
                    bbox: BoundingBox {
                        left: 0.05,
                        top,
                        width: 0.9,
                        height: 0.02,
                    },
                    words,
                }
            })
            .collect();
        OcrDocument {
            engine: "test".into(),
            pages: vec![Page { number: 1, lines }],
        }
    }
}
