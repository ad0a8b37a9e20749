//! The downstream receipt as the deployed saga waits for it: the waiting Task's token and the
//! consumer's answer meet in either order, the answer settles `downstream.recorded` once, and
//! the wait is ended once with the receipt or the refusal's name.

use serde_json::Value;

use super::*;
use crate::model::run::TaskToken;
use crate::ports::Outbox;
use crate::saga::sink::Answer;
use crate::steps::saga::Awaited;

impl World {
    /// A run routed through the pipeline (auto-approved, published); its accepted event.
    async fn published_run(&self) -> (RunInput, EventBody) {
        self.published_run_of(READY_KEY).await
    }

    /// [`Self::published_run`] of the same invoice uploaded as `key`.
    async fn published_run_of(&self, key: &str) -> (RunInput, EventBody) {
        self.published_run_at(key, "2026-11-30T10:00:00Z").await
    }

    /// [`Self::published_run_of`] uploaded at `time` (later is newer).
    pub(super) async fn published_run_at(&self, key: &str, time: &str) -> (RunInput, EventBody) {
        self.script_ocr(key, ocr_of(&invoice_lines("10.00"), 0.97));
        let uploaded = self.upload(key, TIFF, time);
        let input = self.input_of(&self.ingest(&uploaded).await);
        let (status, _) = self.run(&input).await.unwrap();
        assert_eq!(status, "completed");
        let record = self.ports.store.outbox.record(&accepted_id(&input)).await;
        (input, record.unwrap().expect("an accepted event").body)
    }

    /// The consumer's answer to `body`, as it applies it.
    pub(super) fn consumer_answer(&self, body: &EventBody) -> Answer {
        match self.ports.downstream.book.lock().unwrap().apply(body) {
            Ok(applied) => Answer::Recorded {
                event_id: body.event_id.clone(),
                receipt_id: applied.receipt().clone(),
                voided_receipt_id: None,
            },
            Err(e) => Answer::refused(&body.event_id, &e),
        }
    }

    async fn await_receipt(&self, input: &RunInput, token: &str) -> Awaited {
        let token = TaskToken::new(token).unwrap();
        saga::await_receipt(&self.ports, &input.run_id, &token)
            .await
            .unwrap()
    }

    pub(super) async fn answer(&self, answer: &Answer) {
        saga::receipt(&self.ports, &self.ctx, answer).await.unwrap();
    }

    /// The callbacks that ended receipt waits (not the OCR Tasks' of `World::run`).
    fn receipt_callbacks(&self) -> Vec<(String, Result<Value, String>)> {
        let calls = self.callbacks().into_iter();
        calls
            .filter(|(token, _)| !token.starts_with("ocr-"))
            .collect()
    }
}

#[tokio::test]
async fn a_receipt_after_the_wait_began_settles_the_effect_and_ends_the_wait_once() {
    let w = world();
    let (input, body) = w.published_run().await;

    assert_eq!(w.await_receipt(&input, "t-1").await, Awaited::Waiting);
    let journal = w.journal(&input).await;
    let recorded = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(
        recorded.evidence,
        Evidence::Uncertain,
        "claimed by the wait"
    );
    assert!(w.receipt_callbacks().is_empty());

    let answer = w.consumer_answer(&body);
    w.answer(&answer).await;
    w.answer(&answer).await;

    let Answer::Recorded { receipt_id, .. } = &answer else {
        panic!("recorded: {answer:?}")
    };
    let journal = w.journal(&input).await;
    let recorded = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(recorded.evidence, Evidence::Confirmed);
    assert_eq!(recorded.ids.receipt_id.as_ref(), Some(receipt_id));
    let record = w.ports.store.outbox.record(&body.event_id).await.unwrap();
    assert_eq!(record.unwrap().delivery, Delivery::ConfirmedDelivered);
    let chain = w.saga_chain(&input).await;
    let settled = chain.iter().filter(|a| *a == "downstream.recorded");
    assert_eq!(settled.count(), 1, "{chain:?}");
    let expected = json!({"status": "recorded", "receiptId": receipt_id});
    assert_eq!(
        w.receipt_callbacks(),
        [
            ("t-1".to_string(), Ok(expected.clone())),
            ("t-1".to_string(), Ok(expected))
        ],
        "each answer ends the wait it finds; Step Functions takes the first"
    );
}

