//! Bulk reprocess, pure: which documents a request selects, the manifest of items the bulk
//! state machine (`statemachines/bulk-reprocess.asl.json`) reads, and the batches its Map hands
//! the reprocess function.
//!
//! A reprocess runs a document's current source version again as a new run of the next
//! generation (`RunId::new(.., generation)`): a new run id, so its outputs sit beside the old
//! run's, which stays as it was. The request's id is a hash of the request, and the manifest
//! fixes every item's generation when it is first written, so the same request made twice is
//! the same reprocess: the same run ids, and no run twice.

use serde::{Deserialize, Serialize};

use crate::ids::{DocumentId, ReprocessId, RunId, SourceVersion, Tenant};
use crate::model::run::{ObjectRef, RunInput};
use crate::ports::RunRecord;
use crate::Error;

/// What an operator asks to reprocess (`docket reprocess`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Request {
    /// Whose documents.
    pub tenant: Tenant,
    /// Only documents whose inbox name starts with this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Only documents whose current run was accepted at or after this date or time (RFC 3339,
    /// compared as text: `2026-12-01` selects that day on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The config the new runs run under.
    pub config_fingerprint: String,
    /// Why (recorded in each document's audit chain).
    pub reason: String,
    /// Ask the OCR provider again even where the stored OCR could be reused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reocr: bool,
}

impl Request {
    /// Its id: the same request always has the same id.
    pub fn id(&self) -> ReprocessId {
        ReprocessId::of_request(&serde_json::to_value(self).expect("requests serialize"))
    }

    /// Checks what an operator typed.
    pub fn check(&self) -> Result<(), Error> {
        if self.reason.trim().is_empty() {
            return Err(Error::BadInput("a reprocess needs a reason".into()));
        }
        if self.reason.chars().count() > MAX_REASON_CHARS
            || self.reason.chars().any(char::is_control)
        {
            return Err(Error::BadInput(format!(
                "the reason must be one line of at most {MAX_REASON_CHARS} characters"
            )));
        }
        Ok(())
    }

    /// Whether the document whose current run is `run` is selected.
    fn selects(&self, run: &RunRecord) -> bool {
        let inbox = format!(
            "{}{}/{}",
            crate::ids::INBOX_PREFIX,
            self.tenant,
            self.prefix.as_deref().unwrap_or("")
        );
        run.tenant == self.tenant
            && run.raw.key.starts_with(&inbox)
            && self
                .since
                .as_deref()
                .is_none_or(|since| run.created_at.as_str() >= since)
    }
}

/// The longest reason a reprocess records.
pub const MAX_REASON_CHARS: usize = 500;

/// One line of the manifest: a document to run again, as a new run of `generation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// The document.
    pub document_id: DocumentId,
    /// Its tenant.
    pub tenant: Tenant,
    /// The run whose source version is run again (the document's current run).
    pub from_run_id: RunId,
    /// That source version.
    pub raw: ObjectRef,
    /// Its SHA-256.
    pub sha256: String,
    /// Its order among the document's versions, without a generation.
    pub source_order: String,
    /// The new run's generation: one more than any run of this source version has.
    pub generation: u32,
    /// The normalized OCR of `from_run_id` (the same source version), for the new run to reuse
    /// instead of asking the provider again; `None` with `--reocr` or when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocr: Option<ObjectRef>,
    /// The source version's page count, as `from_run_id` recorded it: a one-page document's
    /// new run is read synchronously, `--reocr` or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
}

impl Item {
    /// The new run under `config_fingerprint`.
    pub fn run_id(&self, config_fingerprint: &str) -> RunId {
        let source = SourceVersion {
            version_id: self.raw.version_id.clone().unwrap_or_else(|| "null".into()),
            sha256: self.sha256.clone(),
        };
        RunId::new(
            &self.document_id,
            &source,
            config_fingerprint,
            self.generation,
        )
    }

    /// What the new run carries.
    pub fn run_input(&self, config_fingerprint: &str) -> RunInput {
        RunInput {
            tenant: self.tenant.clone(),
            document_id: self.document_id.clone(),
            run_id: self.run_id(config_fingerprint),
            raw: self.raw.clone(),
            sha256: self.sha256.clone(),
            source_order: generation_order(&self.source_order, self.generation),
            config_fingerprint: config_fingerprint.to_string(),
            reuse_ocr: self.ocr.clone(),
            pages: self.pages,
            read_at_ms: None,
        }
    }
}

/// The separator between a source order and the generation a reprocess appends.
const GENERATION_MARK: &str = "|g";

/// `order` (a source version's order) for a run of `generation`: a later generation of the same
/// version sorts after the earlier ones, and every generation of a version before any later
/// version (the order's time and sequencer come first). So a reprocessed result is promoted
/// over its own version's older result, and never over a newer version's.
pub fn generation_order(order: &str, generation: u32) -> String {
    let base = base_order(order);
    match generation {
        0 => base.to_string(),
        g => format!("{base}{GENERATION_MARK}{g:06}"),
    }
}

