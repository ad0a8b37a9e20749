//! The steps of a run that have an operation id: each step's name is part of its operation id,
//! which is stored (ledger records, audit entries) and handed to providers as an idempotency
//! key, so these names never change.

use std::fmt;

use crate::error::ErrorKind;
use crate::ids::{OperationId, RunId};

/// A step of a run, as its operation id names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// Text detection by the OCR provider (`steps::ocr`).
    Ocr,
    /// Extraction and validation (`steps::validate`).
    Validate,
    /// Writing the result and promoting it (`steps::route::run`).
    Route,
    /// Recording a technical failure, from the execution's status change (`steps::recover::fail`).
    Fail,
    /// Reopening a failed run before its execution is redriven (`steps::recover::reopen`).
    Redrive,
    /// Recording a reviewer's rejection (`steps::route::reject`).
    Reject,
    /// Opening and deciding the review task (`steps::review::open`, `decide`).
    Review,
    /// Escalating a review that was not decided in time (`steps::review::escalate`).
    Escalate,
    /// Waiting for the downstream consumer's receipt (`steps::saga::await_receipt`, `receipt`).
    Receipt,
    /// Undoing a run's saga in reverse order (`steps::saga::compensate_run`).
    Compensate,
    /// Starting a run of a later generation for a bulk reprocess (`steps::reprocess::start`).
    Reprocess,
}

impl Step {
    /// Every step, in pipeline order.
    pub const ALL: [Step; 11] = [
        Step::Ocr,
        Step::Validate,
        Step::Route,
        Step::Fail,
        Step::Redrive,
        Step::Reject,
        Step::Review,
        Step::Escalate,
        Step::Receipt,
        Step::Compensate,
        Step::Reprocess,
    ];

    /// The steps whose operations the operation ledger holds (to join a run with them).
    pub const LEDGERED: [Step; 1] = [Step::Ocr];

    /// The name, as it goes into the operation id.
    pub fn name(self) -> &'static str {
        match self {
            Step::Ocr => "ocr",
            Step::Validate => "validate",
            Step::Route => "route",
            Step::Fail => "fail",
            Step::Redrive => "redrive",
            Step::Reject => "reject",
            Step::Review => "review",
            Step::Escalate => "escalate",
            Step::Receipt => "receipt",
            Step::Compensate => "compensate",
            Step::Reprocess => "reprocess",
        }
    }

    /// The business outcomes with which this step ends a run: `Business.*` errors the step
    /// raises (or, for review, that the reviewer's rejection sends back to the waiting Task).
    /// Every Task that runs the step catches each of them by name, apart from the catch-all,
    /// and never retries it (`tests/lint` checks the state machines against this list).
    pub fn business_outcomes(self) -> &'static [ErrorKind] {
        match self {
            Step::Ocr => &[ErrorKind::OcrFailed, ErrorKind::TooManyPages],
            Step::Validate => &[ErrorKind::DocumentInvalid],
            Step::Review => &[ErrorKind::ReviewRejected],
            Step::Receipt => &[ErrorKind::DuplicateInvoice],
            Step::Route
            | Step::Fail
            | Step::Redrive
            | Step::Reject
            | Step::Escalate
            | Step::Compensate
            | Step::Reprocess => &[],
        }
    }

    /// This step's operation of `run`.
    pub fn operation(self, run: &RunId) -> OperationId {
        OperationId::new(run, self.name(), None)
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::Tenant;

    #[test]
    fn a_steps_operation_is_the_operation_id_of_its_name() {
        let run = crate::memory::test_run(&Tenant::parse("acme").unwrap(), "a.pdf", "v1");
        let names: Vec<_> = Step::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            [
                "ocr",
                "validate",
                "route",
                "fail",
                "redrive",
                "reject",
                "review",
                "escalate",
                "receipt",
                "compensate",
                "reprocess"
            ]
        );
        for step in Step::ALL {
            assert_eq!(
                step.operation(&run),
                OperationId::new(&run, step.name(), None)
            );
        }
    }

    #[test]
    fn the_steps_that_end_a_run_by_a_business_outcome_name_it() {
        let named: Vec<_> = Step::ALL
            .iter()
            .map(|s| (s.name(), s.business_outcomes()))
            .filter(|(_, kinds)| !kinds.is_empty())
            .collect();
        assert_eq!(
            named,
            [
                ("ocr", &[ErrorKind::OcrFailed, ErrorKind::TooManyPages][..]),
                ("validate", &[ErrorKind::DocumentInvalid][..]),
                ("review", &[ErrorKind::ReviewRejected][..]),
                ("receipt", &[ErrorKind::DuplicateInvoice][..]),
            ]
        );
    }

    #[test]
    fn a_steps_business_outcomes_are_business_errors() {
        for step in Step::ALL {
            for kind in step.business_outcomes() {
                assert_eq!(kind.family(), crate::Family::Business, "{step}: {kind}");
            }
        }
    }
}
