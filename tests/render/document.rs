//! A PDF of positioned pages: the fonts as shared objects, and each page's marks as a content
//! stream.

use std::fmt::Write;

use super::fonts::{Font, Style};
use super::page::{Align, Mark, Page};
use super::{assemble, rupee, stream, winansi};

/// Object numbers: the catalog and page tree first, then the four standard fonts (3 to 6),
/// the rupee font, its glyph and its ToUnicode map (7 to 9), then each page and its content.
const FIRST_PAGE: usize = 10;

/// The PDF of these pages, in order. The same pages give the same bytes.
pub fn document(pages: &[Page]) -> Vec<u8> {
    let kids: Vec<String> = (0..pages.len())
        .map(|i| format!("{} 0 R", FIRST_PAGE + 2 * i))
        .collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        ),
    ];
    for font in Font::ALL {
        objects.push(format!(
            "<< /Type /Font /Subtype /Type1 /BaseFont /{} /Encoding /WinAnsiEncoding >>",
            font.base_font()
        ));
    }
    objects.push(rupee::font(8, 9));
    objects.push(stream(rupee::GLYPH));
    objects.push(stream(rupee::TO_UNICODE));
    let fonts: Vec<String> = Font::ALL
        .iter()
        .enumerate()
        .map(|(i, font)| format!("/{} {} 0 R", font.resource(), 3 + i))
        .collect();
    for (i, page) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {} {}] \
             /Resources << /Font << {} /R1 7 0 R >> >> /Contents {} 0 R >>",
            num(page.width),
            num(page.height),
            fonts.join(" "),
            FIRST_PAGE + 2 * i + 1
        ));
        objects.push(stream(&content(page)));
    }
    assemble(&objects)
}

/// A number as a content stream writes it.
fn num(v: f32) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The content stream of a page. Marks are drawn in order, each in its own graphics state.
fn content(page: &Page) -> String {
    let h = page.height;
    let mut out = String::new();
    for mark in &page.marks {
        match mark {
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
                let grey = num(style.grey);
                let _ = writeln!(
                    out,
                    "BT {grey} g {grey} G 1 0 0 1 {} {} Tm {} ET",
                    num(left),
                    num(h - y),
                    shows(*style, text)
                );
            }
            Mark::Line { from, to, width } => {
                let _ = writeln!(
                    out,
                    "q {} w 0 G {} {} m {} {} l S Q",
                    num(*width),
                    num(from.0),
                    num(h - from.1),
                    num(to.0),
                    num(h - to.1)
                );
            }
            Mark::Frame {
                x,
                y,
                w,
                h: bh,
                width,
            } => {
                let _ = writeln!(
                    out,
                    "q {} w 0 G {} {} {} {} re S Q",
                    num(*width),
                    num(*x),
                    num(h - y - bh),
                    num(*w),
                    num(*bh)
                );
            }
            Mark::Fill {
                x,
                y,
                w,
                h: bh,
                grey,
            } => {
                let _ = writeln!(
                    out,
                    "q {} g {} {} {} {} re f Q",
                    num(*grey),
                    num(*x),
                    num(h - y - bh),
                    num(*w),
                    num(*bh)
                );
            }
            Mark::Stamp {
                x,
                y,
                angle,
                size,
                text,
            } => out.push_str(&stamp(*x, h - y, *angle, *size, text)),
        }
    }
    out
}

/// The text-showing operators of a run: its WinAnsi stretches in the run's font, each ₹ in
/// the rupee font at the same size (`Tj` advances past each, so they join up).
fn shows(style: Style, text: &str) -> String {
    let size = num(style.size);
    let mut out = String::new();
    let mut codes = Vec::new();
    let flush = |codes: &mut Vec<u8>, out: &mut String| {
        if !codes.is_empty() {
            let _ = write!(
                out,
                "/{} {size} Tf {} Tj ",
                style.font.resource(),
                winansi::literal(codes)
            );
            codes.clear();
        }
    };
    for c in text.chars() {
        match winansi::code(c) {
            Some(code) => codes.push(code),
            None => {
                flush(&mut codes, &mut out);
                let _ = write!(out, "/R1 {size} Tf ({}) Tj ", rupee::CODE as char);
            }
        }
    }
    flush(&mut codes, &mut out);
    out.trim_end().to_string()
}

/// A rubber stamp: red bold text in a double box, rotated about its centre (cx, cy), which is
/// in PDF space.
fn stamp(cx: f32, cy: f32, angle: f32, size: f32, text: &str) -> String {
    let style = Font::HelveticaBold.at(size);
    let tw = style.width(text);
    let (bw, bh) = (tw + size, size * 1.7);
    let (sin, cos) = angle.to_radians().sin_cos();
    format!(
        "q 0.78 0.12 0.12 RG 0.78 0.12 0.12 rg 1 0 0 1 {} {} cm {} {} {} {} 0 0 cm \
         2 w {} {} {} {} re S 0.8 w {} {} {} {} re S \
         BT 1 0 0 1 {} {} Tm {} ET Q\n",
        num(cx),
        num(cy),
        num(cos),
        num(sin),
        num(-sin),
        num(cos),
        num(-bw / 2.0),
        num(-bh / 2.0),
        num(bw),
        num(bh),
        num(-bw / 2.0 + 3.0),
        num(-bh / 2.0 + 3.0),
        num(bw - 6.0),
        num(bh - 6.0),
        num(-tw / 2.0),
        num(-size * 0.35),
        shows(style, text)
    )
}
