//! Admission to a provider with quotas (issue 13; SCALE.md): the pure rules of the two shared
//! records through which every caller of Textract takes its turn, so that however many
//! documents arrive no quota is exceeded and none fails for it.
//!
//! - [`pacer`]: start slots `1 / rate` apart for one rate quota (calls per second), kept in one
//!   record advanced by a conditional write. A caller calls at its slot; one that finds itself
//!   later than `max_late` gives the slot up and takes another, so a one-second window never
//!   holds more calls than the quota ([`pacer::Pace::for_quota`]).
//! - [`slots`]: a semaphore of leased slots for a concurrency quota (jobs that may run at
//!   once): a holder (the run's OCR operation) takes one before its job starts and gives it
//!   back when the job ends; a slot whose lease ran out (a crashed holder) is reclaimed. Taking
//!   and giving back are idempotent per holder.
//!
//! The adapters (`docket-aws`: DynamoDB; [`crate::memory`]: in memory) apply these decisions
//! as conditional writes; the tests here check them against the quota as AWS counts it
//! (`tests/scale` simulates the whole admission).

pub mod pacer;
pub mod slots;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Error;

/// A provider's quotas as granted to the account (AWS: Service Quotas), which admission keeps
/// to: calls per second per operation, and jobs that may run at once. An operation absent from
/// `tps` is not paced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Quotas {
    /// Calls per second, by the provider's operation name.
    pub tps: BTreeMap<String, u32>,
    /// Asynchronous jobs that may exist at once.
    pub max_jobs: u32,
    /// Not a quota of the provider's but of the path to it: how much longer one call may take
    /// to reach the provider's clock than another (ms). Call slots are spaced for it
    /// ([`pacer::Pace::for_quota`]), so a call held up on the way does not land in the next
    /// call's second. Absent from a record: [`DEFAULT_ARRIVAL_JITTER_MS`].
    #[serde(default = "default_arrival_jitter_ms")]
    pub arrival_jitter_ms: u32,
}

/// The arrival jitter assumed from a Lambda function to a regional AWS endpoint (ms): calls
/// within one region take milliseconds to tens of milliseconds, so 50 covers all but a rare
/// outlier, whose refusal (`ProvisionedThroughputExceededException`) is retried as
/// `Transient.Dependency`.
pub const DEFAULT_ARRIVAL_JITTER_MS: u32 = 50;

fn default_arrival_jitter_ms() -> u32 {
    DEFAULT_ARRIVAL_JITTER_MS
}

/// Textract's operation that starts a text detection job.
pub const START_TEXT_DETECTION: &str = "StartDocumentTextDetection";
/// Textract's operation that reads a text detection job.
pub const GET_TEXT_DETECTION: &str = "GetDocumentTextDetection";
/// Textract's synchronous text detection.
pub const DETECT_TEXT: &str = "DetectDocumentText";

impl Quotas {
    /// Amazon Textract's default quotas in us-east-1 (AWS General Reference, "Amazon Textract
    /// endpoints and quotas", read 2026-12-03; the same figures our local Textract enforces by
    /// default): 15 starts, 25 gets and 25 synchronous detections a second, 600 jobs at once.
    pub fn textract_defaults() -> Quotas {
        Quotas {
            tps: [
                (START_TEXT_DETECTION, 15),
                (GET_TEXT_DETECTION, 25),
                (DETECT_TEXT, 25),
            ]
            .into_iter()
            .map(|(op, n)| (op.to_string(), n))
            .collect(),
            max_jobs: 600,
            arrival_jitter_ms: DEFAULT_ARRIVAL_JITTER_MS,
        }
    }

    /// Refuses quotas no caller could keep to: a rate or a job limit of zero would stop every
    /// document for good (`Fatal.BadInput`, naming the quota).
    pub fn check(&self) -> Result<(), Error> {
        if let Some((op, _)) = self.tps.iter().find(|(_, &n)| n == 0) {
            return Err(Error::BadInput(format!(
                "quota {op}: 0 calls a second admits nothing; leave the operation out to not pace it"
            )));
        }
        if self.max_jobs == 0 {
            return Err(Error::BadInput(
                "quota maxJobs: 0 jobs at once admits nothing".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_of_zero_is_refused_by_name() {
        assert!(Quotas::textract_defaults().check().is_ok());
        let mut q = Quotas::textract_defaults();
        q.tps.insert(START_TEXT_DETECTION.into(), 0);
        let e = q.check().unwrap_err();
        assert_eq!(e.name(), "Fatal.BadInput");
        assert!(e.to_string().contains(START_TEXT_DETECTION));
        let q = Quotas {
            max_jobs: 0,
            ..Quotas::textract_defaults()
        };
        assert!(q.check().unwrap_err().to_string().contains("maxJobs"));
    }
}