#[tokio::test]
async fn an_answer_that_comes_before_the_wait_is_kept_and_ends_it() {
    let w = world();
    let (input, body) = w.published_run().await;
    let answer = w.consumer_answer(&body);

    w.answer(&answer).await;
    assert!(w.receipt_callbacks().is_empty(), "nobody waits yet");
    assert_eq!(w.await_receipt(&input, "t-1").await, Awaited::Answered);

    let journal = w.journal(&input).await;
    let recorded = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(recorded.evidence, Evidence::Confirmed, "not claimed again");
    let calls = w.receipt_callbacks();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].1.as_ref().unwrap()["status"], "recorded");
}

#[tokio::test]
async fn a_refusal_fails_the_wait_by_its_name_and_is_recorded_once() {
    let w = world();
    let (first, _) = w.published_run().await;
    let first_body = w.ports.store.outbox.record(&accepted_id(&first)).await;
    w.consumer_answer(&first_body.unwrap().unwrap().body);
    // The same invoice under another document: the consumer refuses it.
    let (input, body) = w.published_run_of("inbox/acme/copy.png").await;
    let answer = w.consumer_answer(&body);
    assert!(
        matches!(&answer, Answer::Refused { error, .. } if error == "Business.DuplicateInvoice")
    );

    assert_eq!(w.await_receipt(&input, "t-2").await, Awaited::Waiting);
    w.answer(&answer).await;
    w.answer(&answer).await;

    let journal = w.journal(&input).await;
    let recorded = journal.entry(Effect::DownstreamRecorded);
    assert_eq!(recorded.evidence, Evidence::NotAttempted);
    assert_eq!(
        recorded.note.as_deref(),
        Some("refused: Business.DuplicateInvoice")
    );
    let chain = w.saga_chain(&input).await;
    let refused = chain.iter().filter(|a| *a == "downstream.refused");
    assert_eq!(refused.count(), 1, "{chain:?}");
    let calls = w.receipt_callbacks();
    assert!(
        calls.iter().all(|c| c
            == &(
                "t-2".to_string(),
                Err("Business.DuplicateInvoice".to_string())
            )),
        "{calls:?}"
    );
}

