//! A discrete-event simulation of the OCR admission under AWS's default quotas (SCALE.md): what
//! a workload (a burst, or a day of a million documents) does to Textract's quotas under two
//! designs, and how long it takes.
//!
//! (The bench's own readings of a burst, from the wire log, are in [`reads`] and [`refusals`].)
//!
//! - [`Design::Naive`]: every upload starts its execution at once and its OCR task calls
//!   Textract at once; a refusal is retried by the SDK (3 attempts) and then by the task's
//!   Retry (5 attempts, exponential backoff with full jitter), after which the document fails.
//!   Asynchronous jobs are polled every 5 s. This is how the pipeline behaves without
//!   backpressure, and how the best-known open-source IDP stack lost documents to throttling.
//! - [`Design::Paced`]: uploads wait in a queue (SQS); a drainer admits a document when the
//!   pacer of the Textract call it will make gives it a slot (slots `1 / rate` apart, at the
//!   rate [`quota::Pacer::safe_rate`] keeps within the quota however late within `max_late` a
//!   call lands) and, for a multi-page document, when one of `job_slots` job slots is free
//!   (a leased semaphore, released by the completion callback). Single-page documents use the
//!   synchronous `DetectDocumentText` (no job, no poll); multi-page ones the asynchronous API,
//!   completed by the SNS notification. With [`Ingest`], the drainer is the one deployed:
//!   ingest's event source mapping, at most `batches` invocations of up to `batch_size`
//!   uploads at once, each invocation held until the latest of its turns (within `horizon`)
//!   and each upload without a turn sent back to the queue for 5 to 30 s; without it, an
//!   ideal drainer that never holds anything (what the quotas alone allow).
//!
//! AWS's side is modelled apart from the design's: each rate quota is a sliding one-second
//! window ([`quota::SlidingWindow`]) and the job quota a count of running jobs, so a design
//! that lets calls bunch up is caught as a refusal. Times are seconds; randomness comes from a
//! seeded generator, so a run is repeatable.

pub mod machine;
pub mod quota;
pub mod reads;
pub mod refusals;
mod run;
#[cfg(test)]
mod tests;

pub use run::{read_ahead, simulate};

/// AWS's default quotas in us-east-1 that the OCR admission meets (Textract's from the AWS
/// general reference, read 2026-12-03; see README "Local AWS").
#[derive(Debug, Clone, Copy)]
pub struct Quotas {
    pub detect_tps: usize,
    pub start_tps: usize,
    pub get_tps: usize,
    pub max_jobs: usize,
}

impl Quotas {
    pub const AWS_US_EAST_1: Quotas = Quotas {
        detect_tps: 25,
        start_tps: 15,
        get_tps: 25,
        max_jobs: 600,
    };
}

/// How documents reach Textract.
#[derive(Debug, Clone, Copy)]
pub enum Design {
    Naive,
    Paced {
        /// How late after its slot a call may land before the caller asks for a new slot (s).
        max_late: f64,
        /// Job slots of the semaphore (at most `Quotas::max_jobs`).
        job_slots: usize,
        /// The drainer in front of the executions: ingest as deployed, or (`None`) an ideal
        /// one.
        ingest: Option<Ingest>,
    },
}

/// Ingest as deployed (infra/template.yaml `IngestEventSource`, `docket_core::admitted`): its
/// event source mapping runs at most `batches` invocations at once, each of up to `batch_size`
/// uploads, all of a batch asking for their execution's turn at once; an upload whose turn is
/// within `horizon` seconds waits for it in the invocation, the others go back to the queue.
#[derive(Debug, Clone, Copy)]
pub struct Ingest {
    /// The mapping's `MaximumConcurrency`.
    pub batches: usize,
    pub batch_size: usize,
    /// The pacer's horizon (s): `docket_core::admitted::Rules::horizon_ms`.
    pub horizon: f64,
    /// How long an invocation's place waits after it ends before the mapping polls again: none
    /// on AWS; LocalStack's poller waits `LAMBDA_EVENT_SOURCE_MAPPING_POLL_INTERVAL_SEC` (1 s).
    pub poll_gap: f64,
}

