//! Test documents made from known text: hand-written PDFs, and PNG and TIFF pages rendered from
//! them by poppler's `pdftoppm` (a Debian package `make setup` installs).
//!
//! Two ways to write one: [`pdf`], lines of 24pt Helvetica top-down, for tests that only need
//! some text; and [`document`] of [`Page`]s, on which a layout places runs of text in the
//! standard Type1 fonts (WinAnsiEncoding, so accents, € and £ show; ₹ comes from a small
//! Type3 font), rules, boxes, a rotated stamp and speckle noise.

mod document;
mod fonts;
mod page;
mod rupee;
mod winansi;

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

pub use document::document;
pub use fonts::{Font, Style};
pub use page::{Align, Page, Placed};

/// PDF string literal escaping: backslash and parentheses.
fn escape(line: &str) -> String {
    line.replace('\\', "\\\\")
        .replace('(', "\\(")
        .replace(')', "\\)")
}

/// A PDF with one page per entry, each line of text in 24pt Helvetica, top-down.
pub fn pdf(pages: &[&[&str]]) -> Vec<u8> {
    pdf_in(pages, 24)
}

/// [`pdf`] with its lines in `points`-point Helvetica (about 1.5 times as far apart): at 9
/// points a page holds 49 lines of about 100 characters, as full of words as a page gets.
pub fn pdf_in(pages: &[&[&str]], points: u32) -> Vec<u8> {
    assemble(&page_objects(pages, points))
}

/// [`pdf`] with an XML file attached the way a Factur-X or ZUGFeRD invoice attaches its own
/// (named `name` in the catalog's embedded files and associated files, the stream marked
/// `/Type /EmbeddedFile /Subtype /text#2Fxml`, in the clear): what `docket_core::einvoice`
/// reads, and what `pdfdetach` lists.
pub fn pdf_with_xml(pages: &[&[&str]], name: &str, xml: &str) -> Vec<u8> {
    let mut objects = page_objects(pages, 24);
    let file = objects.len() + 1;
    let spec = file + 1;
    let name = escape(name);
    objects[0] = format!(
        "<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [({name}) {spec} 0 R] \
         >> >> /AF [{spec} 0 R] >>"
    );
    objects.push(format!(
        "<< /Type /EmbeddedFile /Subtype /text#2Fxml /Length {} >>\nstream\n{xml}\nendstream",
        xml.len()
    ));
    objects.push(format!(
        "<< /Type /Filespec /F ({name}) /UF ({name}) /AFRelationship /Data /EF << /F {file} 0 R >> \
         >>"
    ));
    assemble(&objects)
}

/// The objects of [`pdf_in`]'s file: the catalog (object 1), the page tree, each page and its
/// content, the font.
fn page_objects(pages: &[&[&str]], points: u32) -> Vec<String> {
    let font = 3 + 2 * pages.len();
    let kids: Vec<String> = (0..pages.len())
        .map(|i| format!("{} 0 R", 3 + 2 * i))
        .collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        ),
    ];
    for (i, lines) in pages.iter().enumerate() {
        let text: Vec<String> = lines.iter().map(|l| format!("({}) '", escape(l))).collect();
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
             /Resources << /Font << /F1 {font} 0 R >> >> /Contents {} 0 R >>",
            4 + 2 * i
        ));
        objects.push(stream(&format!(
            "BT /F1 {points} Tf 72 720 Td {} TL {} ET",
            points * 3 / 2,
            text.join(" ")
        )));
    }
    objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string());
    objects
}

/// A stream object of this (ASCII) content.
fn stream(content: &str) -> String {
    format!(
        "<< /Length {} >>\nstream\n{content}\nendstream",
        content.len()
    )
}

/// A PDF file of these objects, numbered from 1; object 1 is the catalog.
fn assemble(objects: &[String]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (n, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n{body}\nendobj\n", n + 1).bytes());
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .bytes(),
    );
    out
}

/// The first page of `pdf` as a 200 dpi PNG, rendered by `pdftoppm`.
pub fn png_of(pdf: &[u8]) -> Vec<u8> {
    let pages = Rendered::new(pdf, &["-singlefile", "-png"], "png");
    std::fs::read(&pages.files[0]).unwrap()
}

/// Every page of `pdf` as one 200 dpi TIFF, a page per image directory: rendered by `pdftoppm`
/// with its strips compressed with Deflate under libtiff's legacy code (32946), which the review
/// page must still draw, and joined by libtiff's `tiffcp` (Debian's `libtiff-tools`, which
/// `scripts/setup.sh --browser` installs).
pub fn tiff_of(pdf: &[u8]) -> Vec<u8> {
    let pages = Rendered::new(pdf, &["-tiff", "-tiffcompression", "deflate"], "tif");
    let joined = pages.dir.join("joined.tif");
    let status = Command::new("tiffcp")
        .args(&pages.files)
        .arg(&joined)
        .status()
        .expect("tiffcp (libtiff-tools) must be installed");
    assert!(status.success(), "tiffcp failed: {status}");
    std::fs::read(joined).unwrap()
}

/// The pages of a PDF as `pdftoppm` wrote them at 200 dpi (its `format` arguments), in order,
/// in a scratch directory removed on drop.
struct Rendered {
    dir: PathBuf,
    files: Vec<PathBuf>,
}

impl Rendered {
    fn new(pdf: &[u8], format: &[&str], extension: &str) -> Rendered {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "docket-render-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("document.pdf");
        std::fs::write(&source, pdf).unwrap();
        let status = Command::new("pdftoppm")
            .args(["-r", "200"])
            .args(format)
            .arg(&source)
            .arg(dir.join("page"))
            .status()
            .expect("pdftoppm (poppler-utils) must be installed");
        assert!(status.success(), "pdftoppm failed: {status}");
        // page.png alone, or page-1.tif, page-2.tif, … (zero-padded to one width)
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == extension))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "pdftoppm wrote no .{extension} page");
        Rendered { dir, files }
    }
}

impl Drop for Rendered {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

#[cfg(test)]
mod tests;
