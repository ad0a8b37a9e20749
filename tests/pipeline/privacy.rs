//! Document content stays out of execution history and logs: a canary printed in a document is
//! read by OCR (it is in the normalized OCR) but appears in no history event and no log line.

use std::time::Duration;

use docket_e2e::stack::{invoice_lines, invoice_pdf, s, tenant, Stack};

/// A word and a number that OCR reads back exactly (random letters it does not: it has no
/// dictionary to lean on), unique per run.
struct Canary {
    word: &'static str,
    number: String,
}

impl Canary {
    fn new() -> Canary {
        const WORDS: [&str; 5] = ["PELICAN", "MARMALADE", "ZANZIBAR", "QUOKKA", "HALIBUT"];
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        Canary {
            word: WORDS[nanos as usize % WORDS.len()],
            number: (10000 + nanos % 90000).to_string(),
        }
    }

    /// As printed in the document.
    fn printed(&self) -> String {
        format!("{} {}", self.word, self.number)
    }

    /// The form of the canary found in `text`, if any: the word in any case (alone, as a field
    /// value or a fragment of a line would carry it), or the number right after the word with
    /// any separator (`PELICAN 12345`, `pelican_12345`, `Pelican\u0020 12345`, ...).
    fn found_in(&self, text: &str) -> Option<String> {
        let lower = text.to_lowercase();
        let word = self.word.to_lowercase();
        let at = lower.find(&word)?;
        let after = &lower[at + word.len()..];
        let number_follows = after
            .find(|c: char| c.is_ascii_digit())
            .filter(|&gap| gap <= 8 && !after[..gap].chars().any(char::is_alphabetic))
            .is_some_and(|gap| after[gap..].starts_with(&self.number));
        Some(if number_follows {
            format!("{} and its number", self.word)
        } else {
            format!("the word {}", self.word)
        })
    }
}

#[test]
fn the_canary_is_found_in_each_form_a_leak_could_take() {
    let canary = Canary {
        word: "PELICAN",
        number: "12345".into(),
    };
    for leak in [
        "x PELICAN 12345 y",
        "{\"reference\":\"pelican-12345\"}",
        "Pelican\\u0020 12345",
        "ref=PELICAN",
        "pelican",
    ] {
        assert!(canary.found_in(leak).is_some(), "{leak:?} not found");
    }
    for clean in ["PELICA N", "12345", "duration 12345 ms"] {
        assert_eq!(canary.found_in(clean), None, "{clean:?}");
    }
}

/// Every message of every docket log group in CloudWatch Logs.
pub(crate) async fn all_log_messages(stack: &Stack) -> Vec<(String, String)> {
    let mut messages = Vec::new();
    let groups = stack.logs.describe_log_groups().send().await.unwrap();
    for group in groups.log_groups() {
        let name = group.log_group_name().unwrap_or_default();
        if !name.contains("docket") {
            continue;
        }
        for message in stack.log_messages(name, None).await {
            messages.push((name.to_string(), message));
        }
    }
    messages
}

#[tokio::test]
async fn a_canary_printed_in_a_document_appears_in_no_history_and_no_log() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let canary = Canary::new();
    let mut lines = invoice_lines("INV-2026-0042", "1,234.50");
    lines.insert(1, format!("Reference {}", canary.printed()));
    let document = Stack::document_id(&tenant, "canary.pdf");
    stack
        .upload(&format!("inbox/{tenant}/canary.pdf"), invoice_pdf(&lines))
        .await;

    let runs = stack.wait_for_runs(&document, 1).await;
    let run_id = s(&runs[0], "runId");
    stack.wait_for_execution(&run_id).await;
    let ocr_key = format!("{tenant}/{document}/{run_id}/ocr.json");
    let ocr = stack
        .json(&format!("s3://{}/{ocr_key}", stack.out("NormalizedBucket")))
        .await;
    let history = format!("{:?}", stack.history(&run_id).await);
    // Logs reach CloudWatch asynchronously; give them a moment.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let logs = all_log_messages(&stack).await;

    assert!(
        ocr.to_string().contains(&canary.printed()),
        "the canary must be read by OCR, or this test proves nothing"
    );
    // The history searched holds the run: its input and every step's output.
    for state in ["StartOcr", "Validate", "Route"] {
        assert!(
            history.contains(&format!("\"{state}\"")),
            "{state} is not in the history read: the check proves nothing"
        );
    }
    if let Some(form) = canary.found_in(&history) {
        panic!("canary ({form}) in execution history");
    }
    for (group, message) in &logs {
        if let Some(form) = canary.found_in(message) {
            panic!("canary ({form}) in {group}: {message}");
        }
    }
    // Every JSON line of the steps' functions (this run's and any other's) names the document,
    // the run and the operation; and each step of this run logged (the search above read them).
    let step_lines: Vec<(&str, serde_json::Value)> = logs
        .iter()
        .filter_map(|(group, message)| {
            let function = STEP_FUNCTIONS.iter().find(|f| group.ends_with(*f))?;
            Some((
                *function,
                serde_json::from_str::<serde_json::Value>(message).ok()?,
            ))
        })
        // The one line a function logs at init, before any step, when it runs with SDK fault
        // injection (the soak's configuration): no document exists then. A local stack keeps
        // those lines, so a later `make test` on it reads them.
        .filter(|(_, line)| line["fields"]["message"] != docket_aws::faults::ENABLED_LINE)
        .collect();
    for function in ["-ocr", "-validate", "-route"] {
        let ours = step_lines
            .iter()
            .filter(|(f, l)| *f == function && l["span"]["runId"] == run_id.as_str())
            .count();
        assert!(ours >= 1, "no {function} log line of this run was read");
    }
    for (_, line) in &step_lines {
        // A metric line (CloudWatch EMF, `_aws`) carries the ids at its top level.
        let ids = if line.get("_aws").is_some() {
            line
        } else {
            &line["span"]
        };
        for field in ["documentId", "runId", "operationId"] {
            let value = ids[field].as_str().unwrap_or_default();
            assert!(!value.is_empty(), "{field} missing: {line}");
        }
    }
}

/// The log groups of the functions that run a step, by the end of their names.
const STEP_FUNCTIONS: [&str; 4] = ["-ocr", "-validate", "-route", "-review-callback"];