impl Ingest {
    /// As deployed on AWS: the mapping's `MaximumConcurrency` and `BatchSize` (the template's,
    /// `tests/lint/template.rs` checks they agree) and Textract's pacer horizon.
    pub fn deployed() -> Ingest {
        Ingest {
            batches: 5,
            batch_size: 10,
            horizon: docket_core::admitted::Rules::textract().horizon_ms as f64 / 1000.0,
            poll_gap: 0.0,
        }
    }
}

/// One document of a workload.
#[derive(Debug, Clone, Copy)]
pub struct Doc {
    pub arrives: f64,
    pub pages: u32,
}

/// A small seeded generator (SplitMix64): repeatable runs without a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Exponential with this mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

/// `n` one-page documents dropped at once.
pub fn burst(n: usize) -> Vec<Doc> {
    vec![
        Doc {
            arrives: 0.0,
            pages: 1
        };
        n
    ]
}

/// A day of `total` documents: 80 % of them in eight business hours, the rest spread over the
/// other sixteen, Poisson arrivals; 85 % one page, the rest two to six pages.
pub fn day(total: usize, seed: u64) -> Vec<Doc> {
    let mut rng = Rng::new(seed);
    let (busy, quiet) = (total * 8 / 10, total - total * 8 / 10);
    let mut docs = Vec::with_capacity(total);
    for (count, start, hours) in [
        (quiet / 2, 0.0, 8.0),
        (busy, 8.0, 8.0),
        (quiet - quiet / 2, 16.0, 8.0),
    ] {
        let mean_gap = hours * 3600.0 / count.max(1) as f64;
        let mut t = start * 3600.0;
        for _ in 0..count {
            t += rng.exp(mean_gap);
            let pages = if rng.uniform() < 0.85 {
                1
            } else {
                2 + (rng.uniform() * 5.0) as u32
            };
            docs.push(Doc { arrives: t, pages });
        }
    }
    docs
}

/// What a run of a workload did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub documents: usize,
    pub failed: usize,
    /// Calls Textract refused (any operation, any reason).
    pub quota_errors: usize,
    /// When the last document's OCR ended (s from the first arrival).
    pub completed_at: f64,
    /// For a burst (every document at once), the time the quotas alone force: every call at
    /// its quota's rate, plus one document's own OCR time; 0 for a workload spread in time.
    pub ideal: f64,
    pub latency_p50: f64,
    pub latency_p95: f64,
    pub latency_max: f64,
    /// How long a one-page read's OCR step waited for its call (s): up to [`run::read_ahead`]
    /// for one read at the slot its start booked, longer for one that took a turn.
    pub read_wait_p50: f64,
    pub read_wait_p95: f64,
    /// The most documents waiting in the queue, and the most Textract jobs at once.
    pub peak_queue: usize,
    pub peak_jobs: usize,
    /// With [`Ingest`]: uploads sent back to the queue without a turn, and the most ingest
    /// invocations at once.
    pub requeued: usize,
    pub peak_ingest: usize,
    /// The most calls of each operation within one second (Detect, Start, Get).
    pub peak_detect: usize,
    pub peak_start: usize,
    pub peak_get: usize,
}

impl Report {
    pub fn print(&self, what: &str) {
        let against_ideal = if self.ideal > 0.0 {
            format!(
                " ({:.3} x the quota-bound ideal {:.0} s)",
                self.completed_at / self.ideal,
                self.ideal
            )
        } else {
            String::new()
        };
        println!(
            "sim: {what}: {} documents, {} failed, {} quota errors; OCR of all done at \
             {:.0} s{against_ideal}; latency p50 {:.1} s, p95 {:.1} s, max {:.0} s; a read's \
             wait for its call p50 {:.2} s, p95 {:.2} s; peak queue {}, peak jobs {}; most \
             calls in a second: Detect {}, Start {}, Get {}; ingest: {} sent back, {} \
             invocations at most",
            self.documents,
            self.failed,
            self.quota_errors,
            self.completed_at,
            self.latency_p50,
            self.latency_p95,
            self.latency_max,
            self.read_wait_p50,
            self.read_wait_p95,
            self.peak_queue,
            self.peak_jobs,
            self.peak_detect,
            self.peak_start,
            self.peak_get,
            self.requeued,
            self.peak_ingest,
        );
    }
}
