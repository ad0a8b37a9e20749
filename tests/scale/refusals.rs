//! Which reads of a burst the provider refused, and which reads filled their second
//! (`make bench-scale`). Our local Textract's quota logs a refused call with the instant it
//! counts it at (`refusedMs`, when LocalStack received it) and those of the calls in its
//! one-second window (`windowMs`), and each call with how long it waited in LocalStack before
//! the quota judged it (`queuedMs`); each is set here against the slot its run's start booked
//! (`RunInput::read_at_ms`), so that a refusal shows which call came too soon: the refused one
//! (early for its slot, or at a turn of its own after a retry) or the one before it (held up
//! after its slot, on its way or in LocalStack).

use std::collections::BTreeMap;

use serde_json::Value;

/// A read the provider refused, against the reads that filled its second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Its read (the wire log's subject), as it was.
    pub read: Request,
    /// The admitted reads in its window, oldest first.
    pub window: Vec<Request>,
}

/// One read request, placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// When the provider's quota judged it (unix ms).
    pub at_ms: i64,
    /// How long after its run's booked slot (ms), if its start booked one.
    pub after_slot_ms: Option<i64>,
    /// Which of its subject's requests it was (1: the first).
    pub attempt: usize,
    /// How long it waited in LocalStack before the quota judged it (ms), if logged.
    pub queued_ms: Option<i64>,
}

/// The refusals among the read requests `requests` (wire log entries since the burst began),
/// with the booked slot of each subject in `slots`.
pub fn refusals(requests: &[Value], slots: &BTreeMap<String, i64>) -> Vec<Refusal> {
    // Each request: (when counted, subject, queued, refused: its window).
    type Judged<'a> = (i64, &'a str, Option<i64>, Option<Vec<i64>>);
    let mut judged: Vec<Judged> = requests
        .iter()
        .filter_map(|r| {
            let subject = r["subject"].as_str()?;
            let queued = r["queuedMs"].as_i64();
            if let Some(at) = r["admittedMs"].as_i64() {
                return Some((at, subject, queued, None));
            }
            let at = r["refusedMs"].as_i64()?;
            let window = r["windowMs"].as_array()?;
            let window = window.iter().filter_map(Value::as_i64).collect();
            Some((at, subject, queued, Some(window)))
        })
        .collect();
    judged.sort_by_key(|(at, ..)| *at);
    let mut attempts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut admitted: BTreeMap<i64, Request> = BTreeMap::new();
    let mut out = vec![];
    for (at_ms, subject, queued_ms, window) in judged {
        let attempt = attempts.entry(subject).or_default();
        *attempt += 1;
        let request = Request {
            at_ms,
            after_slot_ms: slots.get(subject).map(|slot| at_ms - slot),
            attempt: *attempt,
            queued_ms,
        };
        match window {
            None => {
                admitted.insert(at_ms, request);
            }
            Some(window) => out.push(Refusal {
                read: request,
                window: window
                    .iter()
                    .filter_map(|ms| admitted.get(ms).cloned())
                    .collect(),
            }),
        }
    }
    out
}

/// `+12 ms after its slot, request 1, queued 3 ms` (or `no booking, ...`).
fn describe(r: &Request) -> String {
    let slot = match r.after_slot_ms {
        Some(ms) => format!("{ms:+} ms after its slot"),
        None => "no booking".into(),
    };
    let queued = r
        .queued_ms
        .map_or(String::new(), |ms| format!(", queued {ms} ms"));
    format!("{slot}, request {}{queued}", r.attempt)
}

/// A pause of LocalStack's process (its garbage collector): when it began (unix ms) and how long
/// it took (ms).
pub type Pause = (i64, i64);

/// The pauses that overlapped `r`'s way from its booked slot to LocalStack, as `, after a pause
/// of 900 ms that began 120 ms after its slot`.
fn paused(r: &Request, pauses: &[Pause]) -> String {
    let Some(slot) = r.after_slot_ms.map(|late| r.at_ms - late) else {
        return String::new();
    };
    pauses
        .iter()
        .filter(|(at, ms)| *at < r.at_ms && at + ms > slot)
        .map(|(at, ms)| {
            format!(
                ", after a pause of {ms} ms that began {} ms after its slot",
                at - slot
            )
        })
        .collect()
}

/// Prints each refusal (the first `limit`) as one line, with LocalStack's `pauses` that held up
/// the reads that filled its second.
pub fn print(refusals: &[Refusal], pauses: &[Pause], limit: usize) {
    for (i, r) in refusals.iter().take(limit).enumerate() {
        let window: Vec<String> = r
            .window
            .iter()
            .map(|w| {
                let before = r.read.at_ms - w.at_ms;
                format!(
                    "{before} ms before it ({}{})",
                    describe(w),
                    paused(w, pauses)
                )
            })
            .collect();
        println!(
            "bench-scale:   refused read {}: {}; its second held: {}",
            i + 1,
            describe(&r.read),
            if window.is_empty() {
                "no read of this burst".into()
            } else {
                window.join(", ")
            }
        );
    }
    if refusals.len() > limit {
        println!(
            "bench-scale:   ({} more refused reads)",
            refusals.len() - limit
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_refusal_is_set_against_its_slot_and_the_read_that_filled_its_second() {
        let requests = vec![
            json!({"subject": "a", "admittedMs": 10_300, "queuedMs": 4}),
            json!({"subject": "b", "refusedMs": 11_110, "windowMs": [10_300]}),
            json!({"subject": "b", "admittedMs": 12_200}),
            json!({"subject": "c", "refusedMs": 12_900, "windowMs": [12_200, 99]}),
            json!({"subject": "x", "status": 500}),
        ];
        let slots = BTreeMap::from([("a".to_string(), 10_000), ("b".to_string(), 11_100)]);
        let found = refusals(&requests, &slots);
        assert_eq!(found.len(), 2);
        // b came 10 ms after its slot; a, 300 ms after its own, had filled the second.
        assert_eq!(found[0].read.after_slot_ms, Some(10));
        assert_eq!(found[0].read.attempt, 1);
        let a = &found[0].window[0];
        assert_eq!(
            (a.at_ms, a.after_slot_ms, a.attempt),
            (10_300, Some(300), 1)
        );
        assert_eq!(
            describe(a),
            "+300 ms after its slot, request 1, queued 4 ms"
        );
        // c has no booking; b's second request (admitted) filled its second; 99 is no read of
        // the burst.
        assert_eq!(found[1].read.after_slot_ms, None);
        assert_eq!(describe(&found[1].read), "no booking, request 1");
        assert_eq!(found[1].window.len(), 1);
        assert_eq!(found[1].window[0].attempt, 2);
        assert_eq!(found[1].window[0].after_slot_ms, Some(1_100));
        // A pause between a's slot and its arrival held it up; one after it did not.
        let pauses = [(10_050, 240), (10_400, 900), (9_000, 500)];
        assert_eq!(
            paused(a, &pauses),
            ", after a pause of 240 ms that began 50 ms after its slot"
        );
    }
}
