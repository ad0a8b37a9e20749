//! ingest: the EventBridge S3 "Object Created" event of an inbox upload → run record and
//! execution (or a quarantine copy with the reason). See `docket_core::steps::ingest`.

use chrono::SecondsFormat;
use docket_aws::sfn::SfnWorkflow;
use docket_core::ports::{HasBlobs, HasStore, HasWorkflow};
use docket_core::steps::ingest::{self, ObjectCreated};
use docket_core::steps::Context;
use serde_json::Value;

use crate::events::ObjectCreatedEvent;
use crate::{answer, span, traced, Failure};

/// What ingest runs on.
pub type Deps = crate::Deps<SfnWorkflow>;

/// Ingests one upload. The event has no run yet: the span's ids are empty.
pub async fn handle(
    ports: &(impl HasBlobs + HasStore + HasWorkflow),
    ctx: &Context,
    event: ObjectCreatedEvent,
) -> Result<Value, Failure> {
    let created = object_created(event);
    let outcome = traced(span("ingest", "", "", ""), async {
        let outcome = ingest::handle(ports, ctx, &created).await?;
        tracing::info!(outcome = ?outcome, "ingested");
        Ok(outcome)
    })
    .await?;
    answer(&outcome)
}

/// What ingest reads of the event. The time is written back as EventBridge writes it (RFC 3339,
/// UTC as `Z`, fractional seconds only when present): it orders the versions of a key.
pub(crate) fn object_created(event: ObjectCreatedEvent) -> ObjectCreated {
    let object = event.detail.object;
    ObjectCreated {
        bucket: event.detail.bucket.name,
        key: object.key,
        version_id: object.version_id,
        sequencer: object.sequencer,
        time: event
            .time
            .map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true)),
    }
}
