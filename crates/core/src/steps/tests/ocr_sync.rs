//! A one-page document read by the provider's synchronous API: no job, no wait, the Task's wait
//! ended by its own invocation; read again after a transient failure; a job after all when the
//! provider reads the document only as one.

use super::*;
use crate::ledger::LedgerStatus;
use crate::ports::Ledger;

const ONE_PAGE_KEY: &str = "inbox/acme/one.png";

impl World {
    /// A one-page upload (a PNG) whose OCR is scripted as `answer`, ingested: its run.
    async fn one_page_ready(&self, answer: OcrPoll) -> RunInput {
        self.script_ocr(ONE_PAGE_KEY, answer);
        let event = self.upload(ONE_PAGE_KEY, PNG, "2026-11-30T10:00:00Z");
        self.input_of(&self.ingest(&event).await)
    }

    async fn ocr_record(&self, input: &RunInput) -> crate::ledger::OperationRecord {
        let op = Step::Ocr.operation(&input.run_id);
        let record = self.ports.store.ledger.get(&op).await.unwrap();
        record.expect("a ledger record")
    }

    fn detects(&self) -> usize {
        *self.ports.ocr.detect_calls.lock().unwrap()
    }
}

fn token(name: &str) -> TaskToken {
    TaskToken::new(name).unwrap()
}

fn two_pages() -> OcrPoll {
    let OcrPoll::Succeeded(mut document) = ocr_of(&invoice_lines("10.00"), 0.97) else {
        unreachable!()
    };
    document.pages.push(document.pages[0].clone());
    OcrPoll::Succeeded(document)
}

#[tokio::test]
async fn a_one_page_document_is_read_at_once_and_its_task_s_wait_ends_without_a_job() {
    // given an uploaded PNG (one page, as ingest records), its read booked at its start
    let w = world();
    let mut input = w
        .one_page_ready(ocr_of(&invoice_lines("10.00"), 0.97))
        .await;
    assert_eq!(input.pages, Some(1));
    input.read_at_ms = Some(1_234);
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.pages, Some(1), "the run records it for a reprocess");

    // when its OCR Task runs
    let ended = wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-1")).await;

    // then the document was read once, synchronously: no job, nothing kept to wait on
    let Ok(Ended::Succeeded(polled)) = ended else {
        panic!("{ended:?}")
    };
    assert_eq!(
        polled.pages_read,
        Some(1),
        "one page read (the OcrPages metric)"
    );
    assert_eq!(w.detects(), 1);
    let booked = w.ports.ocr.detects_booked.lock().unwrap().clone();
    assert_eq!(booked, [Some(1_234)], "read at the slot its start booked");
    assert_eq!(
        *w.ports.ocr.start_calls.lock().unwrap(),
        0,
        "no job asked for"
    );
    assert!(w.ports.ocr_waits.waits.lock().unwrap().is_empty());
    // the wait ended by this invocation's own callback, with the normalized OCR
    let calls = w.callbacks();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let output = calls[0].1.as_ref().unwrap();
    let normalized = polled.normalized.unwrap();
    assert_eq!(
        output["normalized"],
        serde_json::to_value(&normalized).unwrap()
    );
    assert!(
        w.ports.blobs.get(&normalized).await.is_ok(),
        "the OCR is stored"
    );
    // the ledger completed the claim directly; the chain has the completion only
    let record = w.ocr_record(&input).await;
    assert_eq!(record.status, LedgerStatus::Completed);
    assert_eq!(record.provider_job_id, None);
    let chain = w.chain_of(&input.document_id).await;
    assert_eq!(chain, ["document.accepted", "ocr.completed"]);
}

#[tokio::test]
async fn a_repeated_task_after_the_read_ends_its_wait_from_the_ledger_without_reading_again() {
    // given a one-page document read once
    let w = world();
    let input = w
        .one_page_ready(ocr_of(&invoice_lines("10.00"), 0.97))
        .await;
    let first = wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-1")).await;
    let Ok(Ended::Succeeded(first)) = first else {
        panic!("{first:?}")
    };

    // when the Task runs again (a duplicate invocation, a retry after a lost callback)
    let again = wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-2")).await;

    // then the same OCR ends its wait; nothing is read or charged twice
    let Ok(Ended::Succeeded(polled)) = again else {
        panic!("{again:?}")
    };
    assert_eq!(polled.normalized, first.normalized);
    assert_eq!(polled.pages_read, None, "no page read the second time");
    assert_eq!(w.detects(), 1);
    assert_eq!(w.callbacks().last().unwrap().0, "tok-2");
    let chain = w.chain_of(&input.document_id).await;
    assert_eq!(chain.iter().filter(|a| *a == "ocr.completed").count(), 1);
    // and the deadline's fallback finds the OCR in the ledger, without a job id to poll
    let reconciled = ocr::reconcile(&w.ports, &w.ctx, &input).await.unwrap();
    assert_eq!(reconciled.normalized, first.normalized);
}

