//! `docket ops sweep [--since T] [--resubmit]`: the uploads that were lost — an inbox object
//! version with no run and no quarantine copy, because its event never reached ingest or ingest
//! could not handle it — and the two queues that hold such events: `IngestDLQ` (EventBridge
//! could not deliver) and `IngestFailureQueue` (ingest failed on every delivery from its queue:
//! the event itself; or failed otherwise than transiently and set it aside: the event under
//! `requestPayload`, the error's name under `responsePayload`). Each version's runs are found
//! through the runs table's `by-document` index, never a scan.
//!
//! With `--resubmit`, each lost upload is handed to ingest again, synchronously (its queued event
//! when there is one, else one rebuilt from the listing: ingest's run id depends only on the
//! document, the version and its bytes, so a resubmit of an upload ingested meanwhile starts
//! nothing twice), and the queued events whose upload now has a run or a quarantine copy are
//! deleted from their queues.

use std::collections::BTreeMap;

use anyhow::Context;
use docket_core::ids::{
    decode_event_key, encode_event_key, parse_inbox_key, DocumentId, INBOX_PREFIX,
};
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

/// The queues of lost inbox events: each one's name, and the stack output with its URL.
const QUEUES: [(&str, &str); 2] = [
    ("IngestDLQ", "IngestDLQUrl"),
    ("IngestFailureQueue", "IngestFailureQueueUrl"),
];

/// How long a message read by the sweep stays invisible to another reader (seconds).
const VISIBILITY_SECONDS: i32 = 30;

/// One upload: a key and a version of it.
type Upload = (String, String);

/// A queued event of a lost upload.
struct Queued {
    /// The queue's name and URL.
    queue: &'static str,
    url: String,
    receipt: String,
    event: Value,
}

/// The upload a queued message's event names: a set-aside record holds the event under
/// `requestPayload`; a dead letter (of EventBridge or of ingest's queue) is the event itself.
pub fn queued_upload(body: &Value) -> Option<(Upload, Value)> {
    let event = body.get("requestPayload").unwrap_or(body);
    let object = &event["detail"]["object"];
    let key = decode_event_key(object["key"].as_str()?).ok()?;
    let version = object["version-id"].as_str()?.to_string();
    Some(((key, version), event.clone()))
}

/// An "Object Created" event for an upload rebuilt from the bucket's listing (no sequencer: the
/// event time orders it among its key's versions).
pub fn rebuilt_event(bucket: &str, (key, version): &Upload, size: i64, modified: &str) -> Value {
    json!({
        "version": "0",
        "id": format!("docket-sweep-{version}"),
        "detail-type": "Object Created",
        "source": "aws.s3",
        "account": "",
        "time": modified,
        "region": "",
        "resources": [format!("arn:aws:s3:::{bucket}")],
        "detail": {
            "version": "0",
            "bucket": {"name": bucket},
            "object": {"key": encode_event_key(key), "size": size, "version-id": version},
            "reason": "PutObject",
        },
    })
}

async fn read_queues(stack: &Stack, sqs: &aws_sdk_sqs::Client) -> anyhow::Result<Vec<Queued>> {
    let mut out = Vec::new();
    for (queue, output) in QUEUES {
        let url = stack.out(output)?;
        loop {
            let page = sqs
                .receive_message()
                .queue_url(url)
                .max_number_of_messages(10)
                .visibility_timeout(VISIBILITY_SECONDS)
                .send()
                .await
                .with_context(|| format!("reading {queue}"))?;
            if page.messages().is_empty() {
                break;
            }
            for message in page.messages() {
                // A body that is no JSON names no upload: listed as queued, never resubmitted.
                let text = message.body().unwrap_or("null");
                let body = serde_json::from_str(text).unwrap_or_else(|_| json!(text));
                out.push(Queued {
                    queue,
                    url: url.to_string(),
                    receipt: message.receipt_handle().unwrap_or_default().to_string(),
                    event: body,
                });
            }
        }
    }
    Ok(out)
}

