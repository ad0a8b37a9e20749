//! The release Lambdas through the local executor (`make bench-local`; figures, not pass/fail).
//! Against a stack deployed with release zips (`DOCKET_ZIPS`, the zips' directory): three
//! one-page invoices run through the pipeline, and one padded to the largest size the config
//! admits (`limits.max_document_bytes`: ingest holds it whole), then every function the runs did
//! not reach is invoked once with an empty event (it answers an error: its init and its refusal
//! are what is measured). From every function's REPORT lines: its cold starts' `Init Duration`
//! (the executor's spawn to the runtime's first `next`) and the most `Max Memory Used` (the
//! process's peak RSS) of any invocation, beside its configured memory; and the zip's size.

use std::collections::BTreeMap;

use docket_e2e::metering::report_field;
use docket_e2e::stack::{invoice_lines, invoice_pdf, tenant, Stack};

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
        stack.upload(&format!("inbox/{tenant}/{name}"), pdf).await;
        let run = loop {
            if let Some(run) = stack
                .executions_of(&Stack::document_id(&tenant, &name))
                .await
                .pop()
            {
                break run;
            }
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        };
        stack.wait_for_execution(&run).await;
    }

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
