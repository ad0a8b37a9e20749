//! When a queued event whose handling failed is delivered again (ingest's queue, issue 13).
//!
//! SQS delivers a message again once its visibility timeout has passed; the consumer sets that
//! timeout for a failed message, so its retries back off exponentially with jitter and stay
//! bounded (the queue's `maxReceiveCount` moves a message that failed every delivery to its
//! dead-letter queue, where `docket ops sweep` finds it). Only transient and ambiguous failures
//! are retried ([`after_failure`]): any other is set aside at once with its error's name, and so
//! is a transient one on the last of the queue's [`DELIVERIES`] (rather than hidden for a last
//! backoff that no delivery follows, and moved by the queue without its error's name; the
//! redrive stays the backstop for a delivery that ended before ingest could answer). A
//! message whose start had no turn at the pacer (or found every job slot held) is sent again as
//! a new message instead: waiting for a turn must not spend its deliveries. The new message
//! carries how often its upload was sent again ([`REQUEUES_ATTRIBUTE`]), and each wait is about
//! twice the last, up to [`REQUEUE_CAP_SECONDS`]: N uploads waiting ask about N / 22.5 times a
//! second (an S3 read and a refused write each), not N / 7.5 as at 5 to 10 s each time
//! (SCALE.md: a burst of a thousand). The jitter is drawn from the message id and the delivery's
//! number, so that messages which failed together come back apart, with no random source to fake in
//! tests.

use crate::error::Family;
use crate::ids::sha256_hex;
use crate::Error;

/// What becomes of a message whose handling failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Deliver it again in this many seconds: a transient failure, or an ambiguous one (the
    /// handling reconciles before it acts: ingest's execution is named by its run, so a start
    /// whose answer was lost is found, not made twice).
    RetryIn(i32),
    /// Send it again as a new message carrying `requeues` ([`REQUEUES_ATTRIBUTE`]), delivered
    /// in `seconds`, and let this one go: its start had no turn at the pacer within the horizon
    /// or found every job slot held (`Transient.QuotaFull`), so nothing was attempted and this
    /// delivery should not count. (Delivered again as the same message, a burst under a low
    /// quota would spend a message's `maxReceiveCount` waiting for turns, and end it in the
    /// failure queue.)
    Requeue {
        /// How long the new message is hidden.
        seconds: i32,
        /// How often the upload will have been sent again, this time included.
        requeues: u32,
    },
    /// Set it aside at once, with the error's name: any other failure (retrying would fail the
    /// same way), or a transient one on its last delivery.
    SetAside,
}

/// The message attribute (a Number) that counts how often an upload was sent to the queue
/// again for a later turn; absent on the inbox rule's message (0).
pub const REQUEUES_ATTRIBUTE: &str = "DocketRequeues";

/// What becomes of message `message_id`, delivered for the `receives`-th time and sent again
/// `requeues` times before, whose handling failed with `error`.
pub fn after_failure(
    error: &Error,
    message_id: &str,
    receives: u32,
    requeues: u32,
) -> AfterFailure {
    if let Error::QuotaFull(_) = error {
        return AfterFailure::Requeue {
            seconds: requeue_delay_seconds(message_id, requeues),
            requeues: requeues.saturating_add(1),
        };
    }
    match error.family() {
        Family::Transient | Family::Ambiguous if receives < DELIVERIES => {
            AfterFailure::RetryIn(delay_seconds(message_id, receives))
        }
        _ => AfterFailure::SetAside,
    }
}

/// How often the queue delivers a message before its redrive policy moves it to the failure
/// queue: IngestQueue's `maxReceiveCount` in infra/template.yaml (tests/pipeline/ingest_queue.rs
/// reads it back from the deployed queue).
pub const DELIVERIES: u32 = 5;

/// The first retry waits about this long (seconds).
pub const BASE_SECONDS: i32 = 10;
/// No retry waits longer (seconds).
pub const CAP_SECONDS: i32 = 900;
/// No upload sent again for a later turn waits longer (seconds): the longer, the fewer asks a
/// waiting upload makes; the shorter, the sooner a slot freed near the end of a burst is taken
/// (the last uploads of a burst wait up to this long after the quota would admit them).
pub const REQUEUE_CAP_SECONDS: i32 = 30;

/// How long (seconds) a message delivered for the `receives`-th time (SQS's
/// `ApproximateReceiveCount`, from 1) stays hidden after its handling failed: half of
/// `min(CAP, BASE × 2^(receives - 1))` plus up to as much again ("equal jitter").
pub fn delay_seconds(message_id: &str, receives: u32) -> i32 {
    let doubling = receives.clamp(1, 16) - 1;
    let step = BASE_SECONDS.saturating_mul(1 << doubling).min(CAP_SECONDS);
    equal_jitter(step, message_id, receives)
}

/// How long (seconds) message `message_id`, whose upload was sent again `requeues` times
/// before, waits before it is delivered again as a new message: half of
/// `min(REQUEUE_CAP, BASE × 2^requeues)` plus up to as much again.
pub fn requeue_delay_seconds(message_id: &str, requeues: u32) -> i32 {
    let step = BASE_SECONDS
        .saturating_mul(1 << requeues.min(16))
        .min(REQUEUE_CAP_SECONDS);
    equal_jitter(step, message_id, requeues)
}