/// Whether `upload` has a run of its version or a quarantine copy.
async fn accounted_for(
    stack: &Stack,
    runs: &mut BTreeMap<DocumentId, Vec<String>>,
    (key, version): &Upload,
) -> anyhow::Result<Option<DocumentId>> {
    let Ok(inbox) = parse_inbox_key(key) else {
        return Ok(None);
    };
    let document = DocumentId::new(&inbox.tenant, &inbox.logical_key);
    if !runs.contains_key(&document) {
        let of = stack.store.runs_of(&document).await?;
        let versions = of.into_iter().map(|r| r.source.version_id).collect();
        runs.insert(document.clone(), versions);
    }
    if runs[&document].contains(version) {
        return Ok(Some(document));
    }
    let copy = format!("quarantine/{document}/{version}");
    let s3 = aws_sdk_s3::Client::new(&docket_aws::load_config().await);
    let found = s3
        .head_object()
        .bucket(stack.out("RawBucket")?)
        .key(&copy)
        .send()
        .await;
    match found {
        Ok(_) => Ok(Some(document)),
        Err(e) if e.as_service_error().is_some_and(|e| e.is_not_found()) => Ok(None),
        Err(e) => Err(e).with_context(|| format!("looking for {copy}")),
    }
}

pub async fn sweep(
    stack: &Stack,
    since: Option<&str>,
    resubmit: bool,
    output: Output,
) -> anyhow::Result<()> {
    let sdk = docket_aws::load_config().await;
    let (s3, sqs) = (
        aws_sdk_s3::Client::new(&sdk),
        aws_sdk_sqs::Client::new(&sdk),
    );
    let queued = read_queues(stack, &sqs).await?;
    let by_upload: BTreeMap<Upload, &Queued> = queued
        .iter()
        .filter_map(|q| queued_upload(&q.event).map(|(u, _)| (u, q)))
        .collect();
    let bucket = stack.out("RawBucket")?;
    let mut runs = BTreeMap::new();
    let mut lost = Vec::new();
    let mut seen = 0usize;
    // ListObjectVersions pages by key and version markers (the SDK has no paginator for it).
    let (mut key_marker, mut version_marker) = (None, None);
    loop {
        let page = s3
            .list_object_versions()
            .bucket(bucket)
            .prefix(INBOX_PREFIX)
            .set_key_marker(key_marker.take())
            .set_version_id_marker(version_marker.take())
            .send()
            .await
            .context("listing the inbox")?;
        for v in page.versions() {
            let modified = v
                .last_modified()
                .and_then(|d| d.fmt(aws_sdk_s3::primitives::DateTimeFormat::DateTime).ok())
                .unwrap_or_default();
            if since.is_some_and(|since| modified.as_str() < since) {
                continue;
            }
            let upload: Upload = (
                v.key().unwrap_or_default().to_string(),
                v.version_id().unwrap_or("null").to_string(),
            );
            seen += 1;
            if seen.is_multiple_of(100) {
                eprintln!("sweep: {seen} inbox versions checked, {} lost", lost.len());
            }
            if accounted_for(stack, &mut runs, &upload).await?.is_none() {
                let event = match by_upload.get(&upload) {
                    Some(q) => queued_upload(&q.event).map(|(_, e)| e).unwrap_or_default(),
                    None => rebuilt_event(bucket, &upload, v.size().unwrap_or(0), &modified),
                };
                lost.push((upload, modified, event));
            }
        }
        if page.is_truncated() != Some(true) {
            break;
        }
        key_marker = page.next_key_marker().map(String::from);
        version_marker = page.next_version_id_marker().map(String::from);
    }
    let mut resubmitted = Vec::new();
    // Uploads ingest has just taken (a run started or found, or quarantined): accounted for,
    // whatever an index read right after would say.
    let mut taken: Vec<Upload> = Vec::new();
    if resubmit {
        for (upload, _, event) in &lost {
            let (key, version) = upload;
            eprintln!("sweep: resubmitting {key} ({version})");
            let answer = match stack.invoke("IngestFunctionName", event).await? {
                Ok(answer) => {
                    taken.push(upload.clone());
                    json!({"key": key, "versionId": version, "ingest": answer})
                }
                Err(failed) => json!({"key": key, "versionId": version, "failed": failed}),
            };
            resubmitted.push(answer);
        }
    }
    // A queued event is done with once its upload is accounted for (resubmitted now, or
    // ingested since it was queued); every other message is made visible again at once, for
    // the next sweep.
    let mut drained = Vec::new();
    for q in &queued {
        let done = match queued_upload(&q.event) {
            Some((upload, _)) if resubmit => {
                taken.contains(&upload) || accounted_for(stack, &mut runs, &upload).await?.is_some()
            }
            _ => false,
        };
        let url = &q.url;
        if done {
            sqs.delete_message()
                .queue_url(url)
                .receipt_handle(&q.receipt)
                .send()
                .await
                .with_context(|| format!("deleting a message of {}", q.queue))?;
            let upload = queued_upload(&q.event).map(|(u, _)| u).unwrap_or_default();
            drained.push(json!({"queue": q.queue, "key": upload.0, "versionId": upload.1}));
        } else {
            sqs.change_message_visibility()
                .queue_url(url)
                .receipt_handle(&q.receipt)
                .visibility_timeout(0)
                .send()
                .await
                .with_context(|| format!("releasing a message of {}", q.queue))?;
        }
    }
    let lost_json: Vec<Value> = lost
        .iter()
        .map(|((key, version), modified, _)| {
            let queued = by_upload.get(&(key.clone(), version.clone()));
            let queue = queued.map(|q| q.queue);
            // Why ingest set it aside, when it did (a dead letter says nothing).
            let error = queued.and_then(|q| q.event["responsePayload"]["errorType"].as_str());
            json!({"key": key, "versionId": version, "lastModified": modified, "queued": queue,
                   "error": error})
        })
        .collect();
    let count = |queue: &str| queued.iter().filter(|q| q.queue == queue).count();
    let value = json!({
        "checked": seen,
        "lost": lost_json,
        "queued": {"IngestDLQ": count(QUEUES[0].0), "IngestFailureQueue": count(QUEUES[1].0)},
        "resubmitted": resubmitted,
        "drained": drained,
    });
    let drained = drained.len();
    print(output, &value, || {
        let mut lines: Vec<String> = lost_json
            .iter()
            .map(|l| {
                format!(
                    "lost  {}  {}  {}{}",
                    l["lastModified"].as_str().unwrap_or(""),
                    l["key"].as_str().unwrap_or(""),
                    l["versionId"].as_str().unwrap_or(""),
                    match (l["queued"].as_str(), l["error"].as_str()) {
                        (Some(q), Some(e)) => format!("  (in {q}: {e})"),
                        (Some(q), None) => format!("  (in {q})"),
                        _ => String::new(),
                    },
                )
            })
            .collect();
        lines.push(format!(
            "{seen} inbox versions checked: {} lost, {} queued events, {} resubmitted, {drained} drained",
            lost_json.len(),
            queued.len(),
            resubmitted.len()
        ));
        lines.join("\n")
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rebuilt_event_names_its_upload_as_a_queued_and_a_set_aside_one_do() {
        let upload: Upload = ("inbox/acme/my invoice+1.pdf".into(), "v1".into());
        let event = rebuilt_event("raw", &upload, 42, "2026-12-02T10:00:00Z");
        // What ingest sets aside, as it writes it.
        let error = docket_core::Error::BadInput("no event".into());
        let record = docket_aws::sqs::set_aside_record(&event.to_string(), &error, 1);

        assert_eq!(queued_upload(&event).map(|(u, _)| u), Some(upload.clone()));
        assert_eq!(queued_upload(&record), Some((upload, event.clone())));
        assert_eq!(
            event["detail"]["object"]["key"],
            "inbox/acme/my+invoice%2B1.pdf"
        );
        assert_eq!(queued_upload(&json!({"Records": []})), None);
    }
}
