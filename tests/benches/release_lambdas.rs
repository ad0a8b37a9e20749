//! The release Lambdas through the local executor (`make bench-local`; figures, not pass/fail).
//! Against a stack deployed with release zips (`DOCKET_ZIPS`, the zips' directory): three
//! one-page invoices run through the pipeline, and one padded to the largest size the config
//! admits (`limits.max_document_bytes`: ingest holds it whole), and one of as many full pages as
//! the config admits (`limits.max_pages`: the OCR functions read its job's every answer and
//! validate its every word; its pages are served from our local Textract's cache, stored by
//! this bench, not read by Tesseract), then every function the runs did not reach is invoked
//! once with an empty event (it answers an error: its init and its refusal are what is
//! measured). From every function's REPORT lines: its cold starts' `Init Duration`
//! (the executor's spawn to the runtime's first `next`) and the most `Max Memory Used` (the
//! process's peak RSS) of any invocation, beside its configured memory; and the zip's size.

use std::collections::BTreeMap;

use docket_core::ids::sha256_hex;
use docket_e2e::metering::report_field;
use docket_e2e::render::pdf_in;
use docket_e2e::stack::{invoice_lines, invoice_pdf, tenant, Stack};
use docket_e2e::util;
use reqwest::Method;
use serde_json::{json, Value};

/// What a function's REPORT lines said: init durations (ms) and the peak RSS (MB) seen.
#[derive(Default)]
struct Reports {
    inits: Vec<f64>,
    peak_mb: f64,
    invocations: usize,
}

async fn reports(stack: &Stack, group: &str) -> Reports {
    let mut seen = Reports::default();
    for message in stack.log_messages(group, None).await {
        let Some(report) = message.trim_start().strip_prefix("REPORT ") else {
            continue;
        };
        seen.invocations += 1;
        seen.inits.extend(report_field(report, "Init Duration: "));
        seen.peak_mb = seen
            .peak_mb
            .max(report_field(report, "Max Memory Used: ").unwrap_or(0.0));
    }
    seen
}

/// Lines of a full page at 9 points: 49 of about 95 characters (14 to 16 words).
const LINES_A_PAGE: usize = 49;

/// A PDF of `pages` full pages at 9 points, and its pages as our local Textract's cache keeps
/// them (at 200 dpi, a word's box from its place in its line).
fn full_pages(pages: u32) -> (Vec<u8>, Value) {
    const WORDS: &str = "quantity description delivered service net amount unit price";
    let words: Vec<&str> = WORDS.split(' ').collect();
    let text: Vec<Vec<String>> = (0..pages as usize)
        .map(|p| {
            (0..LINES_A_PAGE)
                .map(|l| {
                    let mut line = format!("p{p} l{l}");
                    for word in words.iter().cycle().skip(p + l) {
                        if line.len() > 88 {
                            break;
                        }
                        line = format!("{line} {word}");
                    }
                    line
                })
                .collect()
        })
        .collect();
    let (char_px, line_px) = (12, 36);
    let cached: Vec<Value> = text
        .iter()
        .map(|lines| {
            let lines: Vec<Value> = lines
                .iter()
                .enumerate()
                .map(|(l, line)| {
                    let mut left = 200;
                    let words: Vec<Value> = line
                        .split(' ')
                        .map(|word| {
                            let width = word.len() as i64 * char_px;
                            let box_ = [left, 200 + l as i64 * line_px, width, 25];
                            left += width + char_px;
                            json!({"text": word, "confidence": 95.0, "box": box_})
                        })
                        .collect();
                    json!({ "words": words })
                })
                .collect();
            json!({"width": 1700, "height": 2200, "lines": lines})
        })
        .collect();
    let refs: Vec<Vec<&str>> = text
        .iter()
        .map(|lines| lines.iter().map(String::as_str).collect())
        .collect();
    let pages: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
    (pdf_in(&pages, 9), Value::Array(cached))
}

