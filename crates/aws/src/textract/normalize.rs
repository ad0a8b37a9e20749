//! Textract's blocks into docket's [`OcrDocument`], one answer at a time.
//!
//! A job's text comes in answers of up to 1,000 blocks, and a page's lines and words may span
//! two of them (a relationship names blocks by id, wherever they are). [`Normalizer`] keeps of
//! each answer only what the document needs (a word's text, confidence and box; a line's and a
//! page's child ids), so the SDK's blocks (ids, polygons, relationships) are dropped answer by
//! answer instead of held for the whole job; the document is put together at the end.

use std::collections::HashMap;

use aws_sdk_textract::types::{Block, BlockType, RelationshipType};
use docket_core::ocr::{BoundingBox, Line, OcrDocument, Page, Word};

/// What has been read of a document so far.
#[derive(Debug, Default)]
pub struct Normalizer {
    /// Pages in the order read: their number and their lines' ids.
    pages: Vec<(u32, Vec<String>)>,
    /// Lines by id, their words not yet attached, and their words' ids.
    lines: HashMap<String, (Line, Vec<String>)>,
    /// Words by id.
    words: HashMap<String, Word>,
}

impl Normalizer {
    /// Takes in one answer's `blocks` (in Textract's order).
    pub fn add(&mut self, blocks: &[Block]) {
        for block in blocks {
            let id = || block.id().unwrap_or_default().to_string();
            match block.block_type() {
                Some(BlockType::Page) => {
                    let number = block.page().unwrap_or(self.pages.len() as i32 + 1).max(1);
                    self.pages.push((number as u32, children(block)));
                }
                Some(BlockType::Line) => {
                    let line = Line {
                        text: block.text().unwrap_or_default().to_string(),
                        confidence: confidence(block),
                        bbox: bbox(block),
                        words: Vec::new(),
                    };
                    self.lines.insert(id(), (line, children(block)));
                }
                Some(BlockType::Word) => {
                    let word = Word {
                        text: block.text().unwrap_or_default().to_string(),
                        confidence: confidence(block),
                        bbox: bbox(block),
                    };
                    self.words.insert(id(), word);
                }
                _ => {}
            }
        }
    }

    /// The document read, its pages in order, each page's lines and each line's words in the
    /// order their parent lists them; `engine` names what read it.
    pub fn finish(mut self, engine: &str) -> OcrDocument {
        let mut pages: Vec<Page> = std::mem::take(&mut self.pages)
            .into_iter()
            .map(|(number, line_ids)| Page {
                number,
                lines: line_ids.iter().filter_map(|id| self.line(id)).collect(),
            })
            .collect();
        pages.sort_by_key(|p| p.number);
        OcrDocument {
            engine: engine.to_string(),
            pages,
        }
    }

    /// Line `id` with its words, taken out of what is kept.
    fn line(&mut self, id: &str) -> Option<Line> {
        let (mut line, word_ids) = self.lines.remove(id)?;
        line.words = word_ids
            .iter()
            .filter_map(|w| self.words.remove(w))
            .collect();
        Some(line)
    }
}

/// Builds the normalized document from every block of a read (in Textract's order).
pub fn normalize(blocks: &[Block], engine: &str) -> OcrDocument {
    let mut read = Normalizer::default();
    read.add(blocks);
    read.finish(engine)
}

fn bbox(block: &Block) -> BoundingBox {
    let b = block.geometry().and_then(|g| g.bounding_box());
    BoundingBox {
        left: b.map_or(0.0, |b| b.left() as f64),
        top: b.map_or(0.0, |b| b.top() as f64),
        width: b.map_or(0.0, |b| b.width() as f64),
        height: b.map_or(0.0, |b| b.height() as f64),
    }
}

fn confidence(block: &Block) -> f64 {
    (block.confidence().unwrap_or(0.0) as f64 / 100.0).clamp(0.0, 1.0)
}

fn children(block: &Block) -> Vec<String> {
    block
        .relationships()
        .iter()
        .filter(|r| r.r#type() == Some(&RelationshipType::Child))
        .flat_map(|r| r.ids().iter().cloned())
        .collect()
}
