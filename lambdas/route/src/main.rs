//! route: writes an approved run's result and makes it the document's current one (or records
//! it as stale); `action: fail` records a run that ended in a technical failure.
//! See `docket_core::steps::route`.

// The handler's future (runtime → traced span → step → SDK calls) is deep enough that computing
// its layout in a release build exceeds rustc's default query depth of 128.
#![recursion_limit = "256"]

use docket_core::ids::OperationId;
use docket_core::ports::ObjectRef;
use docket_core::steps::review::Reviewed;
use docket_core::steps::{route, RunInput};
use docket_lambda::{answer, init_tracing, parse, span, traced, Deps, Failure};
use lambda_runtime::{service_fn, LambdaEvent};
use serde::Deserialize;
use serde_json::{json, Value};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    init_tracing();
    let deps = Deps::from_env().await?;
    let deps = &deps;
    lambda_runtime::run(service_fn(move |ev| handler(deps, ev))).await
}

#[derive(Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
enum Request {
    Route {
        run: RunInput,
        report: ObjectRef,
        /// The reviewer's approval (the review Task's output), for a reviewed run.
        #[serde(default)]
        review: Option<Reviewed>,
    },
    Fail {
        run: RunInput,
        error: CaughtError,
    },
    /// A reviewer rejected the run.
    Reject {
        run: RunInput,
    },
}

/// What a Catch puts at `ResultPath` (`Error`, `Cause`); only the name is recorded.
#[derive(Deserialize)]
struct CaughtError {
    #[serde(rename = "Error")]
    error: String,
}

async fn handler(deps: &Deps, ev: LambdaEvent<Value>) -> Result<Value, Failure> {
    match parse(ev.payload)? {
        Request::Route {
            run,
            report,
            review,
        } => {
            let op = OperationId::new(&run.run_id, "route", None);
            let routed = traced(span("route", Some(&run), Some(op.as_str())), async {
                let routed = route::run(
                    &deps.blobs,
                    &deps.store,
                    &deps.ctx,
                    &run,
                    &report,
                    review.as_ref(),
                )
                .await?;
                tracing::info!(status = %routed.status, "routed");
                Ok(routed)
            })
            .await?;
            answer(&routed)
        }
        Request::Fail { run, error } => {
            let op = OperationId::new(&run.run_id, "fail", None);
            traced(
                span("route.fail", Some(&run), Some(op.as_str())),
                route::fail(&deps.store, &deps.ctx, &run, &error.error),
            )
            .await?;
            Ok(json!({"status": "failed", "error": error.error}))
        }
        Request::Reject { run } => {
            let op = OperationId::new(&run.run_id, "reject", None);
            traced(
                span("route.reject", Some(&run), Some(op.as_str())),
                route::reject(&deps.store, &deps.ctx, &run),
            )
            .await?;
            Ok(json!({"status": "rejected"}))
        }
    }
}