/// Half of `step` plus up to as much again, drawn from the message and the count `n`.
fn equal_jitter(step: i32, message_id: &str, n: u32) -> i32 {
    let half = step / 2;
    half + (f64::from(step - half) * unit(message_id, n)).round() as i32
}

/// A number in `[0, 1]` that depends on the message and the delivery only.
fn unit(message_id: &str, receives: u32) -> f64 {
    let hash = sha256_hex(format!("{message_id}\n{receives}").as_bytes());
    let head = u32::from_str_radix(&hash[..8], 16).unwrap_or(0);
    f64::from(head) / f64::from(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_retry_waits_about_twice_as_long_as_the_last_up_to_the_cap() {
        for receives in 1..=12 {
            let step = (BASE_SECONDS * (1 << (receives - 1))).min(CAP_SECONDS);
            for id in ["m-1", "m-2", "m-3"] {
                let d = delay_seconds(id, receives as u32);
                assert!(
                    (step / 2..=step).contains(&d),
                    "{id} #{receives}: {d} not in [{}, {step}]",
                    step / 2
                );
            }
        }
        assert!(delay_seconds("m", 1) <= 10);
        assert!(delay_seconds("m", 30) <= CAP_SECONDS);
        assert!(
            delay_seconds("m", 0) >= BASE_SECONDS / 2,
            "a count of 0 is the first"
        );
    }

    #[test]
    fn a_transient_failure_on_the_last_delivery_is_set_aside_not_hidden_again() {
        let throttled = Error::Dependency("dynamodb: ThrottlingException".into());
        assert!(matches!(
            after_failure(&throttled, "m", DELIVERIES - 1, 0),
            AfterFailure::RetryIn(_)
        ));
        let lost = Error::OutcomeUnknown("StartExecution: timed out".into());
        for error in [&throttled, &lost] {
            for receives in [DELIVERIES, DELIVERIES + 1] {
                assert_eq!(
                    after_failure(error, "m", receives, 0),
                    AfterFailure::SetAside,
                    "{error} #{receives}"
                );
            }
        }
        // waiting for a turn spends no delivery, however many the message had
        let full = Error::QuotaFull("textract-executions: busy".into());
        assert!(matches!(
            after_failure(&full, "m", DELIVERIES, 0),
            AfterFailure::Requeue { .. }
        ));
    }

    #[test]
    fn only_a_transient_failure_is_retried() {
        let throttled = Error::Dependency("dynamodb: ThrottlingException".into());
        assert_eq!(
            after_failure(&throttled, "m", 2, 0),
            AfterFailure::RetryIn(delay_seconds("m", 2))
        );
        // no turn at the pacer: sent again afresh, however often it was delivered
        let full = Error::QuotaFull("textract-executions: busy".into());
        let requeued = AfterFailure::Requeue {
            seconds: requeue_delay_seconds("m", 2),
            requeues: 3,
        };
        assert_eq!(after_failure(&full, "m", 1, 2), requeued);
        assert_eq!(after_failure(&full, "m", 4, 2), requeued);
        let lost = Error::OutcomeUnknown("StartExecution: timed out".into());
        assert!(matches!(
            after_failure(&lost, "m", 3, 0),
            AfterFailure::RetryIn(_)
        ));
        for error in [
            Error::BadInput("not an Object Created event".into()),
            Error::Internal("environment variable X is not set".into()),
        ] {
            assert_eq!(
                after_failure(&error, "m", 1, 0),
                AfterFailure::SetAside,
                "{error}"
            );
        }
    }

    #[test]
    fn an_upload_sent_again_waits_about_twice_as_long_each_time_up_to_half_a_minute() {
        let mut total = 0;
        for requeues in 0..40 {
            let step = (BASE_SECONDS * (1 << requeues.min(16))).min(REQUEUE_CAP_SECONDS);
            for id in ["m-1", "m-2", "m-3"] {
                let d = requeue_delay_seconds(id, requeues);
                assert!(
                    (step / 2..=step).contains(&d),
                    "{id} after {requeues}: {d} not in [{}, {step}]",
                    step / 2
                );
            }
            total += requeue_delay_seconds("m-1", requeues);
        }
        // The first wait is as short as before (5 to 10 s); forty asks span well over ten
        // minutes (at 5 to 10 s each they spanned five at most).
        assert!(requeue_delay_seconds("m", 0) <= 10);
        assert!(total >= 15 * 38, "{total}");
        assert!(requeue_delay_seconds("m", u32::MAX) <= REQUEUE_CAP_SECONDS);
    }

    #[test]
    fn messages_that_failed_together_come_back_apart() {
        let delays: std::collections::BTreeSet<i32> = (0..50)
            .map(|n| delay_seconds(&format!("m-{n}"), 4))
            .collect();
        // 50 messages over [40, 80]: most land on distinct seconds.
        assert!(delays.len() > 20, "{delays:?}");
        assert_eq!(delay_seconds("m-7", 4), delay_seconds("m-7", 4));
    }
}
