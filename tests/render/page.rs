//! A page as a layout places it: runs of text at (x, y), rules and boxes, a rotated stamp and
//! speckle noise. Coordinates are points from the page's top-left corner, y downwards (a text
//! run's y is its baseline), the way one reads an invoice; the writer turns them into PDF's
//! bottom-up space.

use super::fonts::Style;
use super::winansi;

/// A page of a document, and what is drawn on it, in drawing order.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    pub width: f32,
    pub height: f32,
    pub(super) marks: Vec<Mark>,
}

/// Where a run of text stands relative to its x.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
    Center,
}

/// One thing drawn on a page.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Mark {
    Text {
        x: f32,
        y: f32,
        style: Style,
        align: Align,
        text: String,
    },
    /// A straight stroke `width` points wide.
    Line {
        from: (f32, f32),
        to: (f32, f32),
        width: f32,
    },
    /// A stroked rectangle, (x, y) its top-left corner.
    Frame {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        width: f32,
    },
    /// A filled rectangle in a grey level.
    Fill {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        grey: f32,
    },
    /// Bold text in a double box, in red, turned `angle` degrees anticlockwise about (x, y).
    Stamp {
        x: f32,
        y: f32,
        angle: f32,
        size: f32,
        text: String,
    },
}

/// A run of text as placed: its text and box (left, top, right, bottom), for layout checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed<'a> {
    pub text: &'a str,
    pub left: f32,
    pub top: f32,
    pub right: f32,
    pub bottom: f32,
}

impl Page {
    /// ISO A4, portrait.
    pub fn a4() -> Page {
        Page::new(595.0, 842.0)
    }

    /// US Letter, portrait.
    pub fn letter() -> Page {
        Page::new(612.0, 792.0)
    }

    /// A blank page of this size in points.
    pub fn new(width: f32, height: f32) -> Page {
        Page {
            width,
            height,
            marks: Vec::new(),
        }
    }

    /// `text` with its left end at x. Panics on a character WinAnsi lacks (other than ₹).
    pub fn text(&mut self, x: f32, y: f32, style: Style, text: &str) -> &mut Page {
        self.run(x, y, style, Align::Left, text)
    }

    /// `text` with its right end at x.
    pub fn text_right(&mut self, x: f32, y: f32, style: Style, text: &str) -> &mut Page {
        self.run(x, y, style, Align::Right, text)
    }

    /// `text` centred on x.
    pub fn text_center(&mut self, x: f32, y: f32, style: Style, text: &str) -> &mut Page {
        self.run(x, y, style, Align::Center, text)
    }

    /// `text` placed as `align` says.
    pub fn run(&mut self, x: f32, y: f32, style: Style, align: Align, text: &str) -> &mut Page {
        if let Some(c) = text
            .chars()
            .find(|&c| c != '₹' && winansi::code(c).is_none())
        {
            panic!("{c:?} in {text:?} is not in WinAnsiEncoding");
        }
        self.marks.push(Mark::Text {
            x,
            y,
            style,
            align,
            text: text.to_string(),
        });
        self
    }

    /// A rule from (x1, y1) to (x2, y2), `width` points thick.
    pub fn line(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, width: f32) -> &mut Page {
        self.marks.push(Mark::Line {
            from: (x1, y1),
            to: (x2, y2),
            width,
        });
        self
    }

    /// The outline of a box, (x, y) its top-left corner.
    pub fn frame(&mut self, x: f32, y: f32, w: f32, h: f32, width: f32) -> &mut Page {
        self.marks.push(Mark::Frame { x, y, w, h, width });
        self
    }

    /// A filled box in a grey level (0 black, 1 white), drawn under what comes after it.
    pub fn fill(&mut self, x: f32, y: f32, w: f32, h: f32, grey: f32) -> &mut Page {
        self.marks.push(Mark::Fill { x, y, w, h, grey });
        self
    }

    /// A rubber stamp ("PAID", "COPIE") centred on (x, y), turned `angle` degrees anticlockwise.
    pub fn stamp(&mut self, x: f32, y: f32, angle: f32, size: f32, text: &str) -> &mut Page {
        self.marks.push(Mark::Stamp {
            x,
            y,
            angle,
            size,
            text: text.to_string(),
        });
        self
    }

    /// Speckle noise: a small square in a grey level at each (x, y, side) (the caller's
    /// generator picks them, so that a page is reproducible).
    pub fn speckle(
        &mut self,
        specks: impl IntoIterator<Item = (f32, f32, f32)>,
        grey: f32,
    ) -> &mut Page {
        for (x, y, side) in specks {
            self.fill(x, y, side, side, grey);
        }
        self
    }

    /// The runs of text on the page with their approximate boxes (ascent 0.75, descent 0.22 of
    /// the size), in drawing order.
    pub fn placed(&self) -> Vec<Placed<'_>> {
        self.marks
            .iter()
            .filter_map(|mark| match mark {
                Mark::Text {
                    x,
                    y,
                    style,
                    align,
                    text,
                } => {
                    let w = style.width(text);
                    let left = match align {
                        Align::Left => *x,
                        Align::Right => x - w,
                        Align::Center => x - w / 2.0,
                    };
                    Some(Placed {
                        text,
                        left,
                        top: y - 0.75 * style.size,
                        right: left + w,
                        bottom: y + 0.22 * style.size,
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// Pairs of text runs whose boxes intersect, and runs that leave the page: what a layout
    /// must never produce.
    pub fn collisions(&self) -> Vec<String> {
        let placed = self.placed();
        let mut found = Vec::new();
        for (i, a) in placed.iter().enumerate() {
            if a.left < 0.0 || a.top < 0.0 || a.right > self.width || a.bottom > self.height {
                found.push(format!("{:?} leaves the page", a.text));
            }
            for b in &placed[i + 1..] {
                let apart = a.right <= b.left
                    || b.right <= a.left
                    || a.bottom <= b.top
                    || b.bottom <= a.top;
                if !apart && !a.text.trim().is_empty() && !b.text.trim().is_empty() {
                    found.push(format!("{:?} overlaps {:?}", a.text, b.text));
                }
            }
        }
        found
    }
}
