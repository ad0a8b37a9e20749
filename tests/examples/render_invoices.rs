//! Writes the synthetic evaluation invoices (`tests/fixtures/invoices/synthetic/`): for each,
//! `<id>/document.pdf` and `<id>/expected.json` as tests/fixtures/invoices/README.md defines
//! them, rendered by `docket_e2e::invoices` from a seed. The same seed writes the same bytes.
//!
//! `cargo run -p docket-e2e --example render_invoices -- --help`

use std::path::{Path, PathBuf};

use clap::Parser;
use docket_e2e::invoices::{self, Invoice};
use docket_e2e::util;
use serde_json::{json, Value};

/// The synthetic evaluation invoices, rendered from varied layouts and languages.
#[derive(Parser)]
#[command(
    name = "render_invoices",
    after_help = "An invoice whose document changes loses its ocr.json (make eval-ocr reads it \
                  again). Folders of other invoices in DIR are left as they are."
)]
struct Args {
    /// Where <id>/document.pdf and <id>/expected.json go [default:
    /// tests/fixtures/invoices/synthetic]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The seed.
    #[arg(long, default_value_t = invoices::SEED)]
    seed: u64,
    /// How many invoices, the first N of the seed.
    #[arg(long, value_name = "N", default_value_t = invoices::COUNT)]
    count: usize,
    /// text (a line an invoice) or json (a summary at the end).
    #[arg(long, value_parser = ["text", "json"], default_value = "text")]
    output: String,
}

fn fail(message: &str) -> ! {
    eprintln!("render_invoices: {message}");
    std::process::exit(1);
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
    let args = Args::parse();
    let out = args
        .out
        .unwrap_or_else(|| util::workspace_root().join("tests/fixtures/invoices/synthetic"));
    let json = args.output == "json";
    let mut written: Vec<Value> = Vec::new();
    for invoice in invoices::generate(args.seed, args.count) {
        let changed = write(&out, &invoice).unwrap_or_else(|e| {
            fail(&format!(
                "cannot write {} under {}: {e}",
                invoice.id,
                out.display()
            ))
        });
        let pages = invoice.pages.len();
        if json {
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
    if json {
        let summary = json!({
            "out": out.display().to_string(),
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
            out.display()
        );
    }
}
