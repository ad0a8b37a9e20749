//! Business and operations metrics, written as CloudWatch embedded metric format (EMF) lines on
//! stdout: CloudWatch Logs extracts the metric from the line, so no `PutMetricData` call (and no
//! latency, no IAM grant) is needed. Each line also carries the ids of the step that wrote it
//! (documentId, runId, operationId), as properties, not dimensions.
//!
//! The namespace is `METRICS_NAMESPACE` (the template sets `docket/<Stage>`, the namespace of
//! its alarms and dashboard). A per-tenant metric has two dimension sets, `[Tenant]` and `[]`
//! (the total); the others only `[]`. A metric counts the answers a step gave: a step the state
//! machine retried after it had answered (rare: a lost answer) counts twice; the runs table is
//! the exact record, metrics are for alarms and trends.

use std::time::{SystemTime, UNIX_EPOCH};

use docket_core::ids::{DocumentId, RunId, Tenant};
use docket_core::model::run::RunInput;
use docket_core::model::step::Step;
use serde_json::{json, Map, Value};

/// A metric the functions write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// A run routed and promoted to its document's result (route). Per tenant.
    DocumentsCompleted,
    /// A run that validation sent to a reviewer (validate). Per tenant.
    DocumentsToReview,
    /// A run that validation found invalid, a business outcome (validate). Per tenant.
    DocumentsInvalid,
    /// Pages the OCR provider read for a run (ocr poll; a reused OCR reads none). Per tenant.
    OcrPages,
    /// Seconds from a review task's opening to its decision (review-api). Per tenant.
    ReviewLatency,
    /// An execution that failed for a technical reason, after its retries (route, from the
    /// execution's status change). The technical-failure alarm's metric.
    TechnicalFailures,
    /// An execution that ended with its run `unresolved` (route, from the status change).
    RunsUnresolved,
    /// A review not decided in time, escalated to its owner (review-callback). Per tenant.
    ReviewsEscalated,
    /// Seconds since the oldest pending review task was opened, of any tenant (route's
    /// scheduled sweep, every minute, while one is pending).
    OldestOpenReviewAge,
}

impl Metric {
    /// The metric's name in CloudWatch.
    pub fn name(self) -> &'static str {
        match self {
            Metric::DocumentsCompleted => "DocumentsCompleted",
            Metric::DocumentsToReview => "DocumentsToReview",
            Metric::DocumentsInvalid => "DocumentsInvalid",
            Metric::OcrPages => "OcrPages",
            Metric::ReviewLatency => "ReviewLatency",
            Metric::TechnicalFailures => "TechnicalFailures",
            Metric::RunsUnresolved => "RunsUnresolved",
            Metric::ReviewsEscalated => "ReviewsEscalated",
            Metric::OldestOpenReviewAge => "OldestOpenReviewAge",
        }
    }

    /// Whether it has a per-tenant dimension set besides the total.
    pub fn per_tenant(self) -> bool {
        !matches!(
            self,
            Metric::TechnicalFailures | Metric::RunsUnresolved | Metric::OldestOpenReviewAge
        )
    }

    /// Its CloudWatch unit.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::ReviewLatency | Metric::OldestOpenReviewAge => "Seconds",
            _ => "Count",
        }
    }
}

/// The run and step a metric line belongs to: its tenant (a dimension of per-tenant metrics, a
/// property of the others) and its ids.
#[derive(Debug, Clone, Copy)]
pub struct Of<'a> {
    /// The run's tenant.
    pub tenant: &'a Tenant,
    /// The document.
    pub document_id: &'a DocumentId,
    /// The run.
    pub run_id: &'a RunId,
    /// The step whose operation id the line carries.
    pub step: Step,
}

