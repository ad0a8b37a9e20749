//! Route's saga as the state machine and the bus call it: the sweep relays and redelivers,
//! the waiting Task ends by the consumer's answer, and a refusal is compensated by the Task its
//! Catch names.

use serde_json::json;

use super::*;

#[tokio::test]
async fn the_scheduled_sweep_relays_the_event_a_failed_route_left_persisted() {
    // given a route that completed the run and then could not publish
    let w = world();
    let state = w.validated("inbox/acme/clear.png", 0.99).await;
    *w.ports.events.fail_next.lock().unwrap() = 1;
    let routed = route::handle(&w.ports, &w.ctx, parse(payload("Route", &state)).unwrap()).await;
    assert!(routed.is_err(), "the publication failed");
    let accepted = docket_core::saga::EventKind::Accepted;
    assert!(w.ports.events.published(accepted).is_empty());

    // when the schedule's sweep runs (a record younger than its age is left to route)
    let sweep = |age: u32| json!({"action": "sweep", "olderThanSeconds": age});
    let young = route::handle(&w.ports, &w.ctx, parse(sweep(3600)).unwrap()).await;
    let swept = route::handle(&w.ports, &w.ctx, parse(sweep(0)).unwrap()).await;
    let again = route::handle(&w.ports, &w.ctx, parse(sweep(0)).unwrap()).await;

    // then the event is published once
    let nothing = json!({"relayed": 0, "redelivered": [], "failed": []});
    assert_eq!(young.unwrap(), nothing);
    assert_eq!(
        swept.unwrap(),
        json!({"relayed": 1, "redelivered": [], "failed": []})
    );
    assert_eq!(again.unwrap(), nothing);
    assert_eq!(w.ports.events.published(accepted).len(), 1);
}

#[tokio::test]
async fn the_scheduled_sweep_redelivers_an_event_whose_answer_never_came_within_the_wait() {
    // given a routed run waiting for the consumer's answer, which was lost
    let w = world();
    let mut state = w.validated("inbox/acme/clear.png", 0.99).await;
    assert_eq!(w.route("Route", &mut state).await["wait"], "waiting");
    let accepted = docket_core::saga::EventKind::Accepted;
    let event = w.ports.events.published(accepted)[0].0.to_string();

    // when the schedule's sweep runs: without the wait's deadline, or before the record's age,
    // nothing is redelivered; with both, the event is, once per sweep
    let sweep = |age: u32, within: Option<u32>| {
        let mut sweep = json!({"action": "sweep", "olderThanSeconds": age});
        if let Some(within) = within {
            sweep["answerWithinSeconds"] = json!(within);
        }
        parse(sweep).unwrap()
    };
    let unbounded = route::handle(&w.ports, &w.ctx, sweep(0, None)).await;
    let young = route::handle(&w.ports, &w.ctx, sweep(3600, Some(7200))).await;
    let swept = route::handle(&w.ports, &w.ctx, sweep(0, Some(900))).await;

    // then the redelivery carries the same event id, and its answer ends the wait
    let nothing = json!({"relayed": 0, "redelivered": [], "failed": []});
    assert_eq!(unbounded.unwrap(), nothing);
    assert_eq!(young.unwrap(), nothing);
    assert_eq!(
        swept.unwrap(),
        json!({"relayed": 0, "redelivered": [event], "failed": []})
    );
    let published = w.ports.events.published(accepted);
    assert_eq!(published.len(), 2, "{published:?}");
    w.consumer_answers(&state).await;
    let calls = w.ports.callback.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let after = route::handle(&w.ports, &w.ctx, sweep(0, Some(900))).await;
    assert_eq!(after.unwrap(), nothing);
}