#[tokio::test]
async fn a_read_that_failed_transiently_gives_the_lease_up_and_the_retry_reads_at_once() {
    // given a one-page document whose first read finds the quota full, and whose second loses
    // its answer
    let w = world();
    let input = w
        .one_page_ready(ocr_of(&invoice_lines("10.00"), 0.97))
        .await;
    w.ports.ocr.fail_detects.lock().unwrap().extend([
        Error::QuotaFull("textract-DetectDocumentText: busy".into()),
        Error::OutcomeUnknown("read timed out".into()),
    ]);

    // when the Task runs, and the state machine retries it twice at once (same instant)
    let first = w.start(&input).await;
    let second = w.start(&input).await;
    let third = w.start(&input).await;

    // then the failures were reported for a retry, each giving its lease up, and the third
    // read the document: three reads, no job, one completion
    assert_eq!(first.unwrap_err().name(), "Transient.QuotaFull");
    assert_eq!(second.unwrap_err().name(), "Ambiguous.OutcomeUnknown");
    let done = third.unwrap().done.expect("read at once");
    assert!(done.normalized.is_some());
    assert_eq!(w.detects(), 3);
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), 0);
    assert_eq!(w.ocr_record(&input).await.status, LedgerStatus::Completed);
    let chain = w.chain_of(&input.document_id).await;
    assert_eq!(chain, ["document.accepted", "ocr.completed"]);
}

#[tokio::test]
async fn a_document_the_provider_reads_only_as_a_job_gets_one_after_all() {
    // given a "one-page" upload the provider finds has two pages
    let w = world();
    let input = w.one_page_ready(two_pages()).await;

    // when its OCR Task runs, and the job's notification ends its wait
    let normalized = w.ocr(&input).await.unwrap();

    // then one read was tried, then one job started and completed the operation
    assert_eq!(w.detects(), 1);
    assert_eq!(w.ports.ocr.job_count(), 1);
    let record = w.ocr_record(&input).await;
    assert_eq!(record.status, LedgerStatus::Completed);
    assert!(record.provider_job_id.is_some());
    assert_eq!(record.result_pointer, Some(normalized.to_string()));
    let chain = w.chain_of(&input.document_id).await;
    assert_eq!(chain, ["document.accepted", "ocr.started", "ocr.completed"]);
}

#[tokio::test]
async fn a_document_the_provider_cannot_read_fails_the_run_with_its_name() {
    // given a one-page upload the provider refuses
    let w = world();
    let input = w
        .one_page_ready(OcrPoll::Failed("BadDocumentException".into()))
        .await;

    // when its OCR Task runs
    let ended = wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-1")).await;

    // then the run and the operation failed with Business.OcrFailed; no job was asked for
    assert_eq!(ended.unwrap_err().name(), "Business.OcrFailed");
    assert_eq!(w.ocr_record(&input).await.status, LedgerStatus::Failed);
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), 0);
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    let chain = w.chain_of(&input.document_id).await;
    assert_eq!(chain, ["document.accepted", "ocr.failed"]);
}

#[tokio::test]
async fn a_job_start_whose_answer_was_lost_is_asked_again_not_read_again() {
    // given a "one-page" upload the provider reads only as a job, whose job start's answer is
    // lost
    let w = world();
    let input = w.one_page_ready(two_pages()).await;
    *w.ports.ocr.lose_start_answers.lock().unwrap() = 1;
    let lost = w.start(&input).await;
    assert_eq!(lost.unwrap_err().name(), "Ambiguous.OutcomeUnknown");

    // when the state machine retries the Task
    let retried = w.start(&input).await.unwrap();

    // then the retry asked for the job with the same token (the one job), without a read
    assert_eq!(w.detects(), 1, "read once, before the first start");
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), 2);
    assert_eq!(w.ports.ocr.job_count(), 1);
    assert_eq!(
        Some(retried.job_id),
        w.ports.ocr.job_of(&Step::Ocr.operation(&input.run_id))
    );
}
