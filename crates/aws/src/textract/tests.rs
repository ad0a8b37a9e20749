//! The client as it meets a provider that refuses: against a stand-in Textract on 127.0.0.1
//! that answers every call with `ProvisionedThroughputExceededException` and counts the
//! requests it read, one call of ours is one request on the wire; a job's answers, read one at
//! a time (each after the first in its turn), with a page limit.

use std::sync::atomic::{AtomicUsize, Ordering};

use docket_core::ids::Tenant;
use docket_core::ports::Unpaced;

use super::*;
use crate::stand_in::{sdk_config, Answer, StandIn};

const REFUSAL: &str = r#"{"__type":"ProvisionedThroughputExceededException","Message":"The number of requests exceeded your throughput limit."}"#;

/// A stand-in Textract refusing every call.
fn refusing() -> StandIn {
    StandIn::answering(|_| (400, vec![("x-amzn-requestid", "refused")], REFUSAL.into()))
}

fn operation() -> OperationId {
    let run = docket_core::memory::test_run(&Tenant::parse("acme").unwrap(), "a.png", "v1");
    OperationId::new(&run, "ocr", None)
}

#[tokio::test]
async fn a_refused_call_is_one_request_the_sdk_does_not_send_again_outside_admission() {
    let provider = refusing();
    let textract = TextractOcr::new(&sdk_config(provider.port).await);
    let document = ObjectRef::new("inbox", "acme/a.png");

    let read = textract.detect(&operation(), &document, None).await;
    let started = textract.start(&operation(), &document, "run").await;

    let read = read.expect_err("refused");
    assert_eq!(read.name(), "Transient.Dependency", "{read}");
    assert!(
        read.to_string()
            .contains("ProvisionedThroughputExceededException"),
        "{read}"
    );
    let started = started.expect_err("refused");
    assert_eq!(started.name(), "Transient.Dependency", "{started}");
    assert_eq!(provider.seen().len(), 2, "one request a call, no SDK retry");
}

/// A pace that lets every call go and counts them.
#[derive(Default)]
struct Counted(AtomicUsize);

impl CallPace for Counted {
    async fn next_call(&self) -> Result<(), Error> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// A finished job's answer of `pages` pages, carrying `blocks` and, if `next`, a `NextToken`.
fn job_answer(pages: u32, blocks: serde_json::Value, next: Option<&str>) -> Answer {
    let mut body = serde_json::json!({
        "JobStatus": "SUCCEEDED",
        "DocumentMetadata": {"Pages": pages},
        "DetectDocumentTextModelVersion": "1.0",
        "Blocks": blocks,
    });
    if let Some(next) = next {
        body["NextToken"] = next.into();
    }
    (200, vec![("x-amzn-requestid", "r")], body.to_string())
}

fn block(kind: &str, id: &str, page: u32, text: &str, children: &[&str]) -> serde_json::Value {
    serde_json::json!({
        "BlockType": kind, "Id": id, "Page": page, "Text": text, "Confidence": 90.0,
        "Relationships": [{"Type": "CHILD", "Ids": children}],
    })
}

#[tokio::test]
async fn a_job_of_more_pages_than_the_limit_is_refused_at_its_first_answer() {
    let first = serde_json::json!([block("PAGE", "p1", 1, "", &[])]);
    let provider = StandIn::scripted(vec![
        job_answer(3, first.clone(), Some("more")),
        job_answer(3, first, None),
    ]);
    let textract = TextractOcr::new(&sdk_config(provider.port).await);

    let polled = textract.poll(&operation(), "job-1", 2, &Unpaced).await;

    let refused = polled.expect_err("refused");
    assert_eq!(refused.name(), "Business.TooManyPages", "{refused}");
    assert!(
        refused.to_string().contains("3 pages, limit 2"),
        "{refused}"
    );
    assert_eq!(provider.seen().len(), 1, "the job's text was not fetched");
}

#[tokio::test]
async fn a_line_whose_words_come_in_the_next_answer_is_read_whole() {
    // Page 2 is read first, and line `l2`'s second word arrives with the second answer.
    let first = serde_json::json!([
        block("PAGE", "p2", 2, "", &["l2"]),
        block("LINE", "l2", 2, "Total 10.00", &["w2", "w3"]),
        block("WORD", "w2", 2, "Total", &[]),
        block("PAGE", "p1", 1, "", &["l1"]),
    ]);
    let second = serde_json::json!([
        block("WORD", "w3", 2, "10.00", &[]),
        block("LINE", "l1", 1, "Invoice", &["w1"]),
        block("WORD", "w1", 1, "Invoice", &[]),
    ]);
    let provider = StandIn::scripted(vec![
        job_answer(2, first, Some("more")),
        job_answer(2, second, None),
    ]);
    let textract = TextractOcr::new(&sdk_config(provider.port).await);
    let pace = Counted::default();

    let polled = textract
        .poll(&operation(), "job-1", 2, &pace)
        .await
        .unwrap();

    let OcrPoll::Succeeded(read) = polled else {
        panic!("not read: {polled:?}");
    };
    assert_eq!(provider.seen().len(), 2);
    assert_eq!(
        pace.0.load(Ordering::SeqCst),
        1,
        "the second answer waited for its turn"
    );
    assert_eq!(read.engine, "textract:DetectDocumentText:1.0");
    // Each page as "number: line text [its words]".
    let pages: Vec<String> = read
        .pages
        .iter()
        .flat_map(|p| {
            p.lines.iter().map(move |l| {
                let words: Vec<&str> = l.words.iter().map(|w| w.text.as_str()).collect();
                format!("{}: {} {words:?}", p.number, l.text)
            })
        })
        .collect();
    assert_eq!(
        pages,
        [
            r#"1: Invoice ["Invoice"]"#,
            r#"2: Total 10.00 ["Total", "10.00"]"#
        ]
    );
    assert_eq!(read.pages[1].lines[0].words[1].confidence, 0.9);
}