/// The EMF line of one value of `metric`: the `_aws` metadata (namespace, dimension sets, the
/// metric's name and unit), the dimension values, the value, the ids, and `extra` properties
/// (names only, never document content).
pub fn line(
    namespace: &str,
    metric: Metric,
    value: f64,
    of: Of<'_>,
    extra: &[(&str, &str)],
    timestamp_ms: u128,
) -> Value {
    let dimensions = if metric.per_tenant() {
        json!([["Tenant"], []])
    } else {
        json!([[]])
    };
    let mut line = Map::new();
    line.insert(
        "_aws".into(),
        json!({
            "Timestamp": timestamp_ms as u64,
            "CloudWatchMetrics": [{
                "Namespace": namespace,
                "Dimensions": dimensions,
                "Metrics": [{"Name": metric.name(), "Unit": metric.unit()}],
            }],
        }),
    );
    line.insert("Tenant".into(), of.tenant.as_str().into());
    line.insert(metric.name().into(), value.into());
    line.insert("documentId".into(), of.document_id.as_str().into());
    line.insert("runId".into(), of.run_id.as_str().into());
    let op = of.step.operation(of.run_id);
    line.insert("operationId".into(), op.as_str().into());
    for (k, v) in extra {
        line.insert((*k).into(), (*v).into());
    }
    Value::Object(line)
}

/// Writes one value of `metric` as an EMF line on stdout, in `METRICS_NAMESPACE` (`docket`
/// when unset, as in unit tests).
pub fn emit(metric: Metric, value: f64, of: Of<'_>, extra: &[(&str, &str)]) {
    let namespace = std::env::var("METRICS_NAMESPACE").unwrap_or_else(|_| "docket".into());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    println!("{}", line(&namespace, metric, value, of, extra, now));
}

impl<'a> Of<'a> {
    /// `step` of the run `run`.
    pub fn run(run: &'a RunInput, step: Step) -> Self {
        Of {
            tenant: &run.tenant,
            document_id: &run.document_id,
            run_id: &run.run_id,
            step,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of<'a>(tenant: &'a Tenant, run: &'a RunId, document: &'a DocumentId) -> Of<'a> {
        Of {
            tenant,
            document_id: document,
            run_id: run,
            step: Step::Route,
        }
    }

    #[test]
    fn a_per_tenant_metric_has_a_tenant_and_a_total_dimension_set_and_the_ids() {
        let acme = Tenant::parse("acme").unwrap();
        let run = docket_core::memory::test_run(&acme, "a.pdf", "v1");
        let document = run.document_id();

        let l = line(
            "docket/dev",
            Metric::DocumentsCompleted,
            1.0,
            of(&acme, &run, &document),
            &[],
            1_700_000_000_000,
        );

        let emf = &l["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(l["_aws"]["Timestamp"], 1_700_000_000_000u64);
        assert_eq!(emf["Namespace"], "docket/dev");
        assert_eq!(emf["Dimensions"], json!([["Tenant"], []]));
        assert_eq!(
            emf["Metrics"],
            json!([{"Name": "DocumentsCompleted", "Unit": "Count"}])
        );
        assert_eq!(l["Tenant"], "acme");
        assert_eq!(l["DocumentsCompleted"], 1.0);
        assert_eq!(l["documentId"], document.as_str());
        assert_eq!(l["runId"], run.as_str());
        assert_eq!(l["operationId"], Step::Route.operation(&run).as_str());
    }

    #[test]
    fn a_stack_wide_metric_has_only_the_total_and_its_extra_properties() {
        let acme = Tenant::parse("acme").unwrap();
        let run = docket_core::memory::test_run(&acme, "a.pdf", "v1");
        let document = run.document_id();

        let l = line(
            "docket/dev",
            Metric::TechnicalFailures,
            1.0,
            of(&acme, &run, &document),
            &[("error", "Transient.Dependency")],
            1,
        );

        assert_eq!(l["_aws"]["CloudWatchMetrics"][0]["Dimensions"], json!([[]]));
        assert_eq!(l["error"], "Transient.Dependency");
        assert_eq!(Metric::ReviewLatency.unit(), "Seconds");
    }
}
