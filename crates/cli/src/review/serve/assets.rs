//! The review page's files (`crates/cli/assets/review/`), built into the binary so that the
//! page works offline and needs nothing beside `docket`. pdf.js (PDF pages), UTIF.js and pako's
//! inflate (TIFF pages) are vendored there by `scripts/vendor-js.sh`. A test checks that this
//! table and the directory hold the same files.

/// One file of the page: its path under `/assets/` (`index.html` is also `/`), its content
/// type and its bytes.
pub(super) struct Asset {
    pub(super) path: &'static str,
    pub(super) content_type: &'static str,
    pub(super) bytes: &'static [u8],
}

macro_rules! assets {
    ($($path:literal),* $(,)?) => {
        &[$(Asset {
            path: $path,
            content_type: content_type($path),
            bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/review/", $path)),
        }),*]
    };
}

/// Every file of the page.
pub(super) const ASSETS: &[Asset] = assets![
    "index.html",
    "app.css",
    "app.js",
    "api.js",
    "docview.js",
    "queue.js",
    "task.js",
    "ui.js",
    "vendor/pdfjs/pdf.min.mjs",
    "vendor/pdfjs/pdf.worker.min.mjs",
    "vendor/pdfjs/LICENSE",
    "vendor/pdfjs/VERSION",
    "vendor/utif/UTIF.js",
    "vendor/utif/LICENSE",
    "vendor/utif/VERSION",
    "vendor/pako/pako_inflate.min.js",
    "vendor/pako/LICENSE",
    "vendor/pako/VERSION",
];

/// The content type of a file of the page, by its extension.
const fn content_type(path: &str) -> &'static str {
    let b = path.as_bytes();
    if ends_with(b, b".html") {
        "text/html; charset=utf-8"
    } else if ends_with(b, b".css") {
        "text/css; charset=utf-8"
    } else if ends_with(b, b".js") || ends_with(b, b".mjs") {
        // pdf.js ships ES modules as `.mjs`; a browser runs a module only with a JavaScript type.
        "text/javascript; charset=utf-8"
    } else if ends_with(b, b".svg") {
        "image/svg+xml"
    } else {
        "text/plain; charset=utf-8"
    }
}

const fn ends_with(s: &[u8], suffix: &[u8]) -> bool {
    if s.len() < suffix.len() {
        return false;
    }
    let mut i = 0;
    while i < suffix.len() {
        if s[s.len() - suffix.len() + i] != suffix[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The file served at `path` (`/` is the page itself), if any.
pub(super) fn find(path: &str) -> Option<&'static Asset> {
    let name = match path {
        "/" | "/index.html" => "index.html",
        _ => path.strip_prefix("/assets/")?,
    };
    ASSETS.iter().find(|a| a.path == name)
}

/// The total size of the page's files, in bytes.
pub(super) fn total_bytes() -> usize {
    ASSETS.iter().map(|a| a.bytes.len()).sum()
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn files(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path: PathBuf = entry.unwrap().path();
            if path.is_dir() {
                files(&path, base, out);
            } else {
                let rel = path.strip_prefix(base).unwrap();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn the_table_holds_every_file_of_the_page_and_no_other() {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/review");
        let mut on_disk = Vec::new();
        files(&base, &base, &mut on_disk);
        on_disk.sort();
        let mut table: Vec<String> = ASSETS.iter().map(|a| a.path.to_string()).collect();
        table.sort();
        assert_eq!(table, on_disk);
    }

    #[test]
    fn the_page_is_served_at_the_root_and_its_files_under_assets() {
        assert_eq!(find("/").unwrap().path, "index.html");
        assert_eq!(find("/assets/app.js").unwrap().path, "app.js");
        assert!(find("/app.js").is_none());
        assert!(find("/assets/../Cargo.toml").is_none());
        assert!(find("/assets/nothing.js").is_none());
    }

    #[test]
    fn modules_are_served_as_javascript() {
        assert_eq!(
            find("/assets/vendor/pdfjs/pdf.min.mjs")
                .unwrap()
                .content_type,
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("app.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("LICENSE"), "text/plain; charset=utf-8");
    }
}