#[tokio::test]
async fn a_routed_run_waits_for_the_consumers_receipt_which_ends_the_wait() {
    let w = world();
    let mut state = w.validated("inbox/acme/clear.png", 0.99).await;
    assert_eq!(state["validation"]["receiptSeconds"], 900, "{state}");

    let routed = w.route("Route", &mut state).await;
    assert_eq!(routed["wait"], "waiting", "{routed}");
    assert!(w.ports.callback.calls.lock().unwrap().is_empty());

    let answer = w.consumer_answers(&state).await;
    let calls = w.ports.callback.calls.lock().unwrap().clone();
    assert_eq!(
        answer,
        json!({"answer": "document.recorded", "settled": true})
    );
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].0, TOKEN);
    keep("Route", calls[0].1.clone().unwrap(), &mut state);
    assert_eq!(state["receipt"]["status"], "recorded", "{state}");
    assert!(state["receipt"]["receiptId"].is_string(), "{state}");
}

#[tokio::test]
async fn a_refused_run_is_compensated_by_the_task_its_catch_names() {
    let w = world();
    let mut first = w.validated("inbox/acme/first.png", 0.99).await;
    w.route("Route", &mut first).await;
    w.consumer_answers(&first).await;
    w.ports.callback.calls.lock().unwrap().clear(); // the first's wait ended with its receipt
    let mut state = w.validated("inbox/acme/copy.png", 0.99).await;
    w.route("Route", &mut state).await;

    w.consumer_answers(&state).await;
    let calls = w.ports.callback.calls.lock().unwrap().clone();
    let refusal = calls[0].1.clone().unwrap_err();
    assert_eq!(refusal, "Business.DuplicateInvoice");
    let catch = &task("Route")["Catch"][0];
    assert_eq!(catch["ErrorEquals"][0], refusal.as_str());
    assert_eq!(catch["Next"], "Compensate");
    state["error"] = json!({"Error": refusal, "Cause": "the consumer refused the event"});

    let request = parse(payload("Compensate", &state)).unwrap();
    let answer = compensate::handle(&w.ports, &w.ctx, request).await.unwrap();
    keep("Compensate", answer, &mut state);

    assert_eq!(state["compensation"]["end"], "compensated", "{state}");
    let error = fail_error("Compensated", &state);
    assert_eq!(error, "Business.DuplicateInvoice", "{state}");
}

#[tokio::test]
async fn a_receipt_that_never_came_is_compensated_when_the_wait_times_out() {
    // given a routed run whose consumer never answered
    let w = world();
    let mut state = w.validated("inbox/acme/clear.png", 0.99).await;
    assert_eq!(w.route("Route", &mut state).await["wait"], "waiting");

    // when the Task's deadline passes: the Catch that names States.Timeout runs Compensate
    let catches = task("Route")["Catch"].as_array().unwrap().clone();
    let timeout = catches.iter().find(|c| {
        let errors = c["ErrorEquals"].as_array().unwrap();
        errors.contains(&json!("States.Timeout"))
    });
    assert_eq!(
        timeout.expect("a Catch of States.Timeout")["Next"],
        "Compensate"
    );
    state["error"] = json!({"Error": "States.Timeout", "Cause": "no answer in time"});
    let request = parse(payload("Compensate", &state)).unwrap();
    let answer = compensate::handle(&w.ports, &w.ctx, request).await.unwrap();
    keep("Compensate", answer, &mut state);

    // then the event is fenced at the consumer (a late delivery is refused), retracted, and the
    // run ends compensated with the timeout as its error; the execution fails with the
    // timeout's taxonomy name (a Fail state may not end with States.Timeout)
    assert_eq!(state["compensation"]["end"], "compensated", "{state}");
    assert_eq!(fail_error("Compensated", &state), "Transient.TimedOut");
    let late = w.consumer_answers(&state).await;
    assert_eq!(late["answer"], "document.refused", "{late}");
    let retracted = docket_core::saga::EventKind::Retracted;
    assert_eq!(w.ports.events.published(retracted).len(), 1);
    let run: docket_core::model::run::RunInput = parse(state["run"].clone()).unwrap();
    let stored = docket_core::ports::Store::run(&w.ports.store, &run.run_id).await;
    let stored = stored.unwrap().unwrap();
    assert_eq!(stored.status.as_str(), "compensated");
    assert_eq!(stored.error.as_deref(), Some("States.Timeout"));
}

