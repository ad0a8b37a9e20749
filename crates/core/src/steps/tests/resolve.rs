//! An operator's decision on an unresolved operation (`steps::resolve`).

use super::*;
use crate::ids::OperationId;
use crate::ledger::LedgerStatus;
use crate::ports::Ledger;
use crate::review::identity::Operator;
use crate::steps::resolve::{resolve, Resolution};

fn olivia() -> Operator {
    Operator {
        id: "olivia".into(),
        principal: "arn:aws:sts::000000000000:assumed-role/docket-operator/olivia".into(),
    }
}

impl World {
    /// A run whose OCR start stayed ambiguous past the limit: unresolved, with its operation.
    async fn unresolved_run(&self) -> (RunInput, OperationId) {
        let input = self.ocr_ready().await;
        *self.ports.ocr.lose_start_answers.lock().unwrap() = 10;
        for _ in 0..self.ctx.config.ledger.max_ambiguous_attempts {
            let _ = self.start(&input).await;
        }
        let op = Step::Ocr.operation(&input.run_id);
        let rec = self.ports.store.ledger.get(&op).await.unwrap().unwrap();
        assert_eq!(rec.status, LedgerStatus::Unresolved, "the setup's premise");
        (input, op)
    }

    async fn resolve(
        &self,
        input: &RunInput,
        op: &OperationId,
        note: &str,
    ) -> Result<Resolution, Error> {
        resolve(&self.ports, &self.ctx, &olivia(), op, &input.run_id, note).await
    }
}

#[tokio::test]
async fn a_resolution_records_the_operator_in_the_ledger_the_run_and_the_chain_once() {
    // given an unresolved run
    let w = world();
    let (input, op) = w.unresolved_run().await;

    // when an operator resolves its operation, and then anyone tries again
    let first = w
        .resolve(&input, &op, "job found in Textract; re-uploaded")
        .await
        .unwrap();
    let second = w.resolve(&input, &op, "another opinion").await.unwrap_err();

    // then the ledger, the run and the chain record the first decision only, and the second is
    // refused naming who decided
    assert_eq!(first.run_was, RunStatus::Unresolved);
    let rec = w.ports.store.ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.status, LedgerStatus::Resolved);
    assert_eq!(rec.resolved_by.as_deref(), Some("olivia"));
    assert_eq!(
        rec.resolution.as_deref(),
        Some("job found in Textract; re-uploaded")
    );
    assert_eq!(
        rec.attempts.last().unwrap().note,
        "resolved by operator olivia"
    );
    let run = w.ports.store.run(&input.run_id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Resolved);
    assert_eq!(second.name(), "Conflict.AlreadyDecided");
    assert!(second.to_string().contains("olivia"), "{second}");
    let entries = w.entries(&input.document_id).await;
    let resolved: Vec<_> = entries
        .iter()
        .filter(|e| e.draft.action == "operation.resolved")
        .collect();
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0].seq, first.audit_seq);
    assert_eq!(resolved[0].draft.detail["operator"], "olivia");
    assert_eq!(
        resolved[0].draft.detail["principal"],
        olivia().principal.as_str()
    );
    assert!(w.ports.store.ledger.unresolved().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_resolved_operation_is_never_attempted_again() {
    let w = world();
    let (input, op) = w.unresolved_run().await;
    w.resolve(&input, &op, "decided by hand").await.unwrap();
    let starts = *w.ports.ocr.start_calls.lock().unwrap();

    let again = w.start(&input).await.unwrap_err();

    assert_eq!(again.name(), "Conflict.AlreadyDecided");
    assert_eq!(*w.ports.ocr.start_calls.lock().unwrap(), starts);
}

#[tokio::test]
async fn only_an_unresolved_operation_of_that_run_with_a_note_is_resolved() {
    // given a run whose OCR completed, and an unresolved one
    let w = world();
    let done = w.input_of(
        &w.ingest(&w.upload("inbox/acme/done.png", TIFF, "2026-11-30T10:00:00Z"))
            .await,
    );
    w.script_ocr("inbox/acme/done.png", ocr_of(&invoice_lines("10.00"), 0.97));
    assert_eq!(w.run(&done).await.unwrap().0, "completed");
    let (input, op) = w.unresolved_run().await;
    let done_op = Step::Ocr.operation(&done.run_id);

    // when each wrong request is made
    let refused = [
        w.resolve(&done, &done_op, "nothing to decide").await,
        w.resolve(&done, &op, "not this run's").await,
        w.resolve(&input, &op, "  ").await,
        w.resolve(&input, &op, "bell \u{7}").await,
        w.resolve(&input, &op, &"x".repeat(2001)).await,
    ];

    // then each is refused as bad input, and the operation is still unresolved
    for r in refused {
        assert_eq!(r.unwrap_err().name(), "Fatal.BadInput");
    }
    let rec = w.ports.store.ledger.get(&op).await.unwrap().unwrap();
    assert_eq!(rec.status, LedgerStatus::Unresolved);
}
