//! `docket review list|show|approve|reject`: a reviewer's side of human review, through the
//! review API (the review-callback function's URL, stack output `ReviewApiUrl`, `AuthType:
//! AWS_IAM`).
//!
//! Every request is SigV4-signed (service `lambda`) with the caller's credentials from the
//! default chain: the API takes who the reviewer is, and the tenant they act for, from the
//! signature, never from the request. The API never returns a task token, and nothing here
//! would print one: JSON output is the typed [`ReviewTask`](docket_core::review::ReviewTask)
//! serialized again, which has no token field, not the raw answer.

pub(crate) mod api;
#[cfg(test)]
mod fixtures;
pub(crate) mod refusal;
mod render;
mod serve;

use std::collections::BTreeMap;

use anyhow::{bail, ensure};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use docket_core::ids::Tenant;
use docket_core::model::fields::FieldName;
use docket_core::review::{ReviewStatus, TaskId};
use serde_json::{json, Value};

use crate::stack::{print, Stack};
use crate::Output;

use api::{api_url, Api};

#[derive(clap::Subcommand)]
pub enum Command {
    /// List review tasks of your tenant, oldest first: id, document, status, deadline, reasons.
    List {
        /// The tenant (only your own: another is refused as not found).
        #[arg(long, value_parser = parse_tenant)]
        tenant: Option<Tenant>,
        /// Only tasks with this status.
        #[arg(long, value_parser = status_parser())]
        status: Option<ReviewStatus>,
    },
    /// Show a task: its fields (value, confidence, source), reasons, pointers, status, decision.
    Show {
        /// The task (`rev-` + 32 hex).
        #[arg(value_parser = parse_task)]
        task: TaskId,
    },
    /// Approve a task, optionally correcting fields; the run goes on with them.
    Approve {
        /// The task (`rev-` + 32 hex).
        #[arg(value_parser = parse_task)]
        task: TaskId,
        /// Set a field, e.g. `--set total_amount=120.00` (repeatable; the API checks the value).
        #[arg(long = "set", value_name = "FIELD=VALUE", value_parser = parse_set)]
        set: Vec<(FieldName, String)>,
        /// A note for the record.
        #[arg(long)]
        comment: Option<String>,
    },
    /// Reject a task: the run fails with `Business.ReviewRejected`.
    Reject {
        /// The task (`rev-` + 32 hex).
        #[arg(value_parser = parse_task)]
        task: TaskId,
        /// Why, for the record.
        #[arg(long)]
        reason: String,
    },
    /// Serve the review page on this machine: your tasks, each document beside its fields,
    /// corrections in place. Every call it makes to the review API is signed with your
    /// credentials, as the other review commands are. Runs until stopped (Ctrl-C).
    Serve {
        /// The port on 127.0.0.1 (0: any free port; the address is printed).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Open the page in the desktop's browser.
        #[arg(long)]
        open: bool,
    },
}

pub async fn run(stack: &Stack, command: Command, output: Output) -> anyhow::Result<()> {
    if let Command::Serve { port, open } = command {
        let api = Api::connect(stack.out("ReviewApiUrl")?).await?;
        return serve::run(api, port, open, output).await;
    }
    // Arguments are checked before any credentials are looked up or a request is sent.
    let request = request_for(&command)?;
    let api = Api::connect(stack.out("ReviewApiUrl")?).await?;
    match command {
        Command::List { .. } => {
            // The API answers a page at a time: follow nextToken to the end.
            let mut tasks = Vec::new();
            let mut next: Option<String> = None;
            loop {
                let answer = send(&api, &request, next.take(), output).await?;
                let page = api::page_of(answer)?;
                tasks.extend(page.tasks);
                match page.next_token {
                    Some(token) => next = Some(token),
                    None => break,
                }
            }
            print(output, &json!({ "tasks": tasks }), || {
                render::list_text(&tasks)
            });
        }
        Command::Show { .. } => {
            let task = api::task_of(send(&api, &request, None, output).await?)?;
            print(output, &json!({ "task": task }), || {
                render::show_text(&task)
            });
        }
        Command::Approve { .. } | Command::Reject { .. } => {
            let task = api::task_of(send(&api, &request, None, output).await?)?;
            print(output, &json!({ "task": task }), || {
                render::decided_text(&task)
            });
        }
        Command::Serve { .. } => unreachable!("served above"),
    }
    Ok(())
}

