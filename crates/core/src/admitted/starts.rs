//! Executions started at the rate OCR can admit them (issue 13, SCALE.md): [`PacedStarts`]
//! wraps a [`Workflow`] so that each `start` first takes a slot of one pacer
//! (`textract-executions`), spaced for the provider's start quota (its
//! `StartDocumentTextDetection` calls a second, as recorded or by default), under the same
//! rules as OCR's own call slots ([`super::take_turn`]).
//!
//! Why: every execution asks Textract to start one job within seconds. Started faster than
//! the quota, the surplus waits in the OCR step (retrying `Transient.QuotaFull`, each retry a
//! billed transition, each wait bounded); started at the quota, it waits in ingest's queue
//! (SQS: durable for 14 days, free while it waits), and however many documents arrive none
//! fails for the quota. A slot beyond the horizon is `Transient.QuotaFull`: the queue delivers
//! the event again later. `running` is not paced.

use serde_json::Value;

use super::{take_turn, Rules};
use crate::ports::{Admission, Started, Timer, Workflow};
use crate::Error;

/// The pacer executions take their turn at.
pub const EXECUTIONS_PACER: &str = "executions";

/// A [`Workflow`] whose starts take their turn first (see the module docs).
#[derive(Debug)]
pub struct PacedStarts<W, A, T> {
    inner: W,
    admission: A,
    timer: T,
    rules: Rules,
}

impl<W: Workflow, A: Admission, T: Timer> PacedStarts<W, A, T> {
    /// `inner`'s starts paced through `admission` at `rules`' start quota, waiting on `timer`.
    pub fn new(inner: W, admission: A, timer: T, rules: Rules) -> Self {
        PacedStarts {
            inner,
            admission,
            timer,
            rules,
        }
    }

    /// The wrapped workflow.
    pub fn inner(&self) -> &W {
        &self.inner
    }
}

impl<W: Workflow, A: Admission, T: Timer> Workflow for PacedStarts<W, A, T> {
    async fn start(&self, name: &str, input: &Value) -> Result<Started, Error> {
        let quotas = self.rules.quotas(&self.admission).await?;
        if let Some(&per_second) = quotas.tps.get(self.rules.start) {
            let pace = self.rules.pace(per_second, &quotas);
            let pacer = self.rules.pacer(EXECUTIONS_PACER);
            let lead = self.rules.lead_ms;
            let turn = take_turn(&self.admission, &self.timer, &pacer, &pace, lead).await?;
            turn.admitted(&pacer, self.rules.horizon_ms)?;
        }
        self.inner.start(name, input).await
    }

    async fn running(&self, name: &str) -> Result<bool, Error> {
        self.inner.running(name).await
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::admission::{Quotas, START_TEXT_DETECTION};
    use crate::memory::{MemoryAdmission, MemoryWorkflow, VirtualTimer};

    /// The engine, with the instant of every start it saw.
    #[derive(Default)]
    struct Clocked {
        engine: MemoryWorkflow,
        timer: VirtualTimer,
        at: Mutex<Vec<i64>>,
    }

    impl Workflow for &Clocked {
        async fn start(&self, name: &str, input: &Value) -> Result<Started, Error> {
            self.at.lock().unwrap().push(self.timer.now_ms());
            self.engine.start(name, input).await
        }
        async fn running(&self, name: &str) -> Result<bool, Error> {
            self.engine.running(name).await
        }
    }

    fn starts_a_second(n: u32) -> Quotas {
        Quotas {
            tps: BTreeMap::from([(START_TEXT_DETECTION.to_string(), n)]),
            ..Quotas::textract_defaults()
        }
    }

    async fn paced(
        engine: &Clocked,
        quotas: Option<Quotas>,
    ) -> PacedStarts<&Clocked, MemoryAdmission, &VirtualTimer> {
        let admission = MemoryAdmission::default();
        if let Some(q) = quotas {
            admission.set_quotas("textract", &q).await.unwrap();
        }
        PacedStarts::new(engine, admission, &engine.timer, Rules::textract())
    }

    #[tokio::test]
    async fn starts_at_once_are_spaced_for_the_start_quota_and_the_rest_told_to_come_back() {
        let engine = Clocked::default();
        let workflow = paced(&engine, Some(starts_a_second(2))).await;
        let (mut started, mut later) = (0, Vec::new());
        for n in 0..20 {
            engine.timer.set(0); // every event arrives at once
            match workflow.start(&format!("run-{n}"), &json!({})).await {
                Ok(Started::New) => started += 1,
                Ok(other) => panic!("{other:?}"),
                Err(e) => later.push(e),
            }
        }
        let at = engine.at.lock().unwrap().clone();
        assert_eq!(
            at.len(),
            started,
            "the engine saw every admitted start only"
        );
        // 2 a second with 50 ms lateness and 50 ms jitter: a slot every 550 ms, 10 within 5 s.
        assert_eq!(started, 10);
        assert!(at.windows(2).all(|w| w[1] - w[0] >= 550), "{at:?}");
        assert!(
            later.iter().all(|e| e.name() == "Transient.QuotaFull"
                && e.to_string().contains("textract-executions")),
            "{later:?}"
        );
        assert_eq!(later.len(), 10);
    }

    #[tokio::test]
    async fn with_no_quota_recorded_starts_keep_to_aws_default() {
        let engine = Clocked::default();
        let workflow = paced(&engine, None).await;
        for n in 0..30 {
            engine.timer.set(0);
            workflow
                .start(&format!("run-{n}"), &json!({}))
                .await
                .unwrap();
        }
        let at = engine.at.lock().unwrap().clone();
        // 15 a second (AWS's default) with 100 ms of lateness and jitter: every 74 ms.
        assert!(at.windows(2).all(|w| w[1] - w[0] >= 74), "{at:?}");
        assert!(at.iter().filter(|&&t| t < 1000).count() <= 15, "{at:?}");
    }

    #[tokio::test]
    async fn an_unpaced_start_quota_starts_at_once_and_running_is_never_paced() {
        let engine = Clocked::default();
        let quotas = Quotas {
            tps: BTreeMap::new(),
            ..Quotas::textract_defaults()
        };
        let workflow = paced(&engine, Some(quotas)).await;
        for n in 0..5 {
            workflow
                .start(&format!("run-{n}"), &json!({}))
                .await
                .unwrap();
        }
        assert_eq!(*engine.at.lock().unwrap(), vec![0; 5]);
        assert!(workflow.running("run-0").await.unwrap());
        assert!(!workflow.running("run-9").await.unwrap());
    }
}
