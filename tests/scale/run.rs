//! The event loop of the simulation: documents arrive, calls land at Textract (which admits or
//! refuses them by its quotas), jobs run and end, and each design reacts.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use docket_core::redelivery::requeue_delay_seconds;

use crate::util::percentile;

use super::quota::{Pacer, SlidingWindow};
use super::{Design, Doc, Ingest, Quotas, Report, Rng};

/// Textract's synchronous answer for one page, and an asynchronous job's run (s).
const DETECT_SECONDS: f64 = 1.5;
const JOB_BASE_SECONDS: f64 = 4.0;
const JOB_PAGE_SECONDS: f64 = 2.0;
/// From an upload to its OCR task's first call, when nothing holds it back (ingest, start).
const START_SECONDS: f64 = 0.5;
/// How late a paced call lands after its slot, on average (a warm Lambda's timer and the
/// network): exponential, so now and then far later than `max_late`.
const LATE_MEAN: f64 = 0.015;
/// Today's retries of a refused call: the SDK's (3 attempts, 1 s base, 20 s cap) inside the
/// task's (5 retries, 2 s doubling, 30 s cap), full jitter; and the poll loop's wait.
const SDK_ATTEMPTS: u32 = 3;
const TASK_RETRIES: u32 = 5;
const POLL_SECONDS: f64 = 5.0;
/// An ingest invocation's own work around its waits (reading the upload, the ledger's writes).
const INGEST_SECONDS: f64 = 0.2;

/// How long before a one-page read's booked slot ingest starts its execution (s):
/// `docket_core::admitted::Rules::read_ahead_ms`.
pub fn read_ahead() -> f64 {
    docket_core::admitted::Rules::textract().read_ahead_ms as f64 / 1000.0
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Detect,
    Start,
    Get,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    Arrive(usize),
    /// A call of `doc` lands at Textract; `attempt` counts refusals so far (today's retries).
    Call {
        doc: usize,
        op: Op,
        attempt: u32,
    },
    JobDone(usize),
    Done(usize),
    /// An upload is (again) visible in ingest's queue, sent back `requeues` times so far.
    Visible {
        doc: usize,
        requeues: u32,
    },
    /// An ingest invocation ended: the mapping may start another.
    BatchDone,
}

struct Timed(f64, u64, Event);