/// Uploads `name` and waits for its run's execution to end.
async fn run_through(stack: &Stack, tenant: &str, name: &str, bytes: Vec<u8>) {
    stack.upload(&format!("inbox/{tenant}/{name}"), bytes).await;
    let run = loop {
        if let Some(run) = stack
            .executions_of(&Stack::document_id(tenant, name))
            .await
            .pop()
        {
            break run;
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    };
    stack.wait_for_execution(&run).await;
}

#[tokio::main]
async fn main() {
    let zips = std::env::var("DOCKET_ZIPS").expect("DOCKET_ZIPS: the release zips' directory");
    let stack = Stack::load().await;
    let tenant = tenant();
    let limit = docket_core::config::PipelineConfig::builtin()
        .limits
        .max_document_bytes as usize;
    for i in 0..4 {
        let name = format!("release-{i}.pdf");
        let mut pdf = invoice_pdf(&invoice_lines(
            &format!("INV-2026-{}", 3300 + i),
            "1,234.50",
        ));
        if i == 3 {
            // Padded after its end with a PDF comment, to the size limit.
            pdf.extend_from_slice(b"\n%");
            pdf.resize(limit, b' ');
        }
        run_through(&stack, &tenant, &name, pdf).await;
    }
    let max_pages = docket_core::config::PipelineConfig::builtin()
        .limits
        .max_pages;
    let (long, pages) = full_pages(max_pages);
    let scale = util::textract_scale(Method::GET, &Value::Null).await;
    let store = json!({"sha256": sha256_hex(&long), "pages": pages});
    util::textract_scale(Method::POST, &json!({"cache": true, "store": store})).await;
    run_through(&stack, &tenant, "release-pages.pdf", long).await;
    util::textract_scale(Method::POST, &json!({"cache": scale["cache"]})).await;
    println!("bench: one run of {max_pages} full pages ({LINES_A_PAGE} lines of 9 points each)");

    let functions: Vec<_> = stack
        .lambda
        .list_functions()
        .into_paginator()
        .items()
        .send()
        .collect::<Result<_, _>>()
        .await
        .expect("list functions");
    // The stack's functions by their zip's name (`<stack>-<zip stem>`).
    let mut zip_files: Vec<(String, u64)> = std::fs::read_dir(&zips)
        .expect("zips directory")
        .filter_map(Result::ok)
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().to_string();
            let stem = file.strip_suffix(".zip")?.to_string();
            Some((stem, e.metadata().ok()?.len()))
        })
        .collect();
    zip_files.sort_by_key(|(stem, _)| std::cmp::Reverse(stem.len()));
    let mut rows: BTreeMap<String, (Reports, u64, i32)> = BTreeMap::new();
    for function in &functions {
        let name = function.function_name().unwrap_or_default().to_string();
        let Some((stem, zip)) = zip_files
            .iter()
            .find(|(stem, _)| name.ends_with(&format!("-{stem}")))
        else {
            continue;
        };
        let group = format!("/aws/lambda/{name}");
        let mut seen = reports(&stack, &group).await;
        if seen.invocations == 0 {
            // Not reached by the runs: one invoke with an empty event (refused by the handler).
            let _ = stack
                .lambda
                .invoke()
                .function_name(&name)
                .payload(aws_sdk_lambda::primitives::Blob::new("{}"))
                .send()
                .await;
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            seen = reports(&stack, &group).await;
        }
        let memory = function.memory_size().unwrap_or_default();
        rows.insert(stem.clone(), (seen, *zip, memory));
    }

    println!("bench: release Lambdas through the local executor (host build, release profile)");
    println!(
        "bench:   {:<18} {:>8} {:>14} {:>13} {:>10} {:>10}",
        "function", "zip KB", "init ms (n)", "peak RSS MB", "memory MB", "invokes"
    );
    for (name, (seen, zip, memory)) in &rows {
        let mut inits = seen.inits.clone();
        inits.sort_by(|a, b| a.total_cmp(b));
        let init = inits.get(inits.len() / 2).copied();
        println!(
            "bench:   {:<18} {:>8.0} {:>14} {:>13.0} {:>10} {:>10}",
            name,
            *zip as f64 / 1024.0,
            init.map_or("-".to_string(), |ms| format!("{ms:.1} ({})", inits.len())),
            seen.peak_mb,
            memory,
            seen.invocations
        );
    }
}
