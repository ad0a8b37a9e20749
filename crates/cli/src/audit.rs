//! `docket audit show|verify`: read a document's hash chain; recompute it and name the first bad
//! entry; compare it with the signed digests (a rewrite that recomputed the hashes).

use docket_aws::digest::{DigestAnchor, DigestConfig, StoredDigest};
use docket_core::audit::digest::{check_chain, check_links, Digest};
use docket_core::audit::{verify, ChainError};
use docket_core::ids::DocumentId;
use docket_core::ports::Store;
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Print a document's audit trail.
    Show {
        /// The document.
        document: String,
    },
    /// Recompute chains, check them against the signed digests, and report the first bad entry
    /// of each (exit 1 if any chain or digest is bad).
    Verify {
        /// The document (or --all).
        #[arg(required_unless_present = "all")]
        document: Option<String>,
        /// Every document in the audit table or in the latest digest.
        #[arg(long)]
        all: bool,
        /// How many of the newest digests to read (older ones narrow a rewrite down further).
        #[arg(long, default_value_t = 96)]
        digests: usize,
    },
}

pub async fn run(stack: &Stack, command: Command, output: Output) -> anyhow::Result<()> {
    match command {
        Command::Show { document } => show(stack, &DocumentId::parse(&document)?, output).await,
        Command::Verify {
            document,
            all,
            digests,
        } => verify_chains(stack, document.filter(|_| !all), digests, output).await,
    }
}

/// The signed digests: the valid ones (newest first), and a report that names every refused one.
async fn signed_digests(stack: &Stack, limit: usize) -> anyhow::Result<(Vec<Digest>, Value)> {
    let anchor = DigestAnchor::new(
        &docket_aws::load_config().await,
        DigestConfig {
            checkpoints_table: stack.out("AuditCheckpointsTable")?.into(),
            bucket: stack.out("AuditDigestBucket")?.into(),
            key_id: stack.out("AuditDigestKeyArn")?.into(),
            retention: None,
        },
    );
    let (stored, complete) = anchor.latest(limit).await?;
    let mut valid = Vec::new();
    let mut refused = Vec::new();
    for StoredDigest {
        key,
        digest,
        signature_valid,
    } in stored
    {
        match (digest, signature_valid) {
            (Ok(d), true) if d.key() == key => valid.push(d),
            (Ok(_), true) => {
                refused.push(json!({"key": key, "reason": "stored under another key"}))
            }
            (_, false) => refused.push(json!({"key": key, "reason": "signature invalid"})),
            (Err(e), true) => refused.push(json!({"key": key, "reason": e})),
        }
    }
    let links = check_links(&valid, complete).err().map(|e| e.to_string());
    let report = json!({
        "checked": valid.len(),
        "latest": valid.first().map(Digest::key),
        "refused": refused,
        "linkProblem": links,
    });
    Ok((valid, report))
}

async fn verify_chains(
    stack: &Stack,
    document: Option<String>,
    limit: usize,
    output: Output,
) -> anyhow::Result<()> {
    let (digests, digest_report) = signed_digests(stack, limit).await?;
    let documents = match document {
        Some(d) => vec![DocumentId::parse(&d)?],
        None => {
            // Also the chains the latest digest names: a chain deleted whole is not in the table.
            let mut all = stack.store.audited_documents().await?;
            for id in digests.first().into_iter().flat_map(|d| d.chains.keys()) {
                all.push(DocumentId::parse(id)?);
            }
            all.sort();
            all.dedup();
            all
        }
    };
    let mut reports = Vec::new();
    for d in &documents {
        let entries = stack.store.audit_entries(d).await?;
        let checkpoint = stack.store.audit_checkpoint(d).await?;
        let chain = verify(d, &entries, checkpoint.as_ref()).err();
        let signed = check_chain(d.as_str(), &entries, &digests).err();
        let problem = chain
            .as_ref()
            .map(ToString::to_string)
            .or(signed.as_ref().map(|e| format!("digest: {e}")));
        let first_bad = chain
            .as_ref()
            .map(ChainError::seq)
            .or(signed.as_ref().map(|e| e.seq()));
        reports.push(json!({
            "documentId": d,
            "entries": entries.len(),
            "problem": problem,
            "firstBadSeq": first_bad,
            "chainOk": chain.is_none(),
            "digestOk": signed.is_none(),
        }));
    }
    let bad_digests = digest_report["refused"].as_array().map_or(0, Vec::len)
        + usize::from(!digest_report["linkProblem"].is_null());
    let bad = reports.iter().filter(|r| !r["problem"].is_null()).count();
    let value = json!({"documents": reports, "bad": bad, "digests": digest_report, "badDigests": bad_digests});
    print(output, &value, || {
        let mut lines: Vec<String> = reports
            .iter()
            .map(|r| {
                let verdict = r["problem"].as_str().unwrap_or("ok");
                format!(
                    "{}  {} entries  {verdict}",
                    r["documentId"].as_str().unwrap(),
                    r["entries"]
                )
            })
            .collect();
        for refused in digest_report["refused"].as_array().into_iter().flatten() {
            lines.push(format!(
                "digest {} refused: {}",
                refused["key"], refused["reason"]
            ));
        }
        if let Some(problem) = digest_report["linkProblem"].as_str() {
            lines.push(format!("digest chain: {problem}"));
        }
        lines.push(format!(
            "{} chains, {bad} bad; {} signed digests checked (latest {}), {bad_digests} bad",
            reports.len(),
            digest_report["checked"],
            digest_report["latest"].as_str().unwrap_or("none")
        ));
        lines.join("\n")
    });
    anyhow::ensure!(
        bad == 0 && bad_digests == 0,
        "{bad} audit chain(s) and {bad_digests} digest(s) failed verification"
    );
    Ok(())
}

async fn show(stack: &Stack, document: &DocumentId, output: Output) -> anyhow::Result<()> {
    let entries = stack.store.audit_entries(document).await?;
    let verdict = verify(document, &entries, None)
        .err()
        .map(|e| e.to_string());
    print(
        output,
        &json!({"entries": entries, "problem": verdict}),
        || {
            let mut lines: Vec<String> = entries
                .iter()
                .map(|e| {
                    let outputs: Vec<String> = e
                        .draft
                        .output_pointers
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    format!(
                        "{:>3} {}  {:<22} {:<16} {} {}",
                        e.seq,
                        e.time,
                        e.draft.action,
                        e.draft.actor,
                        &e.hash[..12],
                        outputs.join(" ")
                    )
                })
                .collect();
            lines.push(format!(
                "chain: {}",
                verdict.as_deref().unwrap_or("verified")
            ));
            lines.join("\n")
        },
    );
    Ok(())
}
