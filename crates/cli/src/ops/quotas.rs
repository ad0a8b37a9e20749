//! `docket ops quotas`: the Textract quotas OCR admission keeps to (`docket_core::admitted`),
//! and the job slots held now. With `--tps OPERATION=N` or `--max-jobs N` it records new ones
//! (after AWS raised a quota in Service Quotas, or to leave room for another user of the
//! account); every later OCR call keeps to them, with no deploy. Recording switches admission
//! on (a first record starts from AWS's us-east-1 defaults); with none recorded it is off and
//! OCR calls Textract straight away (see `docket_core::admitted`).

use anyhow::{bail, Context};
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

pub async fn quotas(
    stack: &Stack,
    tps: &[String],
    max_jobs: Option<u32>,
    output: Output,
) -> anyhow::Result<()> {
    let table = stack.out("AdmissionTable")?;
    let admission = DynamoAdmission::new(stack.store.client().clone(), table);
    let rules = Rules::textract();
    let recorded = admission.quotas(rules.provider).await?;
    let mut quotas = recorded.clone().unwrap_or_else(Quotas::textract_defaults);
    let changing = !tps.is_empty() || max_jobs.is_some();
    for arg in tps {
        let (op, n) = parse_tps(arg)?;
        quotas.tps.insert(op, n);
    }
    if let Some(n) = max_jobs {
        quotas.max_jobs = n;
    }
    if changing {
        admission.set_quotas(rules.provider, &quotas).await?;
    }
    let held = admission.held(&rules.pool()).await?;
    let source = match (changing, recorded.is_some()) {
        (true, _) => "recorded now",
        (false, true) => "recorded",
        (false, false) => "none recorded: admission off; shown: AWS's us-east-1 defaults",
    };
    let value = json!({
        "provider": rules.provider,
        "source": source,
        "admission": changing || recorded.is_some(),
        "quotas": quotas,
        "jobsHeld": held,
    });
    print(output, &value, || {
        let mut text = format!("{} quotas ({source}):\n", rules.provider);
        for (op, n) in &quotas.tps {
            text.push_str(&format!("  {op}: {n} a second\n"));
        }
        text.push_str(&format!(
            "  jobs at once: {} ({held} held now)",
            quotas.max_jobs
        ));
        text
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_tps;

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
}