impl World {
    /// The consumer applies the run's accepted event and answers on the bus; route gets the
    /// answer as the receipt rule's input transformer shapes it.
    async fn consumer_answers(&self, state: &Value) -> Value {
        use docket_core::ports::Outbox;
        use docket_core::saga::sink::Answer;
        use docket_core::saga::{EventId, EventKind};
        let run: docket_core::model::run::RunInput = parse(state["run"].clone()).unwrap();
        let id = EventId::new(&run.run_id, EventKind::Accepted);
        let record = self.ports.store.outbox.record(&id).await.unwrap().unwrap();
        let applied = self
            .ports
            .downstream
            .book
            .lock()
            .unwrap()
            .apply(&record.body);
        let answer = match applied {
            Ok(a) => Answer::Recorded {
                event_id: id,
                receipt_id: a.receipt().clone(),
                voided_receipt_id: None,
            },
            Err(e) => Answer::refused(&id, &e),
        };
        let request = json!({"action": "receipt", "detailType": answer.detail_type(),
                             "detail": answer.detail()});
        let request = parse(request).unwrap();
        route::handle(&self.ports, &self.ctx, request)
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn a_route_that_failed_before_promoting_is_compensated_with_nothing_to_undo() {
    use docket_core::model::run::ObjectRef;
    use docket_core::ports::BlobStore;
    // given a validated run whose report route cannot read: it fails before promoting anything
    let w = world();
    let mut state = w.validated("inbox/acme/clear.png", 0.99).await;
    let report: ObjectRef = parse(state["validation"]["report"].clone()).unwrap();
    let garbled = b"not a report".to_vec();
    w.ports
        .blobs
        .put(&report, garbled, "application/json")
        .await
        .unwrap();
    let request = parse(payload("Route", &state)).unwrap();
    let Failure(failed) = route::handle(&w.ports, &w.ctx, request).await.unwrap_err();

    // when the route Task's Catch of any error runs Compensate
    let catches = task("Route")["Catch"].as_array().unwrap().clone();
    let any = catches.iter().find(|c| c["ErrorEquals"][0] == "States.ALL");
    assert_eq!(any.expect("a Catch of States.ALL")["Next"], "Compensate");
    state["error"] = json!({"Error": failed.name(), "Cause": "the report is unreadable"});
    let request = parse(payload("Compensate", &state)).unwrap();
    let answer = compensate::handle(&w.ports, &w.ctx, request).await.unwrap();
    keep("Compensate", answer, &mut state);

    // then nothing was undone and nothing went out; the execution fails with the route's error
    assert_eq!(state["compensation"]["end"], "not-required", "{state}");
    assert_eq!(fail_error("Compensated", &state), failed.name());
    let accepted = docket_core::saga::EventKind::Accepted;
    let retracted = docket_core::saga::EventKind::Retracted;
    assert!(w.ports.events.published(accepted).is_empty());
    assert!(w.ports.events.published(retracted).is_empty());
    let run: docket_core::model::run::RunInput = parse(state["run"].clone()).unwrap();
    let stored = w.ports.store.run(&run.run_id).await.unwrap().unwrap();
    assert_eq!(
        stored.status.as_str(),
        "started",
        "never completed: nothing to compensate"
    );

    // and the execution's end (Step Functions' status change) records the run failed with it
    let ended = json!({"action": "execution_ended", "detail": {
        "name": run.run_id.as_str(), "status": "FAILED", "error": failed.name()}});
    let recorded = route::handle(&w.ports, &w.ctx, parse(ended).unwrap()).await;
    assert_eq!(recorded.unwrap()["recorded"], true);
    let stored = w.ports.store.run(&run.run_id).await.unwrap().unwrap();
    assert_eq!(stored.status.as_str(), "failed");
    assert_eq!(stored.error.as_deref(), Some(failed.name()));
}
