//! Writes the synthetic evaluation invoices (`tests/fixtures/invoices/synthetic/`): for each,
//! `<id>/document.pdf` and `<id>/expected.json` as tests/fixtures/invoices/README.md defines
//! them, rendered by `docket_e2e::invoices` from a seed. The same seed writes the same bytes.
//!
//! `cargo run -p docket-e2e --example render_invoices -- --help`

use std::path::{Path, PathBuf};

use docket_e2e::invoices::{self, Invoice};
use docket_e2e::util;
use serde_json::{json, Value};

const USAGE: &str = "\
render_invoices: the synthetic evaluation invoices, rendered from varied layouts and languages

Usage: cargo run -p docket-e2e --example render_invoices -- [OPTIONS]

Options:
  --out DIR        where <id>/document.pdf and <id>/expected.json go
                   [default: tests/fixtures/invoices/synthetic]
  --seed N         the seed [default: 1]
  --count N        how many invoices, the first N of the seed [default: 48]
  --output FORMAT  text (a line an invoice) or json (a summary at the end)
  -h, --help       this text

An invoice whose document changes loses its ocr.json (make eval-ocr reads it again).
Folders of other invoices in DIR are left as they are.";

struct Args {
    out: PathBuf,
    seed: u64,
    count: usize,
    json: bool,
}

fn args() -> Args {
    let mut out = Args {
        out: util::workspace_root().join("tests/fixtures/invoices/synthetic"),
        seed: invoices::SEED,
        count: invoices::COUNT,
        json: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .unwrap_or_else(|| fail(&format!("{name} needs a value")))
        };
        match arg.as_str() {
            "--out" => out.out = PathBuf::from(value("--out")),
            "--seed" => out.seed = number(&value("--seed"), "--seed"),
            "--count" => out.count = number(&value("--count"), "--count"),
            "--output" => match value("--output").as_str() {
                "json" => out.json = true,
                "text" => out.json = false,
                other => fail(&format!("--output is text or json, not {other}")),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => fail(&format!("unknown argument {other}")),
        }
    }
    out
}

fn number<T: std::str::FromStr>(text: &str, name: &str) -> T {
    text.parse()
        .unwrap_or_else(|_| fail(&format!("{name} takes a number, not {text}")))
}

fn fail(message: &str) -> ! {
    eprintln!("render_invoices: {message}\n\n{USAGE}");
    std::process::exit(2);
}

/// Writes one invoice's folder; returns whether its document changed (or is new).
fn write(dir: &Path, invoice: &Invoice) -> std::io::Result<bool> {
    let folder = dir.join(&invoice.id);
    std::fs::create_dir_all(&folder)?;
    let pdf = invoice.pdf();
    let path = folder.join("document.pdf");
    let changed = std::fs::read(&path).ok().as_deref() != Some(&pdf[..]);
    if changed {
        std::fs::write(&path, &pdf)?;
        let ocr = folder.join("ocr.json");
        if ocr.exists() {
            std::fs::remove_file(ocr)?;
        }
    }
    let expected = serde_json::to_string_pretty(&invoice.expected()).unwrap() + "\n";
    std::fs::write(folder.join("expected.json"), expected)?;
    Ok(changed)
}

fn main() {
    let args = args();
    let mut written: Vec<Value> = Vec::new();
    for invoice in invoices::generate(args.seed, args.count) {
        let changed = write(&args.out, &invoice).unwrap_or_else(|e| {
            fail(&format!(
                "cannot write {} under {}: {e}",
                invoice.id,
                args.out.display()
            ))
        });
        let pages = invoice.pages.len();
        if args.json {
            let expected = serde_json::to_value(invoice.expected()).unwrap();
            written.push(json!({
                "id": invoice.id,
                "language": expected["language"],
                "country": expected["country"],
                "layout": expected["layout"],
                "pages": pages,
                "changed": changed,
                "fields": expected["fields"],
            }));
        } else {
            let state = if changed { "written" } else { "unchanged" };
            println!(
                "{:<32} {pages} page{}  {state}",
                invoice.id,
                if pages == 1 { " " } else { "s" }
            );
        }
    }
    if args.json {
        let summary = json!({
            "out": args.out.display().to_string(),
            "seed": args.seed,
            "count": written.len(),
            "invoices": written,
        });
        println!("{}", serde_json::to_string_pretty(&summary).unwrap());
    } else {
        println!(
            "{} invoices (seed {}) in {}",
            args.count,
            args.seed,
            args.out.display()
        );
    }
}
