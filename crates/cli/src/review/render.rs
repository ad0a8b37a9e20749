//! The text output of `docket review` (`--output json` prints the tasks themselves).

use docket_core::model::fields::FieldName;
use docket_core::review::{FieldSource, ReviewTask, Verdict};

pub(super) fn list_text(tasks: &[ReviewTask]) -> String {
    if tasks.is_empty() {
        return "no review tasks".into();
    }
    tasks
        .iter()
        .map(|t| {
            let reasons: Vec<&str> = t.reasons.iter().map(|r| r.code.as_str()).collect();
            format!(
                "{}  {}  {:<8} {}  {}",
                t.task_id,
                t.document_id,
                t.status.as_str(),
                t.deadline,
                reasons.join(",")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn source_text(source: &FieldSource) -> String {
    match source {
        FieldSource::Extracted { page, line } => format!("extracted p{page} l{line}"),
        FieldSource::Reviewer { id } => format!("reviewer {id}"),
    }
}

pub(super) fn show_text(t: &ReviewTask) -> String {
    let mut lines = vec![
        format!("task      {}", t.task_id),
        format!("tenant    {}", t.tenant),
        format!("document  {}", t.document_id),
        format!("run       {}", t.run_id),
        format!("status    {}", t.status.as_str()),
        format!("created   {}", t.created_at),
        format!("deadline  {}", t.deadline),
        "fields:".into(),
    ];
    for (name, f) in &t.fields {
        lines.push(format!(
            "  {:<15} {:<30} {:.2}  {}",
            name.as_str(),
            f.value,
            f.confidence,
            source_text(&f.source)
        ));
    }
    lines.push("reasons:".into());
    for r in &t.reasons {
        let field = r.field.map(FieldName::as_str).unwrap_or("-");
        lines.push(format!("  {:<22} {:<15} {}", r.code, field, r.detail));
    }
    lines.push("pointers:".into());
    lines.push(format!("  document  {}", t.document));
    lines.push(format!("  ocr       {}", t.ocr));
    lines.push(format!("  report    {}", t.report));
    if let Some(d) = &t.decision {
        lines.push(format!("decision  {}", d.summary()));
        lines.extend(verdict_lines(t));
    }
    if let Some(at) = &t.delivered_at {
        lines.push(format!("delivered {at}"));
    }
    if let Some(e) = &t.expiry {
        lines.push(format!("expired   {} ({})", e.at, e.reason));
    }
    lines.join("\n")
}

/// The decision's comment or reason and its changes, indented.
fn verdict_lines(t: &ReviewTask) -> Vec<String> {
    let Some(d) = &t.decision else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    match &d.verdict {
        Verdict::Approve { comment, .. } => {
            if let Some(c) = comment {
                lines.push(format!("  comment: {c}"));
            }
        }
        Verdict::Reject { reason } => lines.push(format!("  reason: {reason}")),
    }
    for c in &d.changes {
        let before = c
            .before
            .as_ref()
            .map(|b| format!("{} ({:.2})", b.value, b.confidence))
            .unwrap_or_else(|| "(none)".into());
        lines.push(format!(
            "  {}: {before} -> {} ({:.2})",
            c.field, c.after.value, c.after.confidence
        ));
    }
    if d.is_approval() && d.changes.is_empty() {
        lines.push("  no fields changed".into());
    }
    lines
}

pub(super) fn decided_text(t: &ReviewTask) -> String {
    let verb = match &t.decision {
        Some(d) if d.is_approval() => "approved",
        Some(_) => "rejected",
        None => "recorded no decision on",
    };
    let mut lines = vec![format!("{verb} task {}", t.task_id)];
    lines.extend(verdict_lines(t));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::review::fixtures::{decided_json, task, task_json, TASK};

    #[test]
    fn list_shows_one_line_per_task_with_its_reason_codes() {
        let text = list_text(&[task(task_json("pending"))]);
        assert_eq!(
            text,
            format!(
                "{TASK}  d0123456789abcdef01234567  pending  2026-03-02T10:00:00.000Z  \
                 low_confidence"
            )
        );
        assert_eq!(list_text(&[]), "no review tasks");
    }

    #[test]
    fn show_has_fields_with_confidence_and_source_reasons_pointers_and_the_decision() {
        let text = show_text(&task(decided_json()));
        for expected in [
            "status    decided",
            "total_amount",
            "12.00",
            "0.62  extracted p1 l12",
            "low_confidence",
            "document  s3://raw/inbox/acme/a.pdf?versionId=v1",
            "report    s3://derived/acme/d/r/validation.json",
            "decision  approved by alice at 2026-03-01T11:00:00.000Z",
            "comment: typo on the scan",
            "total_amount: 12.00 (0.62) -> 120.00 (1.00)",
        ] {
            assert!(text.contains(expected), "{expected:?} missing in\n{text}");
        }
    }

    #[test]
    fn a_decision_prints_the_verdict_and_the_changes() {
        let text = decided_text(&task(decided_json()));
        assert!(text.starts_with(&format!("approved task {TASK}\n")));
        assert!(text.contains("total_amount: 12.00 (0.62) -> 120.00 (1.00)"));
        let mut rejected = task_json("decided");
        rejected["decision"] = json!({
            "reviewer": {"id": "bob", "tenant": "acme"},
            "decidedAt": "2026-03-01T11:00:00.000Z",
            "verdict": "reject",
            "reason": "not an invoice",
            "changes": []
        });
        assert_eq!(
            decided_text(&task(rejected)),
            format!("rejected task {TASK}\n  reason: not an invoice")
        );
    }
}
