//! Test documents made from known text: a hand-written PDF in Helvetica, and PNG pages rendered
//! from it by poppler's `pdftoppm` (a Debian package `make setup` installs).

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// PDF string literal escaping: backslash and parentheses.
fn escape(line: &str) -> String {
    line.replace('\\', "\\\\")
        .replace('(', "\\(")
        .replace(')', "\\)")
}

/// A PDF with one page per entry, each line of text in 24pt Helvetica, top-down.
pub fn pdf(pages: &[&[&str]]) -> Vec<u8> {
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
        let stream = format!("BT /F1 24 Tf 72 720 Td 36 TL {} ET", text.join(" "));
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
             /Resources << /Font << /F1 {font} 0 R >> >> /Contents {} 0 R >>",
            4 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string());

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
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "docket-render-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("page.pdf");
    std::fs::write(&source, pdf).unwrap();
    let prefix: PathBuf = dir.join("page");
    let status = Command::new("pdftoppm")
        .args(["-r", "200", "-png", "-singlefile"])
        .arg(&source)
        .arg(&prefix)
        .status()
        .expect("pdftoppm (poppler-utils) must be installed");
    assert!(status.success(), "pdftoppm failed: {status}");
    let png = std::fs::read(prefix.with_extension("png")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    png
}
