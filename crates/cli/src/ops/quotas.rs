//! `docket ops quotas`: the Textract quotas OCR admission keeps to (`docket_core::admitted`:
//! those recorded, or AWS's us-east-1 defaults), and the job slots held now. With
//! `--tps OPERATION=N`, `--max-jobs N` or `--arrival-jitter-ms N` it records new ones (after
//! AWS raised a quota in Service Quotas, or to leave room for another user of the account);
//! every later OCR call keeps to them, with no deploy.

use anyhow::{bail, Context};
use clap::Args;
use docket_aws::admission::DynamoAdmission;
use docket_core::admission::Quotas;
use docket_core::admitted::Rules;
use docket_core::ports::Admission;
use serde_json::json;

use crate::stack::{print, Stack};
use crate::Output;

/// `OPERATION=N` as the flag gives it.
fn parse_tps(arg: &str) -> anyhow::Result<(String, u32)> {
    let (op, n) = arg
        .split_once('=')
        .with_context(|| format!("--tps {arg}: expected OPERATION=N"))?;
    let n: u32 = n
        .parse()
        .with_context(|| format!("--tps {arg}: {n} is not a whole number of calls a second"))?;
    if op.is_empty() {
        bail!("--tps {arg}: no operation named");
    }
    Ok((op.to_string(), n))
}

/// What `docket ops quotas` changes; nothing: it only shows.
#[derive(Debug, Default, Args)]
pub struct Change {
    /// Calls a second for one Textract operation (repeatable), e.g.
    /// --tps StartDocumentTextDetection=30.
    #[arg(long, value_name = "OPERATION=N")]
    tps: Vec<String>,
    /// Asynchronous jobs that may run at once.
    #[arg(long)]
    max_jobs: Option<u32>,
    /// How much longer one call may take to reach Textract than another (ms; default 50):
    /// calls are spaced for it. Raise it on a path with more jitter.
    #[arg(long, value_name = "MS")]
    arrival_jitter_ms: Option<u32>,
}

impl Change {
    fn is_empty(&self) -> bool {
        self.tps.is_empty() && self.max_jobs.is_none() && self.arrival_jitter_ms.is_none()
    }

    /// `quotas` with this change made.
    fn applied(&self, mut quotas: Quotas) -> anyhow::Result<Quotas> {
        for arg in &self.tps {
            let (op, n) = parse_tps(arg)?;
            quotas.tps.insert(op, n);
        }
        if let Some(n) = self.max_jobs {
            quotas.max_jobs = n;
        }
        if let Some(ms) = self.arrival_jitter_ms {
            quotas.arrival_jitter_ms = ms;
        }
        Ok(quotas)
    }
}

pub async fn quotas(stack: &Stack, change: &Change, output: Output) -> anyhow::Result<()> {
    let table = stack.out("AdmissionTable")?;
    let admission = DynamoAdmission::new(stack.store.client().clone(), table);
    let rules = Rules::textract();
    let recorded = admission.quotas(rules.provider).await?;
    let changing = !change.is_empty();
    let quotas = change.applied(recorded.clone().unwrap_or_else(Quotas::textract_defaults))?;
    if changing {
        admission.set_quotas(rules.provider, &quotas).await?;
    }
    let held = admission.held(&rules.pool()).await?;
    let source = match (changing, recorded.is_some()) {
        (true, _) => "recorded now",
        (false, true) => "recorded",
        (false, false) => "none recorded: AWS's us-east-1 defaults",
    };
    let value = json!({
        "provider": rules.provider,
        "source": source,
        "quotas": quotas,
        "jobsHeld": held,
    });
    print(output, &value, || {
        let mut text = format!("{} quotas ({source}):\n", rules.provider);
        for (op, n) in &quotas.tps {
            text.push_str(&format!("  {op}: {n} a second\n"));
        }
        text.push_str(&format!(
            "  jobs at once: {} ({held} held now)\n  arrival jitter allowed: {} ms",
            quotas.max_jobs, quotas.arrival_jitter_ms
        ));
        text
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{parse_tps, Change};
    use docket_core::admission::Quotas;

    #[test]
    fn a_tps_flag_names_an_operation_and_a_whole_rate() {
        assert_eq!(
            parse_tps("StartDocumentTextDetection=30").unwrap(),
            ("StartDocumentTextDetection".to_string(), 30)
        );
        for bad in ["StartDocumentTextDetection", "=3", "Get=fast", "Get=-1"] {
            assert!(parse_tps(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_change_sets_only_what_it_names() {
        let defaults = Quotas::textract_defaults();
        assert_eq!(
            Change::default().applied(defaults.clone()).unwrap(),
            defaults
        );
        let change = Change {
            tps: vec!["GetDocumentTextDetection=40".into()],
            max_jobs: None,
            arrival_jitter_ms: Some(300),
        };
        let changed = change.applied(defaults.clone()).unwrap();
        assert_eq!(changed.tps["GetDocumentTextDetection"], 40);
        assert_eq!(changed.tps["StartDocumentTextDetection"], 15);
        assert_eq!((changed.max_jobs, changed.arrival_jitter_ms), (600, 300));
        let bad = Change {
            tps: vec!["Get=fast".into()],
            ..Change::default()
        };
        assert!(bad.applied(defaults).is_err());
    }
}
