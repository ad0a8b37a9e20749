//! The operators' endpoints. `POST /operations/{id}/resolution` with `{"runId", "note"}` records
//! the calling operator's decision on an unresolved operation (`docket_core::steps::resolve`).
//! `POST /reprocesses` with a `docket_core::reprocess::Start` starts a bulk reprocess whose
//! manifest is written (`docket_core::steps::reprocess::begin`). The operator is the verified
//! caller; a request names only what is asked and why.

use aws_lambda_events::lambda_function_urls::LambdaFunctionUrlRequest;
use docket_core::ids::{OperationId, RunId};
use docket_core::ports::{HasBlobs, HasBulk, HasConfigs, HasLedger, HasStore, Started};
use docket_core::reprocess::Start;
use docket_core::review::identity::Operator;
use docket_core::steps::{reprocess as bulk, resolve, Context};
use docket_core::Error;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{failed, read_json, respond};
use crate::{span, traced, Failure};

/// The body of a resolution.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Asked {
    /// The run the operation belongs to (checked against the operation id).
    run_id: String,
    /// What the operator found and decided.
    note: String,
}

/// `POST /operations/{id}/resolution`.
pub(super) async fn resolve(
    ports: &(impl HasStore + HasLedger),
    ctx: &Context,
    operator: &Operator,
    id: &str,
    request: &LambdaFunctionUrlRequest,
) -> Value {
    let asked: Asked = match read_json(request, "resolution") {
        Ok(a) => a,
        Err(answer) => return answer,
    };
    let parsed = serde_json::from_value::<OperationId>(json!(id))
        .map_err(|_| Error::BadInput(format!("not an operation id: {id:?}")))
        .and_then(|op| Ok((op, RunId::parse(&asked.run_id)?, asked.note)));
    let (op, run_id, note) = match parsed {
        Ok(p) => p,
        Err(e) => return failed(&e, None),
    };
    let document = run_id.document_id();
    let span = span(
        "ops.resolve",
        document.as_str(),
        run_id.as_str(),
        op.as_str(),
    );
    let resolved = traced(span, async {
        let r = resolve::resolve(ports, ctx, operator, &op, &run_id, &note).await?;
        tracing::info!(operator = %operator.id, auditSeq = r.audit_seq, "operation resolved");
        Ok(r)
    })
    .await;
    match resolved {
        Ok(r) => respond(
            200,
            json!({
                "operationId": r.operation_id,
                "runId": r.run_id,
                "runWas": r.run_was,
                "resolvedBy": operator.id,
                "auditSeq": r.audit_seq,
            }),
        ),
        Err(Failure(e)) => failed(&e, None),
    }
}

/// `POST /reprocesses`: 200 with `started` false when the same request was started before.
pub(super) async fn reprocess(
    ports: &(impl HasBlobs + HasConfigs + HasBulk),
    ctx: &Context,
    operator: &Operator,
    request: &LambdaFunctionUrlRequest,
) -> Value {
    let asked: Start = match read_json(request, "reprocess") {
        Ok(a) => a,
        Err(answer) => return answer,
    };
    let id = asked.request.id();
    let span = span("ops.reprocess", "", "", id.as_str());
    let begun = traced(span, async {
        let b = bulk::begin(ports, ctx, operator, &asked).await?;
        tracing::info!(operator = %operator.id, started = ?b.execution, "reprocess asked");
        Ok(b)
    })
    .await;
    match begun {
        Ok(b) => respond(
            200,
            json!({
                "reprocessId": b.reprocess_id,
                "started": b.execution == Started::New,
                "requestedBy": b.requested_by,
            }),
        ),
        Err(Failure(e)) => failed(&e, None),
    }
}