/// Sends `request` (with `nextToken` when given): the answer, or the refusal explained.
async fn send(
    api: &Api,
    request: &ApiRequest,
    next_token: Option<String>,
    output: Output,
) -> anyhow::Result<Value> {
    let mut query = request.query.clone();
    query.extend(next_token.map(|t| ("nextToken", t)));
    let url = api_url(&api.base, &request.path, &query)?;
    match api.call(request.method, url, request.body.as_ref()).await? {
        Ok(answer) => Ok(answer),
        Err(refusal) => {
            if output == Output::Json {
                print(output, &refusal.json(), String::new);
            }
            bail!(refusal.explain(request.task.as_ref()));
        }
    }
}

/// A request to the review API, before signing: method, path under the base URL, query, body.
#[derive(Debug, PartialEq)]
struct ApiRequest {
    method: &'static str,
    path: String,
    query: Vec<(&'static str, String)>,
    body: Option<Value>,
    /// The task it is about, for messages.
    task: Option<TaskId>,
}

/// The request `command` makes (the contract: `GET tasks?status=&tenant=`, `GET tasks/<id>`,
/// `POST tasks/<id>/decision` with `{"verdict": "approve", "set": {...}, "comment": ...}` or
/// `{"verdict": "reject", "reason": ...}`).
fn request_for(command: &Command) -> anyhow::Result<ApiRequest> {
    Ok(match command {
        Command::List { tenant, status } => ApiRequest {
            method: "GET",
            path: "tasks".into(),
            query: status
                .map(|s| ("status", s.as_str().to_string()))
                .into_iter()
                .chain(tenant.as_ref().map(|t| ("tenant", t.to_string())))
                .collect(),
            body: None,
            task: None,
        },
        Command::Show { task } => ApiRequest {
            method: "GET",
            path: format!("tasks/{task}"),
            query: Vec::new(),
            body: None,
            task: Some(task.clone()),
        },
        Command::Approve { task, set, comment } => {
            let mut body = json!({ "verdict": "approve", "set": corrections(set)? });
            if let Some(comment) = comment {
                body["comment"] = json!(comment);
            }
            decision(task, body)
        }
        Command::Reject { task, reason } => {
            ensure!(!reason.trim().is_empty(), "a rejection needs a --reason");
            decision(task, json!({ "verdict": "reject", "reason": reason }))
        }
        Command::Serve { .. } => unreachable!("review serve sends no single request"),
    })
}

fn decision(task: &TaskId, body: Value) -> ApiRequest {
    ApiRequest {
        method: "POST",
        path: format!("tasks/{task}/decision"),
        query: Vec::new(),
        body: Some(body),
        task: Some(task.clone()),
    }
}

fn status_parser() -> impl TypedValueParser<Value = ReviewStatus> {
    PossibleValuesParser::new(ReviewStatus::ALL.map(ReviewStatus::as_str))
        .map(|s| ReviewStatus::parse(&s).expect("one of the possible values"))
}

fn parse_task(s: &str) -> Result<TaskId, String> {
    TaskId::parse(s).map_err(|e| e.to_string())
}

fn parse_tenant(s: &str) -> Result<Tenant, String> {
    Tenant::parse(s).map_err(|e| e.to_string())
}

/// `FIELD=VALUE` (split at the first `=`, so a value may contain one): a known field and a
/// non-empty value. Whether the value is well-formed is the API's to say.
fn parse_set(s: &str) -> Result<(FieldName, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected FIELD=VALUE, got {s:?}"))?;
    let name = name.trim();
    let field = FieldName::ALL
        .into_iter()
        .find(|f| f.as_str() == name)
        .ok_or_else(|| {
            let known: Vec<_> = FieldName::ALL.iter().map(|f| f.as_str()).collect();
            format!("unknown field {name:?}; fields are {}", known.join(", "))
        })?;
    if value.trim().is_empty() {
        return Err(format!("no value given for {field}"));
    }
    Ok((field, value.to_string()))
}

/// The `set` object of an approval; a field set twice is refused rather than one value chosen.
fn corrections(set: &[(FieldName, String)]) -> anyhow::Result<BTreeMap<&'static str, String>> {
    let mut out = BTreeMap::new();
    for (field, value) in set {
        if out.insert(field.as_str(), value.clone()).is_some() {
            bail!("--set {field}= is given more than once");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::fixtures::{url, TASK};
    use super::*;

    #[test]
    fn set_splits_at_the_first_equals_sign_into_a_known_field_and_its_value() {
        assert_eq!(
            parse_set("total_amount=120.00").unwrap(),
            (FieldName::TotalAmount, "120.00".to_string())
        );
        assert_eq!(
            parse_set("issuer=A=B GmbH").unwrap(),
            (FieldName::Issuer, "A=B GmbH".to_string())
        );
    }

    #[test]
    fn set_refuses_a_missing_equals_an_unknown_field_and_an_empty_value() {
        assert!(parse_set("total_amount")
            .unwrap_err()
            .contains("FIELD=VALUE"));
        let unknown = parse_set("totl=1.00").unwrap_err();
        assert!(unknown.contains("\"totl\"") && unknown.contains("total_amount"));
        assert!(parse_set("currency= ").unwrap_err().contains("no value"));
    }

    #[test]
    fn a_field_set_twice_is_refused() {
        let set = vec![
            (FieldName::Currency, "EUR".to_string()),
            (FieldName::Currency, "USD".to_string()),
        ];
        assert!(corrections(&set).is_err());
    }

    #[test]
    fn approve_sends_the_verdict_the_set_object_and_the_comment() {
        let r = request_for(&Command::Approve {
            task: TaskId::parse(TASK).unwrap(),
            set: vec![(FieldName::TotalAmount, "120.00".into())],
            comment: Some("typo".into()),
        })
        .unwrap();
        assert_eq!(
            (r.method, r.path.as_str()),
            ("POST", &*format!("tasks/{TASK}/decision"))
        );
        assert_eq!(
            r.body.unwrap(),
            json!({"verdict": "approve", "set": {"total_amount": "120.00"}, "comment": "typo"})
        );
    }

    #[test]
    fn approve_without_corrections_sends_an_empty_set_and_no_comment() {
        let r = request_for(&Command::Approve {
            task: TaskId::parse(TASK).unwrap(),
            set: Vec::new(),
            comment: None,
        })
        .unwrap();
        assert_eq!(r.body.unwrap(), json!({"verdict": "approve", "set": {}}));
    }

    #[test]
    fn reject_sends_the_reason_and_needs_one() {
        let task = TaskId::parse(TASK).unwrap();
        let r = request_for(&Command::Reject {
            task: task.clone(),
            reason: "not an invoice".into(),
        })
        .unwrap();
        assert_eq!(
            r.body.unwrap(),
            json!({"verdict": "reject", "reason": "not an invoice"})
        );
        let blank = Command::Reject {
            task,
            reason: "  ".into(),
        };
        assert!(request_for(&blank).is_err());
    }

    #[test]
    fn list_puts_only_the_given_filters_in_the_query() {
        let all = request_for(&Command::List {
            tenant: None,
            status: None,
        })
        .unwrap();
        let base = url("https://abc.lambda-url.eu-west-1.on.aws/");
        assert_eq!(
            api_url(&base, &all.path, &all.query).unwrap().as_str(),
            "https://abc.lambda-url.eu-west-1.on.aws/tasks"
        );
        let some = request_for(&Command::List {
            tenant: Some(Tenant::parse("acme").unwrap()),
            status: Some(ReviewStatus::Pending),
        })
        .unwrap();
        assert_eq!(
            api_url(&base, &some.path, &some.query).unwrap().as_str(),
            "https://abc.lambda-url.eu-west-1.on.aws/tasks?status=pending&tenant=acme"
        );
    }
}
