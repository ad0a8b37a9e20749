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
    tracing::subscriber::set_global_default(subscriber(filter, std::io::stdout))
        .expect("logging is initialised once");
}

/// The JSON subscriber every Lambda runs with, writing to `writer`.
fn subscriber<W>(
    filter: tracing_subscriber::EnvFilter,
    writer: W,
) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(true)
        .with_span_list(false)
        .with_target(false)
        .without_time()
        .with_writer(writer)
        .finish()
}

/// The span a step runs in, carrying the ids every log line must have (empty where the step has
/// none yet, as ingest before it knows the document), and the version of the function that runs
/// it (the published version the state machine names; `$LATEST` for ingest and the entry points
/// that events invoke unqualified), so a line says which deployed code wrote it.
pub fn span(step: &str, document_id: &str, run_id: &str, operation_id: &str) -> Span {
    tracing::info_span!(
        "step",
        step,
        documentId = document_id,
        runId = run_id,
        operationId = operation_id,
        functionVersion = function_version(),
    )
}

/// The version of the running function (`AWS_LAMBDA_FUNCTION_VERSION`, set by Lambda: a number,
/// or `$LATEST` when invoked unqualified); empty outside Lambda.
fn function_version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| std::env::var("AWS_LAMBDA_FUNCTION_VERSION").unwrap_or_default())
}

/// Log capture for unit tests, through the subscriber the Lambdas run with.
///
/// It is installed once as the global default, not per test with `set_default`: tracing caches
/// whether a callsite is enabled process-wide, so a test on another thread that reaches a
/// callsite first while no subscriber is interested would switch it off for the capturing test.
/// Lines go to the capturing thread's buffer and are dropped on every other thread.
#[cfg(test)]
pub(crate) mod capture {
    use std::cell::RefCell;
    use std::sync::Once;

    use serde_json::Value;

    thread_local! {
        static LINES: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
    }

    struct ThreadBuffer;

    impl std::io::Write for ThreadBuffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            LINES.with(|lines| {
                if let Some(lines) = lines.borrow_mut().as_mut() {
                    lines.extend_from_slice(buf);
                }
            });
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Starts keeping this thread's log lines (a current-thread runtime keeps a test on it).
    pub fn start() {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            let filter = tracing_subscriber::EnvFilter::new("info");
            tracing::subscriber::set_global_default(super::subscriber(filter, || ThreadBuffer))
                .expect("no other global subscriber in unit tests");
        });
        LINES.with(|lines| *lines.borrow_mut() = Some(Vec::new()));
    }

    /// The JSON lines kept since [`start`].
    pub fn lines() -> Vec<Value> {
        let bytes = LINES.with(|lines| lines.borrow_mut().take().unwrap_or_default());
        String::from_utf8(bytes)
            .expect("logs are UTF-8")
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON log line"))
            .collect()
    }
}
