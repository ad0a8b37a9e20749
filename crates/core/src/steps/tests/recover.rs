//! A run's technical end, recorded from its execution's status change, and its reopening for a
//! redrive (`steps::recover`).

use super::*;
use crate::ports::{RunRecord, RunStatus};
use crate::steps::recover::{self, Reopened};

impl World {
    async fn record_of(&self, run: &RunInput) -> RunRecord {
        self.ports.store.run(&run.run_id).await.unwrap().unwrap()
    }

    async fn fail(&self, run: &RunInput) -> Option<RunStatus> {
        let record = self.record_of(run).await;
        recover::fail(
            &self.ports,
            &self.ctx,
            &record,
            "Transient.Dependency",
            "FAILED",
        )
        .await
        .unwrap()
    }

    async fn reopen(&self, run: &RunInput) -> Reopened {
        recover::reopen(&self.ports, &self.ctx, &run.run_id)
            .await
            .unwrap()
    }
}

fn count(chain: &[String], action: &str) -> usize {
    chain.iter().filter(|a| *a == action).count()
}

#[tokio::test]
async fn a_technical_failure_is_recorded_once_and_never_over_a_finished_run() {
    // given a run waiting in OCR, and another that completed
    let w = world();
    let waiting = w.ocr_ready().await;
    let done = w.input_of(
        &w.ingest(&w.upload("inbox/acme/done.png", TIFF, "2026-11-30T10:00:00Z"))
            .await,
    );
    w.script_ocr("inbox/acme/done.png", ocr_of(&invoice_lines("10.00"), 0.97));
    assert_eq!(w.run(&done).await.unwrap().0, "completed");

    // when each one's execution is reported failed, twice
    let mut ended = vec![];
    for _ in 0..2 {
        ended.push((w.fail(&waiting).await, w.fail(&done).await));
    }

    // then the waiting run is failed with the error's name, from `started`, audited once; the
    // completed run stays completed, with no failure entry
    assert_eq!(ended, vec![(Some(RunStatus::Started), None); 2]);
    let run = w.record_of(&waiting).await;
    assert_eq!(
        (run.status, run.error.as_deref()),
        (RunStatus::Failed, Some("Transient.Dependency"))
    );
    assert_eq!(
        count(&w.chain_of(&waiting.document_id).await, "run.failed"),
        1
    );
    assert_eq!(w.record_of(&done).await.status, RunStatus::Completed);
    assert_eq!(count(&w.chain_of(&done.document_id).await, "run.failed"), 0);
}

#[tokio::test]
async fn a_failed_run_reopens_to_where_it_failed_once_and_can_fail_again() {
    // given a run that failed in OCR, and one that failed while awaiting review
    let w = world();
    let in_ocr = w.ocr_ready().await;
    w.script_ocr(
        "inbox/acme/blurry.png",
        ocr_of(&invoice_lines("10.00"), 0.40),
    );
    let in_review = w.input_of(
        &w.ingest(&w.upload("inbox/acme/blurry.png", TIFF, "2026-11-30T10:00:00Z"))
            .await,
    );
    assert_eq!(w.run(&in_review).await.unwrap().0, "needs_review");
    assert_eq!(w.fail(&in_ocr).await, Some(RunStatus::Started));
    assert_eq!(w.fail(&in_review).await, Some(RunStatus::AwaitingReview));

    // when each is reopened, twice
    let first = (w.reopen(&in_ocr).await, w.reopen(&in_review).await);
    let second = (w.reopen(&in_ocr).await, w.reopen(&in_review).await);

    // then each is back where it failed, with one `run.redriven` entry; the second reopen
    // finds nothing to do
    assert_eq!(
        first,
        (
            Reopened::To(RunStatus::Started),
            Reopened::To(RunStatus::AwaitingReview)
        )
    );
    assert_eq!(
        second,
        (
            Reopened::NotFailed(RunStatus::Started),
            Reopened::NotFailed(RunStatus::AwaitingReview)
        )
    );
    assert_eq!(
        w.record_of(&in_review).await.status,
        RunStatus::AwaitingReview
    );
    let chain = w.chain_of(&in_ocr.document_id).await;
    assert_eq!(count(&chain, "run.redriven"), 1);
    assert_eq!(chain.last().map(String::as_str), Some("run.redriven"));

    // and a redriven run that fails again is recorded failed again, then completes when
    // reopened and run
    assert_eq!(w.fail(&in_ocr).await, Some(RunStatus::Started));
    assert_eq!(
        count(&w.chain_of(&in_ocr.document_id).await, "run.failed"),
        2
    );
    assert_eq!(w.reopen(&in_ocr).await, Reopened::To(RunStatus::Started));
    assert_eq!(w.run(&in_ocr).await.unwrap().0, "completed");
}

#[tokio::test]
async fn a_run_with_no_record_is_not_reopened() {
    let w = world();
    let _ = w.ocr_ready().await;
    let ghost = crate::memory::test_run(
        &crate::ids::Tenant::parse("acme").unwrap(),
        "none.png",
        "v1",
    );
    let refused = recover::reopen(&w.ports, &w.ctx, &ghost).await;
    assert!(matches!(refused, Err(Error::BadInput(_))), "{refused:?}");
}