#[tokio::test]
async fn a_run_that_promoted_nothing_ends_its_wait_at_once() {
    let w = world();
    let input = w.ocr_ready().await;

    assert_eq!(
        w.await_receipt(&input, "t-3").await,
        Awaited::NothingPublished
    );
    assert_eq!(
        w.receipt_callbacks(),
        [("t-3".to_string(), Ok(json!({"status": "stale"})))]
    );
    assert!(w.ports.waits.waits.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_answer_to_an_event_this_stack_never_published_is_bad_input() {
    let w = world();
    let (input, _) = w.published_run().await;
    let stray = Answer::Refused {
        event_id: EventId::new(&input.run_id, EventKind::Retracted),
        error: "Business.DuplicateInvoice".into(),
    };

    let err = saga::receipt(&w.ports, &w.ctx, &stray).await.unwrap_err();

    assert_eq!(err.name(), "Fatal.BadInput");
    assert!(w.receipt_callbacks().is_empty());
}

#[tokio::test]
async fn a_refused_run_is_compensated_in_reverse_order_and_ends_compensated_once() {
    let w = world();
    let (first, _) = w.published_run().await;
    let first_body = w.ports.store.outbox.record(&accepted_id(&first)).await;
    w.consumer_answer(&first_body.unwrap().unwrap().body);
    let (input, body) = w.published_run_of("inbox/acme/copy.png").await;
    w.await_receipt(&input, "t-4").await;
    w.answer(&w.consumer_answer(&body)).await;

    let reason = "Business.DuplicateInvoice";
    let done = saga::compensate_run(&w.ports, &w.ctx, &input.run_id, reason).await;
    let again = saga::compensate_run(&w.ports, &w.ctx, &input.run_id, reason).await;

    assert_eq!(done.unwrap().end, SagaEnd::Compensated);
    assert!(again.unwrap().already_ended);
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Compensated);
    assert_eq!(w.current(&input).await, None, "nothing was current before");
    assert_eq!(
        w.published(EventKind::Retracted),
        [(
            EventId::new(&input.run_id, EventKind::Retracted),
            Some(body.event_id.clone())
        )]
    );
    let chain = w.saga_chain(&input).await;
    let tail: Vec<_> = chain
        .iter()
        .skip_while(|a| *a != "downstream.refused")
        .collect();
    assert_eq!(
        tail,
        [
            "downstream.refused",
            "event.retracted",
            "result.restored",
            "saga.compensated",
            "run.compensated"
        ],
        "{chain:?}"
    );
}

#[tokio::test]
async fn an_answer_to_a_retraction_settles_nothing_and_ends_no_wait() {
    let w = world();
    let (input, _) = w.published_run().await;
    w.await_receipt(&input, "t-5").await;
    saga::compensate(&w.ports, &w.ctx, &input.run_id, "withdrawn")
        .await
        .unwrap();
    let retraction = EventId::new(&input.run_id, EventKind::Retracted);
    let journal = w.journal(&input).await;
    let answer = Answer::Refused {
        event_id: retraction,
        error: "Conflict.UnknownReceipt".into(),
    };

    let settled = saga::receipt(&w.ports, &w.ctx, &answer).await.unwrap();

    assert_eq!(settled, None);
    assert_eq!(w.journal(&input).await, journal, "nothing written");
    assert!(w.receipt_callbacks().is_empty());
}

#[tokio::test]
async fn the_sweeper_redelivers_a_published_event_only_while_its_run_waits_for_the_answer() {
    let w = world();
    let (input, body) = w.published_run().await;
    let now = time::OffsetDateTime::now_utc();
    let (window, soon) = (
        now - time::Duration::minutes(15),
        now + time::Duration::seconds(1),
    );
    let unanswered = || async {
        let bodies = saga::unanswered(&w.ports, window, soon).await.unwrap();
        bodies
            .into_iter()
            .map(|b| b.event_id.to_string())
            .collect::<Vec<_>>()
    };
    // Published, but the wait has not begun: nothing waits for an answer yet.
    assert!(unanswered().await.is_empty());

    // The wait began and no answer came: redelivered under the same id, while it waits; an
    // event published before the window (the wait's deadline) is not taken.
    assert_eq!(w.await_receipt(&input, "t-1").await, Awaited::Waiting);
    assert_eq!(unanswered().await, [body.event_id.to_string()]);
    let later = saga::unanswered(&w.ports, soon, soon + time::Duration::minutes(1)).await;
    assert!(later.unwrap().is_empty(), "outside the window");
    saga::redeliver(&w.ports, &body).await.unwrap();
    let published = w.published(EventKind::Accepted);
    assert_eq!(published.len(), 2, "{published:?}");
    assert!(published.iter().all(|(id, _)| *id == body.event_id));
    assert_eq!(
        unanswered().await,
        [body.event_id.to_string()],
        "still waiting"
    );

    // The answer to the redelivery settles it: no longer redelivered.
    w.answer(&w.consumer_answer(&body)).await;
    assert!(unanswered().await.is_empty());

    // A refused run is not redelivered either (its compensation has it).
    let (copy, copied) = w.published_run_of("inbox/acme/copy.png").await;
    w.await_receipt(&copy, "t-2").await;
    assert_eq!(unanswered().await, [copied.event_id.to_string()]);
    w.answer(&w.consumer_answer(&copied)).await;
    assert!(unanswered().await.is_empty());
}
