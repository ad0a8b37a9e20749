//! Setting text for layouts: an invoice's typefaces, stacks of lines, label/value blocks,
//! shrinking and wrapping to a width. Blocks work in "tops": each takes the top of the space it
//! may use and returns the top of the space below it, so that layouts stack them without
//! overlaps.

use crate::render::{Font, Page, Style};

use super::super::rng::Rng;

/// The left and right margin of a page, and the top one.
pub const MARGIN: f32 = 50.0;

/// The typefaces and body size of one invoice.
#[derive(Clone, Copy, Debug)]
pub struct Kit {
    pub regular: Font,
    pub bold: Font,
    pub size: f32,
}

impl Kit {
    /// Helvetica or Times for the text, Helvetica-Bold for emphasis, at a size near `size`.
    pub fn draw(rng: &mut Rng, size: f32) -> Kit {
        let regular = rng.pick(&[Font::Helvetica, Font::Helvetica, Font::TimesRoman]);
        Kit {
            regular,
            bold: Font::HelveticaBold,
            size: size + rng.pick(&[-0.5, 0.0, 0.0, 0.5]),
        }
    }

    /// Courier throughout, as a till or an old ERP prints.
    pub fn mono(size: f32) -> Kit {
        Kit {
            regular: Font::Courier,
            bold: Font::Courier,
            size,
        }
    }

    pub fn body(&self) -> Style {
        self.regular.at(self.size)
    }

    pub fn bold(&self) -> Style {
        self.bold.at(self.size)
    }

    /// Small print, in dark grey.
    pub fn small(&self) -> Style {
        self.regular.at(self.size * 0.82).grey(0.25)
    }

    /// The distance between lines of body text.
    pub fn leading(&self) -> f32 {
        self.size * 1.45
    }
}

/// The line height of a style: its size and a little air.
pub fn line_height(style: Style) -> f32 {
    style.size * 1.35
}

/// The baseline of a line of `style` whose space starts at `top`.
pub fn baseline(top: f32, style: Style) -> f32 {
    top + 0.8 * style.size
}

/// `style`, smaller if need be (not below 5 points) so that `text` fits in `width`.
pub fn fit(style: Style, text: &str, width: f32) -> Style {
    let w = style.width(text);
    if w <= width {
        style
    } else {
        style.size((style.size * width / w).max(5.0))
    }
}

/// How a stack sets each of its lines at x and a baseline: `Page::text`, `Page::text_right`
/// or `Page::text_center`.
type Set = for<'a> fn(&'a mut Page, f32, f32, Style, &str) -> &'a mut Page;

/// Lines of text set by `set` at x from `top` down, each shrunk to `width`; returns the top
/// below.
fn stack_with<S: AsRef<str>>(
    set: Set,
    page: &mut Page,
    x: f32,
    top: f32,
    width: f32,
    style: Style,
    lines: &[S],
) -> f32 {
    let mut top = top;
    for line in lines.iter().map(AsRef::as_ref) {
        set(page, x, baseline(top, style), fit(style, line, width), line);
        top += line_height(style);
    }
    top
}

/// Lines of text set left at x from `top` down, each shrunk to `width`; returns the top below.
pub fn stack<S: AsRef<str>>(
    page: &mut Page,
    x: f32,
    top: f32,
    width: f32,
    style: Style,
    lines: &[S],
) -> f32 {
    stack_with(Page::text, page, x, top, width, style, lines)
}

/// Lines set right at `right`.
pub fn stack_right<S: AsRef<str>>(
    page: &mut Page,
    right: f32,
    top: f32,
    width: f32,
    style: Style,
    lines: &[S],
) -> f32 {
    stack_with(Page::text_right, page, right, top, width, style, lines)
}

/// Lines centred on x.
pub fn stack_center<S: AsRef<str>>(
    page: &mut Page,
    x: f32,
    top: f32,
    width: f32,
    style: Style,
    lines: &[S],
) -> f32 {
    stack_with(Page::text_center, page, x, top, width, style, lines)
}

/// Rows of label and value within `width` from x: labels left, values left-aligned after the
/// widest label (or right-aligned at the right end). Both shrink together if the widest row
/// does not fit. Returns the top below.
#[allow(clippy::too_many_arguments)]
pub fn pairs(
    page: &mut Page,
    x: f32,
    top: f32,
    width: f32,
    label: Style,
    value: Style,
    rows: &[(String, String)],
    right: bool,
) -> f32 {
    let gap = 8.0;
    let widest = |style: Style, col: fn(&(String, String)) -> &String| {
        rows.iter()
            .map(|row| style.width(col(row)))
            .fold(0.0, f32::max)
    };
    let need = widest(label, |r| &r.0) + gap + widest(value, |r| &r.1);
    let scale = if need > width { width / need } else { 1.0 };
    let (label, value) = (
        label.size(label.size * scale),
        value.size(value.size * scale),
    );
    let value_x = x + widest(label, |r| &r.0) + gap;
    let height = line_height(label).max(line_height(value));
    let mut top = top;
    for (l, v) in rows {
        let y = baseline(top, label.size(label.size.max(value.size)));
        page.text(x, y, label, l);
        if right {
            page.text_right(x + width, y, value, v);
        } else {
            page.text(value_x, y, value, v);
        }
        top += height;
    }
    top
}

/// `text` broken at spaces into lines no wider than `width` in `style`.
pub fn wrap(style: Style, text: &str, width: f32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if style.width(&candidate) > width && !line.is_empty() {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        } else {
            line = candidate;
        }
    }
    lines.push(line);
    lines
}