impl PartialEq for Timed {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Timed {}
impl PartialOrd for Timed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timed {
    fn cmp(&self, other: &Self) -> Ordering {
        // A max-heap: the earliest time (then the first scheduled) is the greatest.
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

struct World {
    quotas: Quotas,
    design: Design,
    docs: Vec<Doc>,
    rng: Rng,
    heap: BinaryHeap<Timed>,
    seq: u64,
    detect: SlidingWindow,
    start: SlidingWindow,
    get: SlidingWindow,
    running_jobs: usize,
    job_done: Vec<bool>,
    done_at: Vec<Option<f64>>,
    failed: usize,
    quota_errors: usize,
    peak_jobs: usize,
    // The paced design's pacers, semaphore and queue.
    pacers: [Pacer; 3],
    slots_held: usize,
    waiting: VecDeque<usize>,
    queued: usize,
    peak_queue: usize,
    // Ingest as deployed: the pacer of the executions of multi-page documents (a one-page
    // document's is its read's own), the queue's visible uploads with their requeue counts,
    // the invocations running.
    job_executions: Pacer,
    visible: VecDeque<(usize, u32)>,
    invocations: usize,
    peak_ingest: usize,
    requeued: usize,
    /// How long each one-page read waited for its call after its OCR step began (s).
    read_waits: Vec<f64>,
}

impl World {
    fn at(&mut self, time: f64, event: Event) {
        self.seq += 1;
        self.heap.push(Timed(time, self.seq, event));
    }

    fn window(&mut self, op: Op) -> &mut SlidingWindow {
        match op {
            Op::Detect => &mut self.detect,
            Op::Start => &mut self.start,
            Op::Get => &mut self.get,
        }
    }

    /// Paced: the call of `doc` at its next slot of `op`'s pacer at or after `now`, landing
    /// within `max_late` of it (a caller later than that asks for a new slot).
    fn paced_call(&mut self, now: f64, doc: usize, op: Op, max_late: f64) {
        let pacer = op as usize;
        let mut slot = self.pacers[pacer].slot(now);
        let mut late = self.rng.exp(LATE_MEAN);
        while late > max_late {
            slot = self.pacers[pacer].slot(slot + late);
            late = self.rng.exp(LATE_MEAN);
        }
        if op == Op::Detect {
            self.read_waits.push(slot + late - now);
        }
        self.at(
            slot + late,
            Event::Call {
                doc,
                op,
                attempt: 0,
            },
        );
    }

    /// A one-page read whose OCR step begins at `begins` with the slot `booked` at its start:
    /// at the slot if the step is there in time and lands within `max_late` of it, else a
    /// turn as any read takes.
    fn booked_call(&mut self, begins: f64, booked: f64, doc: usize, max_late: f64) {
        let late = self.rng.exp(LATE_MEAN);
        if begins > booked || late > max_late {
            return self.paced_call(begins, doc, Op::Detect, max_late);
        }
        self.read_waits.push(booked + late - begins);
        let (op, attempt) = (Op::Detect, 0);
        self.at(booked + late, Event::Call { doc, op, attempt });
    }

    /// Today's retry of a refused call, or the document's failure once the retries ran out.
    fn naive_retry(&mut self, now: f64, doc: usize, op: Op, attempt: u32) {
        let attempt = attempt + 1;
        let (sdk, task) = (attempt % SDK_ATTEMPTS, attempt / SDK_ATTEMPTS);
        if task > TASK_RETRIES {
            self.failed += 1;
            return;
        }
        let wait = if sdk == 0 {
            self.rng.uniform() * (2.0 * 2f64.powi(task as i32 - 1)).min(30.0)
        } else {
            self.rng.uniform() * 2f64.powi(sdk as i32 - 1).min(20.0)
        };
        self.at(now + wait, Event::Call { doc, op, attempt });
    }

    /// Paced: admits waiting multi-page documents while job slots are free.
    fn admit_waiting(&mut self, now: f64, max_late: f64, job_slots: usize) {
        while self.slots_held < job_slots {
            let Some(doc) = self.waiting.pop_front() else {
                return;
            };
            self.slots_held += 1;
            self.paced_call(now, doc, Op::Start, max_late);
        }
    }

    /// Ingest as deployed: while the mapping has room and uploads are visible, an invocation
    /// takes a batch; each upload asks its execution's pacer for a turn within the horizon
    /// (and a multi-page one then a job slot), and the invocation lasts until its latest turn.
    fn drain(&mut self, now: f64, ingest: Ingest) {
        while self.invocations < ingest.batches && !self.visible.is_empty() {
            self.invocations += 1;
            self.peak_ingest = self.peak_ingest.max(self.invocations);
            let mut ends = now + INGEST_SECONDS;
            let take = ingest.batch_size.min(self.visible.len());
            for (doc, requeues) in self.visible.drain(..take).collect::<Vec<_>>() {
                match self.turn(now, doc, ingest.horizon) {
                    Some(start) => ends = ends.max(start + INGEST_SECONDS),
                    None => self.requeue(now, doc, requeues),
                }
            }
            self.at(ends + ingest.poll_gap, Event::BatchDone);
        }
    }

    /// An upload's execution start: a one-page document's books its read's slot within
    /// `horizon` and starts [`read_ahead`] before it; a multi-page one's takes its turn at the
    /// executions' pacer within `horizon`, then a job slot, and its OCR call takes a turn
    /// after the start. `None`: sent back (a turn taken for a multi-page document that found
    /// every job slot held is spent, as in ingest).
    fn turn(&mut self, now: f64, doc: usize, horizon: f64) -> Option<f64> {
        let Design::Paced {
            max_late,
            job_slots,
            ..
        } = self.design
        else {
            unreachable!("ingest paces the paced design only");
        };
        if self.docs[doc].pages == 1 {
            let read_ahead = read_ahead();
            let booked = self.pacers[Op::Detect as usize].turn(now + read_ahead, horizon)?;
            let start = (booked - read_ahead).max(now);
            self.booked_call(start + START_SECONDS, booked, doc, max_late);
            return Some(start);
        }
        let start = self.job_executions.turn(now, horizon)?;
        if self.slots_held >= job_slots {
            return None;
        }
        self.slots_held += 1;
        self.paced_call(start + START_SECONDS, doc, Op::Start, max_late);
        Some(start)
    }

    /// `doc` sent back to the queue, for as long as ingest sends it back.
    fn requeue(&mut self, now: f64, doc: usize, requeues: u32) {
        self.requeued += 1;
        let message_id = format!("upload-{doc}");
        let delay = f64::from(requeue_delay_seconds(&message_id, requeues));
        self.at(
            now + delay,
            Event::Visible {
                doc,
                requeues: requeues + 1,
            },
        );
    }

    fn arrive(&mut self, now: f64, doc: usize) {
        match self.design {
            Design::Naive => {
                let t = now + START_SECONDS * (0.5 + self.rng.uniform());
                self.at(
                    t,
                    Event::Call {
                        doc,
                        op: Op::Start,
                        attempt: 0,
                    },
                );
            }
            Design::Paced {
                ingest: Some(ingest),
                ..
            } => {
                self.queued += 1;
                self.peak_queue = self.peak_queue.max(self.queued);
                self.visible.push_back((doc, 0));
                self.drain(now, ingest);
            }
            Design::Paced {
                max_late,
                job_slots,
                ingest: None,
            } => {
                self.queued += 1;
                self.peak_queue = self.peak_queue.max(self.queued);
                if self.docs[doc].pages == 1 {
                    self.paced_call(now + START_SECONDS, doc, Op::Detect, max_late);
                } else {
                    self.waiting.push_back(doc);
                    self.admit_waiting(now, max_late, job_slots);
                }
            }
        }
    }

    fn call(&mut self, now: f64, doc: usize, op: Op, attempt: u32) {
        let admitted = self.window(op).call(now)
            && (op != Op::Start || self.running_jobs < self.quotas.max_jobs);
        if !admitted {
            self.quota_errors += 1;
            match self.design {
                Design::Naive => self.naive_retry(now, doc, op, attempt),
                Design::Paced { max_late, .. } => self.paced_call(now, doc, op, max_late),
            }
            return;
        }
        if matches!(self.design, Design::Paced { .. }) && op != Op::Get {
            self.queued -= 1; // its OCR call landed: out of the queue
        }
        match op {
            Op::Detect => {
                let t = now + DETECT_SECONDS + self.rng.exp(0.5);
                self.at(t, Event::Done(doc));
            }
            Op::Start => {
                self.running_jobs += 1;
                self.peak_jobs = self.peak_jobs.max(self.running_jobs);
                let pages = self.docs[doc].pages as f64;
                let t = now + JOB_BASE_SECONDS + JOB_PAGE_SECONDS * pages + self.rng.exp(1.0);
                self.at(t, Event::JobDone(doc));
                if let Design::Naive = self.design {
                    self.at(
                        now + POLL_SECONDS,
                        Event::Call {
                            doc,
                            op: Op::Get,
                            attempt: 0,
                        },
                    );
                }
            }
            Op::Get if self.job_done[doc] => self.at(now + 0.2, Event::Done(doc)),
            Op::Get => self.at(
                now + POLL_SECONDS,
                Event::Call {
                    doc,
                    op: Op::Get,
                    attempt: 0,
                },
            ),
        }
    }

    fn job_done(&mut self, now: f64, doc: usize) {
        self.running_jobs -= 1;
        self.job_done[doc] = true;
        if let Design::Paced {
            max_late,
            job_slots,
            ..
        } = self.design
        {
            // The completion notification: the slot goes back, the result is fetched.
            self.slots_held -= 1;
            self.paced_call(now, doc, Op::Get, max_late);
            self.admit_waiting(now, max_late, job_slots);
        }
    }
}

/// Runs `docs` through `design` against `quotas`; `seed` makes the run repeatable.
pub fn simulate(docs: &[Doc], design: Design, quotas: Quotas, seed: u64) -> Report {
    let (max_late, ingest) = match design {
        Design::Paced {
            max_late, ingest, ..
        } => (max_late, ingest),
        Design::Naive => (0.0, None),
    };
    let rate = |quota| Pacer::new(Pacer::safe_rate(quota, max_late), max_late);
    let mut world = World {
        quotas,
        design,
        docs: docs.to_vec(),
        rng: Rng::new(seed),
        heap: BinaryHeap::new(),
        seq: 0,
        detect: SlidingWindow::new(quotas.detect_tps),
        start: SlidingWindow::new(quotas.start_tps),
        get: SlidingWindow::new(quotas.get_tps),
        running_jobs: 0,
        job_done: vec![false; docs.len()],
        done_at: vec![None; docs.len()],
        failed: 0,
        quota_errors: 0,
        peak_jobs: 0,
        pacers: [
            rate(quotas.detect_tps),
            rate(quotas.start_tps),
            rate(quotas.get_tps),
        ],
        slots_held: 0,
        waiting: VecDeque::new(),
        queued: 0,
        peak_queue: 0,
        job_executions: rate(quotas.start_tps),
        visible: VecDeque::new(),
        invocations: 0,
        peak_ingest: 0,
        requeued: 0,
        read_waits: Vec::new(),
    };
    for (i, doc) in docs.iter().enumerate() {
        world.at(doc.arrives, Event::Arrive(i));
    }
    while let Some(Timed(now, _, event)) = world.heap.pop() {
        match event {
            Event::Arrive(doc) => world.arrive(now, doc),
            Event::Call { doc, op, attempt } => world.call(now, doc, op, attempt),
            Event::JobDone(doc) => world.job_done(now, doc),
            Event::Done(doc) => world.done_at[doc] = Some(now),
            Event::Visible { doc, requeues } => {
                world.visible.push_back((doc, requeues));
                world.drain(now, ingest.expect("only ingest sends uploads back"));
            }
            Event::BatchDone => {
                world.invocations -= 1;
                if let Some(ingest) = ingest {
                    world.drain(now, ingest);
                }
            }
        }
    }
    report(&world, docs)
}

fn report(world: &World, docs: &[Doc]) -> Report {
    let first = docs.iter().map(|d| d.arrives).fold(f64::INFINITY, f64::min);
    let mut latencies: Vec<f64> = docs
        .iter()
        .zip(&world.done_at)
        .filter_map(|(d, done)| done.map(|t| t - d.arrives))
        .collect();
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| percentile(&latencies, p);
    let mut read_waits = world.read_waits.clone();
    read_waits.sort_by(f64::total_cmp);
    let completed_at = world
        .done_at
        .iter()
        .flatten()
        .fold(0.0f64, |a, &t| a.max(t))
        - first;
    // The quotas alone: each operation's calls at its quota's rate, the busiest one deciding,
    // plus one document's own OCR.
    let (single, multi) = docs.iter().fold((0.0, 0.0), |(s, m), d| {
        if d.pages == 1 {
            (s + 1.0, m)
        } else {
            (s, m + 1.0)
        }
    });
    let burst = docs.iter().all(|d| d.arrives == first);
    let ideal = match world.design {
        _ if !burst => 0.0,
        Design::Paced { .. } => {
            (single / world.quotas.detect_tps as f64).max(multi / world.quotas.start_tps as f64)
                + DETECT_SECONDS
        }
        Design::Naive => {
            (single + multi) / world.quotas.start_tps as f64 + JOB_BASE_SECONDS + JOB_PAGE_SECONDS
        }
    };
    Report {
        documents: docs.len(),
        failed: world.failed,
        quota_errors: world.quota_errors,
        completed_at,
        ideal,
        latency_p50: pct(0.5),
        latency_p95: pct(0.95),
        latency_max: pct(1.0),
        read_wait_p50: percentile(&read_waits, 0.5),
        read_wait_p95: percentile(&read_waits, 0.95),
        peak_queue: world.peak_queue,
        peak_jobs: world.peak_jobs,
        requeued: world.requeued,
        peak_ingest: world.peak_ingest,
        peak_detect: world.detect.peak,
        peak_start: world.start.peak,
        peak_get: world.get.peak,
    }
}