/// `order` without the generation a reprocess appended.
pub fn base_order(order: &str) -> &str {
    order.split(GENERATION_MARK).next().unwrap_or(order)
}

/// The items `request` selects: for each document, its current run (`current`) and every run
/// it has (`runs`), the current run's source version again with the next generation, and,
/// unless the request says `reocr`, where that run's normalized OCR is (`ocr_of`, the stack's
/// layout: the OCR step checks that it is there before it reuses it). Documents with no current
/// run, or whose current run the request does not select, are left out. In document order, so
/// a manifest is the same however the documents were read.
pub fn plan<'r>(
    request: &Request,
    ocr_of: impl Fn(&RunRecord) -> ObjectRef,
    documents: impl IntoIterator<Item = (&'r RunId, &'r [RunRecord])>,
) -> Vec<Item> {
    let mut items: Vec<Item> = documents
        .into_iter()
        .filter_map(|(current, runs)| {
            let run = runs.iter().find(|r| &r.run_id == current)?;
            if !request.selects(run) {
                return None;
            }
            let generation = runs
                .iter()
                .filter(|r| r.source.version_id == run.source.version_id)
                .map(|r| r.generation)
                .max()
                .unwrap_or(0)
                + 1;
            Some(Item {
                document_id: run.document_id.clone(),
                tenant: run.tenant.clone(),
                from_run_id: run.run_id.clone(),
                raw: run.raw.clone(),
                sha256: run.source.sha256.clone(),
                source_order: base_order(&run.source_order).to_string(),
                generation,
                ocr: (!request.reocr).then(|| ocr_of(run)),
                pages: run.pages,
            })
        })
        .collect();
    items.sort_by(|a, b| a.document_id.cmp(&b.document_id));
    items
}

/// The manifest as JSON Lines (what the Map's `ItemReader` reads).
pub fn to_jsonl(items: &[Item]) -> String {
    items
        .iter()
        .map(|i| serde_json::to_string(i).expect("items serialize") + "\n")
        .collect()
}

/// A manifest read back; a bad line is `Fatal.BadInput` naming it.
pub fn from_jsonl(text: &str) -> Result<Vec<Item>, Error> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line)
                .map_err(|e| Error::BadInput(format!("manifest line {}: {e}", n + 1)))
        })
        .collect()
}

/// What the bulk execution starts with, and what each batch carries (`BatchInput`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// The reprocess.
    pub reprocess_id: ReprocessId,
    /// Why.
    pub reason: String,
    /// Who asked: the operator review-api verified (`steps::reprocess::begin`), the only
    /// function that starts the bulk state machine.
    pub requested_by: Requester,
    /// The config the new runs run under.
    pub config_fingerprint: String,
}

/// The operator who asked for a reprocess, as review-api's function URL verified them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Requester {
    /// Their id (the operator role session's name).
    pub operator: String,
    /// The verified principal ARN.
    pub principal: String,
}

/// What an operator sends review-api to start a reprocess whose manifest is written
/// (`POST /reprocesses`): the request (its id names the manifest) and the Map's limits. Who
/// asks is never a field: it is the signed caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Start {
    /// The request.
    pub request: Request,
    /// Items per batch (one child execution each), 1 to [`MAX_BATCH_SIZE`].
    pub batch_size: u32,
    /// The share of items (percent) that may fail before the reprocess fails.
    pub tolerated_failure_percentage: u32,
}

/// The most items one batch (one child execution of the Map) takes.
pub const MAX_BATCH_SIZE: u32 = 1000;

impl Start {
    /// Checks the request and the limits (`Fatal.BadInput` naming what is wrong).
    pub fn check(&self) -> Result<(), Error> {
        self.request.check()?;
        if !(1..=MAX_BATCH_SIZE).contains(&self.batch_size) {
            return Err(Error::BadInput(format!(
                "the batch size must be 1 to {MAX_BATCH_SIZE}"
            )));
        }
        if self.tolerated_failure_percentage > 100 {
            return Err(Error::BadInput(
                "the tolerated failure percentage must be 0 to 100".into(),
            ));
        }
        Ok(())
    }
}

/// One batch of the Map: its items and the order they belong to (the `ItemBatcher`'s shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    /// The items.
    #[serde(rename = "Items")]
    pub items: Vec<Item>,
    /// The order.
    #[serde(rename = "BatchInput")]
    pub order: Order,
}

/// The manifest's key in the derived bucket.
pub fn manifest_key(id: &ReprocessId) -> String {
    format!("reprocess/{id}/manifest.jsonl")
}

#[cfg(test)]
mod tests;
