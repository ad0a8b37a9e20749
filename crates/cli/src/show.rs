//! `docket show`: a document's runs, each with its saga journal (every effect's evidence, ids
//! and compensation), and the current result.

use docket_core::ids::DocumentId;
use docket_core::model::run::ObjectRef;
use docket_core::ports::{BlobStore, SagaJournal, Store};
use docket_core::saga::Journal;
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Args)]
pub struct Args {
    /// The document.
    document: String,
}

pub async fn run(stack: &Stack, args: Args, output: Output) -> anyhow::Result<()> {
    let document = DocumentId::parse(&args.document)?;
    let runs = stack.store.runs_of(&document).await?;
    let current = stack.store.document(&document).await?;
    let result: Option<Value> = match current
        .as_ref()
        .and_then(|c| runs.iter().find(|r| r.run_id == c.current_run_id))
        .and_then(|r| r.outputs.get("result"))
        .and_then(|p| ObjectRef::from_pointer(p))
    {
        Some(ptr) => Some(serde_json::from_slice(&stack.blobs.get(&ptr).await?)?),
        None => None,
    };
    let mut journals = Vec::with_capacity(runs.len());
    for r in &runs {
        journals.push(match &stack.journal {
            Some(journal) => journal.journal(&r.run_id).await?,
            None => None,
        });
    }
    let value = json!({
        "documentId": document,
        "currentRunId": current.as_ref().map(|c| c.current_run_id.to_string()),
        "runs": runs.iter().zip(&journals).map(|(r, journal)| json!({
            "runId": r.run_id, "status": r.status.as_str(), "versionId": r.source.version_id,
            "key": r.raw.key, "createdAt": r.created_at, "error": r.error, "outputs": r.outputs,
            "saga": journal,
        })).collect::<Vec<_>>(),
        "result": result,
    });
    print(output, &value, || {
        let mut out = format!("document {document}\n");
        for (r, journal) in runs.iter().zip(&journals) {
            let mark = if current
                .as_ref()
                .is_some_and(|c| c.current_run_id == r.run_id)
            {
                "*"
            } else {
                " "
            };
            out.push_str(&format!(
                " {mark} run {}  {:<15} {}  {}\n",
                r.run_id,
                r.status.as_str(),
                r.raw.key,
                r.error.as_deref().unwrap_or("")
            ));
            if let Some(journal) = journal {
                out.push_str(&saga_line(journal));
            }
        }
        if let Some(fields) = result.as_ref().and_then(|r| r["fields"].as_object()) {
            out.push_str("   result:\n");
            for (name, field) in fields {
                out.push_str(&format!(
                    "     {name:<15} {:<28} confidence {:.2}\n",
                    field["value"].as_str().unwrap_or(""),
                    field["confidence"].as_f64().unwrap_or(0.0)
                ));
            }
        }
        out.trim_end().to_string()
    });
    Ok(())
}

/// One line of a run's saga: each effect with its evidence (and compensation, once one began),
/// then the end the compensation reached.
fn saga_line(journal: &Journal) -> String {
    let effects: Vec<String> = journal
        .entries
        .iter()
        .map(|e| match journal.compensation_reason {
            Some(_) => format!(
                "{} {} (compensation {})",
                e.effect.name(),
                e.evidence.name(),
                e.compensation.name()
            ),
            None => format!("{} {}", e.effect.name(), e.evidence.name()),
        })
        .collect();
    let end = journal
        .end
        .map(|end| format!(" · ended {}", end.name()))
        .unwrap_or_default();
    format!("       saga: {}{end}\n", effects.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use docket_core::ids::{RunId, Tenant};
    use docket_core::saga::{Effect, EffectIds, Outcome, Transition};

    fn run() -> RunId {
        docket_core::memory::test_run(&Tenant::parse("acme").unwrap(), "a.pdf", "v1")
    }

    #[test]
    fn a_saga_line_names_each_effect_with_its_evidence_in_order() {
        let promoted = [
            Transition::Claim(Effect::ResultPromoted, EffectIds::default()),
            Transition::Settle(
                Effect::ResultPromoted,
                Outcome::Happened(EffectIds::default()),
            ),
        ];
        let journal = Journal::new(&run()).next_all(&promoted).unwrap().unwrap();

        assert_eq!(
            saga_line(&journal),
            "       saga: result.promoted confirmed · event.published not-attempted · \
             downstream.recorded not-attempted\n"
        );
    }

    #[test]
    fn a_saga_line_shows_compensations_once_one_began_and_the_end() {
        let steps = [
            Transition::Claim(Effect::ResultPromoted, EffectIds::default()),
            Transition::Settle(Effect::ResultPromoted, Outcome::DidNotHappen),
            Transition::BeginCompensation("route failed".into()),
            Transition::Finish,
        ];
        let journal = Journal::new(&run()).next_all(&steps).unwrap().unwrap();

        let line = saga_line(&journal);
        assert!(
            line.contains("result.promoted not-attempted (compensation not-required)"),
            "{line}"
        );
        assert!(line.ends_with(" · ended not-required\n"), "{line}");
    }
}
