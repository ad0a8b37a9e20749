//! OCR completion by callback: the Task's wait and the job's notification in either order,
//! duplicates, a notification that comes after the Task gave up waiting (a failed job: in
//! `pipeline.rs`).

use super::*;

impl World {
    /// The number of entries with `action` in the run's document's chain.
    async fn count_action(&self, input: &RunInput, action: &str) -> usize {
        let chain = self.chain_of(&input.document_id).await;
        chain.iter().filter(|a| *a == action).count()
    }

    /// The job the provider started for `input`'s OCR.
    fn job(&self, input: &RunInput) -> String {
        let op = Step::Ocr.operation(&input.run_id);
        self.ports.ocr.job_of(&op).expect("a job started")
    }
}

fn token(name: &str) -> TaskToken {
    TaskToken::new(name).unwrap()
}

#[tokio::test]
async fn a_job_that_ends_while_its_task_waits_is_ended_by_the_notification_once() {
    // given a Task that started the job and waits
    let w = world();
    let input = w.ocr_ready().await;
    let waiting = wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-1")).await;
    assert_eq!(waiting.unwrap(), Ended::Waiting);
    assert!(w.callbacks().is_empty(), "nothing ended before the job did");

    // when the job's notification comes, and comes again (SNS delivers at least once; Step
    // Functions has closed the token after the first callback)
    let run = &input.run_id;
    let waiter = wait::ended(&w.ports, run, &w.job(&input)).await.unwrap();
    let first = wait::end_wait(&w.ports, &w.ctx, &waiter.unwrap())
        .await
        .unwrap();
    w.ports.callback.closed.lock().unwrap().push("tok-1".into());
    let again = wait::ended(&w.ports, run, &w.job(&input)).await.unwrap();
    let second = wait::end_wait(&w.ports, &w.ctx, &again.unwrap())
        .await
        .unwrap();

    // then the wait ended once, with the normalized OCR; one job, one completion
    let Ended::Succeeded(polled) = first else {
        panic!("{first:?}")
    };
    assert_eq!(second, Ended::AlreadyEnded);
    let calls = w.callbacks();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let (sent_to, output) = &calls[0];
    assert_eq!(sent_to, "tok-1");
    let output = output.as_ref().unwrap();
    assert_eq!(output["status"], "SUCCEEDED");
    let normalized = polled.normalized.unwrap();
    assert_eq!(
        output["normalized"],
        serde_json::to_value(&normalized).unwrap()
    );
    assert!(w.json(&normalized).await["pages"].is_array());
    assert_eq!(w.ports.ocr.job_count(), 1);
    assert_eq!(w.count_action(&input, "ocr.completed").await, 1);
}

#[tokio::test]
async fn a_job_that_ended_before_its_task_waited_is_ended_by_the_tasks_invocation() {
    // given a job whose notification came before its Task kept a token: the first invocation
    // started the job, then its answer was lost; the notification finds no one waiting
    let w = world();
    let input = w.ocr_ready().await;
    w.start(&input).await.unwrap();
    let early = wait::ended(&w.ports, &input.run_id, &w.job(&input)).await;
    assert_eq!(early.unwrap(), None, "no Task waits yet");

    // when the Task's retry runs
    let ended = wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-2")).await;

    // then it finds the notice and ends its own wait at once: nothing is left waiting
    assert!(matches!(ended, Ok(Ended::Succeeded(_))), "{ended:?}");
    let calls = w.callbacks();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].0, "tok-2");
    assert_eq!(calls[0].1.as_ref().unwrap()["status"], "SUCCEEDED");
    assert_eq!(
        *w.ports.ocr.start_calls.lock().unwrap(),
        1,
        "no second start"
    );
    assert_eq!(w.count_action(&input, "ocr.completed").await, 1);
}

#[tokio::test]
async fn a_notification_while_the_job_still_runs_is_retried_and_ends_nothing_yet() {
    // given a waiting Task whose job's first poll still finds it running
    let w = world();
    let input = w.ocr_ready().await;
    wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-3"))
        .await
        .unwrap();
    *w.ports.ocr.pending_polls.lock().unwrap() = 1;

    // when the notification's handler runs, and its retry
    let waiter = wait::ended(&w.ports, &input.run_id, &w.job(&input)).await;
    let waiter = waiter.unwrap().unwrap();
    let early = wait::end_wait(&w.ports, &w.ctx, &waiter).await;
    let retried = wait::end_wait(&w.ports, &w.ctx, &waiter).await;

    // then the first is a transient error (the notification's own status is not evidence) and
    // the retry ends the wait
    assert_eq!(early.unwrap_err().name(), "Transient.InProgress");
    assert!(matches!(retried, Ok(Ended::Succeeded(_))), "{retried:?}");
    assert_eq!(w.callbacks().len(), 1);
}

#[tokio::test]
async fn after_a_lost_notification_the_deadlines_poll_finds_the_job_by_the_ledgers_id() {
    // given a waiting Task whose job's notification was lost
    let w = world();
    let input = w.ocr_ready().await;
    wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-4"))
        .await
        .unwrap();

    // when the Task's deadline passes and the workflow reconciles, then the notification
    // comes after all (the Task no longer waits)
    let polled = ocr::reconcile(&w.ports, &w.ctx, &input).await.unwrap();
    w.ports.callback.closed.lock().unwrap().push("tok-4".into());
    let late = wait::ended(&w.ports, &input.run_id, &w.job(&input)).await;
    let late = wait::end_wait(&w.ports, &w.ctx, &late.unwrap().unwrap()).await;

    // then the poll found the OCR; the late notification changes nothing
    assert_eq!(polled.status, "SUCCEEDED");
    assert!(polled.normalized.is_some());
    assert_eq!(late.unwrap(), Ended::AlreadyEnded);
    assert!(w.callbacks().is_empty(), "{:?}", w.callbacks());
    assert_eq!(w.count_action(&input, "ocr.completed").await, 1);
}

#[tokio::test]
async fn a_notification_of_another_job_ends_no_wait() {
    let w = world();
    let input = w.ocr_ready().await;
    wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-5"))
        .await
        .unwrap();

    let other = wait::ended(&w.ports, &input.run_id, "job-of-someone-else").await;

    assert_eq!(other.unwrap(), None);
    assert!(w.callbacks().is_empty());
}

#[tokio::test]
async fn a_start_repeated_after_completion_ends_its_wait_from_the_ledger_without_a_poll() {
    // given a run whose OCR completed by its notification
    let w = world();
    let input = w.ocr_ready().await;
    let first = w.ocr(&input).await.unwrap();
    *w.ports.ocr.pending_polls.lock().unwrap() = 1; // a poll now would answer in progress

    // when StartOcr runs again (a duplicate invocation, a redrive)
    let again = wait::start_and_wait(&w.ports, &w.ctx, &input, &token("tok-6")).await;

    // then its wait ends at once with the recorded OCR, and the provider is not asked
    let Ok(Ended::Succeeded(polled)) = again else {
        panic!("{again:?}")
    };
    assert_eq!(polled.normalized, Some(first));
    assert_eq!(*w.ports.ocr.pending_polls.lock().unwrap(), 1, "no poll");
    let calls = w.callbacks();
    assert_eq!(calls.last().unwrap().0, "tok-6");
    assert_eq!(w.count_action(&input, "ocr.completed").await, 1);
}
