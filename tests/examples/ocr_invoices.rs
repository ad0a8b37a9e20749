//! Writes each evaluation invoice's normalized OCR (`ocr.json` beside `document.*` under
//! `tests/fixtures/invoices/`) from our local Textract, the way the pipeline's OCR step reads a
//! document: the document in S3, an asynchronous text detection job, its blocks normalized by
//! `docket_aws::textract::normalize`. `make eval-ocr` runs it against a running local AWS;
//! `make eval` then needs no OCR engine.
//!
//! `cargo run -p docket-e2e --example ocr_invoices -- --help`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aws_sdk_textract::types::{DocumentLocation, JobStatus, S3Object};
use clap::Parser;
use docket_e2e::util;
use serde_json::json;

const BUCKET: &str = "docket-eval-ocr";
/// The normalized OCR of every evaluation invoice, from the local Textract.
#[derive(Parser)]
#[command(
    name = "ocr_invoices",
    after_help = "Needs a running local AWS (make localstack-up; AWS_ENDPOINT_URL names it)."
)]
struct Args {
    /// The evaluation set [default: tests/fixtures/invoices].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Only invoices whose folder path contains TEXT.
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// Read again the invoices that already have an ocr.json.
    #[arg(long)]
    force: bool,
    /// text (a line an invoice as it goes) or json (a summary at the end).
    #[arg(long, value_parser = ["text", "json"], default_value = "text")]
    output: String,
}

fn fail(message: &str) -> ! {
    eprintln!("ocr_invoices: {message}");
    std::process::exit(1);
}

/// Every `<set>/<id>/document.*` under `dir`, sorted.
fn documents(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for set in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        for invoice in std::fs::read_dir(set.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            for file in std::fs::read_dir(invoice.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let name = file.file_name().to_string_lossy().to_string();
                if name.starts_with("document.") {
                    found.push(file.path());
                }
            }
        }
    }
    found.sort();
    found
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let dir = args
        .dir
        .unwrap_or_else(|| util::workspace_root().join("tests/fixtures/invoices"));
    let json = args.output == "json";
    let cfg = util::aws().await;
    let s3 = util::s3(&cfg);
    let textract = aws_sdk_textract::Client::new(&cfg);
    if let Err(e) = s3.create_bucket().bucket(BUCKET).send().await {
        let owned = e
            .as_service_error()
            .is_some_and(|e| e.is_bucket_already_owned_by_you());
        if !owned {
            fail(&format!(
                "cannot create bucket {BUCKET} (is the local AWS up?): {e:?}"
            ));
        }
    }

    let all = documents(&dir);
    let todo: Vec<&PathBuf> = all
        .iter()
        .filter(|p| {
            let shown = p.to_string_lossy();
            args.only
                .as_ref()
                .is_none_or(|o| shown.contains(o.as_str()))
        })
        .filter(|p| args.force || !p.with_file_name("ocr.json").exists())
        .collect();
    let mut written = Vec::new();
    for (n, path) in todo.iter().enumerate() {
        let started = Instant::now();
        let key = path
            .strip_prefix(&dir)
            .unwrap_or(path)
            .to_string_lossy()
            .to_string();
        let body = std::fs::read(path).expect("a readable document");
        s3.put_object()
            .bucket(BUCKET)
            .key(&key)
            .body(body.into())
            .send()
            .await
            .expect("put the document");
        let doc = detect(&textract, &key).await;
        let out = path.with_file_name("ocr.json");
        let mut text = serde_json::to_string_pretty(&doc).expect("OCR as JSON");
        text.push('\n');
        std::fs::write(&out, text).expect("write ocr.json");
        let lines: usize = doc.pages.iter().map(|p| p.lines.len()).sum();
        if !json {
            println!(
                "[{}/{}] {key}: {} page(s), {lines} lines, {:.1} s",
                n + 1,
                todo.len(),
                doc.pages.len(),
                started.elapsed().as_secs_f64()
            );
        }
        written.push(json!({"document": key, "pages": doc.pages.len(), "lines": lines}));
    }
    if json {
        let summary = json!({"found": all.len(), "written": written});
        println!("{}", serde_json::to_string_pretty(&summary).unwrap());
    } else {
        println!(
            "{} invoice(s), {} read, {} already had their OCR",
            all.len(),
            written.len(),
            all.len() - todo.len()
        );
    }
}

/// Runs one text detection job on `key` and returns the normalized document.
async fn detect(textract: &aws_sdk_textract::Client, key: &str) -> docket_core::ocr::OcrDocument {
    let location = DocumentLocation::builder()
        .s3_object(S3Object::builder().bucket(BUCKET).name(key).build())
        .build();
    let job = textract
        .start_document_text_detection()
        .document_location(location)
        .send()
        .await
        .unwrap_or_else(|e| fail(&format!("{key}: StartDocumentTextDetection: {e:?}")));
    let job_id = job.job_id().expect("a job id").to_string();
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let mut blocks = Vec::new();
        let mut next: Option<String> = None;
        let mut model = String::new();
        loop {
            let out = textract
                .get_document_text_detection()
                .job_id(&job_id)
                .max_results(1000)
                .set_next_token(next)
                .send()
                .await
                .unwrap_or_else(|e| fail(&format!("{key}: GetDocumentTextDetection: {e:?}")));
            match out.job_status() {
                Some(JobStatus::InProgress) => break,
                Some(JobStatus::Failed) => fail(&format!(
                    "{key}: the job failed: {}",
                    out.status_message().unwrap_or("no message")
                )),
                _ => {}
            }
            model = out
                .detect_document_text_model_version()
                .unwrap_or(&model)
                .to_string();
            blocks.extend(out.blocks().iter().cloned());
            next = out.next_token().map(str::to_string);
            if next.is_none() {
                let engine = format!("{}:{model}", docket_aws::textract::ENGINE);
                return docket_aws::textract::normalize(&blocks, &engine);
            }
        }
        if Instant::now() > deadline {
            fail(&format!(
                "{key}: job {job_id} still running after 10 minutes"
            ));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
