//! Reviewers as the tests (and the benchmark) see them: an assumed reviewer role session, and the
//! `docket` CLI run with its credentials.

use std::process::Output;
use std::time::{Duration, Instant};

use docket_core::ids::DocumentId;
use serde_json::Value;

use crate::stack::{invoice_lines, invoice_pdf, outputs_path, s, Stack, RUN_DEADLINE};
use crate::util;

/// Credentials of a role session, as environment variables for the CLI.
pub struct Session {
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`; empty for the
    /// operator (the CLI then uses the environment's credentials).
    pub env: Vec<(&'static str, String)>,
}

/// Assumes the stack's reviewer role of `tenant` (`<ReviewerRolePrefix><tenant>`, by default
/// `<stack>-reviewer-<tenant>`) as `name` (LocalStack's STS; the function URL shim resolves the
/// session back to its ARN).
pub async fn reviewer(tenant: &str, name: &str) -> Session {
    session_of_role(&format!("{}{tenant}", role_prefix()), name).await
}

/// Assumes the stack's operator role (stack output `OperatorRoleName`) as `name`.
pub async fn operator(name: &str) -> Session {
    let text = std::fs::read_to_string(outputs_path()).expect("the stack's outputs file");
    let outputs: Value = serde_json::from_str(&text).expect("outputs JSON");
    let role = outputs["OperatorRoleName"]
        .as_str()
        .expect("stack output OperatorRoleName");
    session_of_role(role, name).await
}

/// A session of role `role` (of the LocalStack account) named `name`.
pub async fn session_of_role(role: &str, name: &str) -> Session {
    let cfg = util::aws().await;
    let sts = aws_sdk_sts::Client::new(&cfg);
    let out = sts
        .assume_role()
        .role_arn(format!("arn:aws:iam::000000000000:role/{role}"))
        .role_session_name(name)
        .send()
        .await
        .expect("assume the reviewer role");
    let c = out.credentials().expect("credentials");
    Session {
        env: vec![
            ("AWS_ACCESS_KEY_ID", c.access_key_id().to_string()),
            ("AWS_SECRET_ACCESS_KEY", c.secret_access_key().to_string()),
            ("AWS_SESSION_TOKEN", c.session_token().to_string()),
        ],
    }
}

/// The stack's reviewer role prefix (stack output `ReviewerRolePrefix`).
pub fn role_prefix() -> String {
    let text = std::fs::read_to_string(outputs_path()).expect("the stack's outputs file");
    let outputs: Value = serde_json::from_str(&text).expect("outputs JSON");
    outputs["ReviewerRolePrefix"]
        .as_str()
        .expect("stack output ReviewerRolePrefix")
        .to_string()
}

/// The CLI built next to this test binary (`<target>/debug/docket`).
pub fn docket_bin() -> std::path::PathBuf {
    if let Ok(p) = std::env::var("DOCKET_CLI") {
        return p.into();
    }
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join("docket")
}

/// Runs `docket <args> --output json` as `session`.
pub async fn docket(session: &Session, args: &[&str]) -> Output {
    let mut cmd = tokio::process::Command::new(docket_bin());
    cmd.args(args)
        .args(["--output", "json", "--outputs", &outputs_path()])
        .env("AWS_ENDPOINT_URL", util::endpoint())
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_PROFILE");
    for (k, v) in &session.env {
        cmd.env(k, v);
    }
    cmd.output().await.expect("run the docket CLI")
}

/// Records docket's Textract quotas as an operator would (`docket ops quotas`): `tps` calls a
/// second of each operation named, `max_jobs` jobs at once, `jitter_ms` of arrival jitter. Panics
/// unless the CLI succeeds; answers its JSON.
pub async fn record_quotas(
    tps: &[(&str, usize)],
    max_jobs: impl std::fmt::Display,
    jitter_ms: u32,
) -> Value {
    let (jobs, jitter) = (max_jobs.to_string(), jitter_ms.to_string());
    let mut args = vec!["ops".to_string(), "quotas".into()];
    for (operation, n) in tps {
        args.extend(["--tps".into(), format!("{operation}={n}")]);
    }
    args.extend([
        "--max-jobs".into(),
        jobs,
        "--arrival-jitter-ms".into(),
        jitter,
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = docket(&Session { env: Vec::new() }, &args).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out)
}

/// The CLI's JSON output (panics with its stdout and stderr if it is not JSON).
pub fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// An invoice whose date reads both ways: validation asks for a person.
pub fn ambiguous_invoice(number: &str, total: &str) -> Vec<u8> {
    invoice_pdf(&ambiguous_invoice_lines(number, total))
}

/// The lines of [`ambiguous_invoice`].
pub fn ambiguous_invoice_lines(number: &str, total: &str) -> Vec<String> {
    let mut lines = invoice_lines(number, total);
    for line in lines.iter_mut().filter(|l| l.starts_with("Invoice Date:")) {
        *line = "Invoice Date: 03/04/2026".into();
    }
    lines
}

/// Uploads a document that needs review and waits until its task is listed for `session`.
pub async fn pending_task(stack: &Stack, tenant: &str, session: &Session) -> (DocumentId, String) {
    let pdf = ambiguous_invoice("INV-2026-0777", "125.00");
    pending_task_of(stack, tenant, session, "pdf", pdf).await
}

/// Uploads `document` (a file with `extension`) that needs review and waits until its task is
/// listed for `session`.
pub async fn pending_task_of(
    stack: &Stack,
    tenant: &str,
    session: &Session,
    extension: &str,
    document: Vec<u8>,
) -> (DocumentId, String) {
    let name = format!("{}.{extension}", util::unique("rev"));
    stack
        .upload(&format!("inbox/{tenant}/{name}"), document)
        .await;
    let document = Stack::document_id(tenant, &name);
    let deadline = Instant::now() + RUN_DEADLINE;
    loop {
        let out = docket(session, &["review", "list", "--status", "pending"]).await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed = json_of(&out);
        if let Some(task) = listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["documentId"] == document.as_str())
        {
            return (document, task["taskId"].as_str().unwrap().to_string());
        }
        assert!(Instant::now() < deadline, "no review task for {document}");
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
}

/// Waits until the document has a run in status `want` (bounded); returns its run id.
pub async fn wait_for_status(stack: &Stack, document: &DocumentId, want: &str) -> String {
    let deadline = Instant::now() + RUN_DEADLINE;
    loop {
        let runs = stack.runs(document).await;
        if let Some(run) = runs.iter().find(|r| s(r, "status") == want) {
            return s(run, "runId");
        }
        assert!(
            Instant::now() < deadline,
            "{document}: no {want} run: {:?}",
            runs.iter().map(|r| s(r, "status")).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
