//! JSON logs on stdout (CloudWatch Logs) in which every line of a step carries documentId, runId
//! and operationId.

use tracing::Span;

/// JSON logs; level from `RUST_LOG` (default info). Every line carries the fields of the current
/// span: documentId, runId and operationId (see [`span`]).
///
/// The runtime's own line for a handler error (`lambda_runtime::layers::panic`, logged outside
/// the handler's span, so without the ids) is switched off: [`crate::traced`] logs every error
/// inside the span, and a panic is logged by the hook installed here, on the panicking thread,
/// inside the span of the step that panicked.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
        .add_directive(
            "lambda_runtime::layers::panic=off"
                .parse()
                .expect("a valid directive"),
        );
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()));
        tracing::error!(location, "handler panicked: {info}");
    }));
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(true)
        .with_span_list(false)
        .with_target(false)
        .without_time()
        .init();
}

/// The span a step runs in, carrying the ids every log line must have (empty where the step has
/// none yet, as ingest before it knows the document).
pub fn span(step: &str, document_id: &str, run_id: &str, operation_id: &str) -> Span {
    tracing::info_span!(
        "step",
        step,
        documentId = document_id,
        runId = run_id,
        operationId = operation_id,
    )
}
