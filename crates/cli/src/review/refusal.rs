//! A refusal of the review API (a 4xx/5xx answer): read from whatever body came back, printed
//! as JSON, and explained in the message the command fails with.

use docket_core::error::ErrorKind;
use docket_core::review::{ReviewTask, TaskId};
use serde_json::{json, Value};

/// A 4xx/5xx answer: `{"error": "<Family.Name>", "message": ..., "task": ReviewTask?}`, or
/// what the function URL itself answers (403 `{"Message": "Forbidden"}`), or anything else a
/// proxy may put there.
#[derive(Debug)]
pub(crate) struct Refusal {
    status: u16,
    error: String,
    message: String,
    task: Option<ReviewTask>,
}

impl Refusal {
    pub(super) fn parse(status: u16, body: &[u8]) -> Refusal {
        let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(String::from);
        let error = text("error").unwrap_or_else(|| match status {
            403 => "Forbidden".into(),
            _ => format!("HTTP {status}"),
        });
        let message = text("message")
            .or_else(|| text("Message"))
            .unwrap_or_else(|| {
                let raw = String::from_utf8_lossy(body);
                raw.trim().chars().take(300).collect()
            });
        // A task that does not parse is left out rather than hiding the error itself.
        let task = value
            .get("task")
            .and_then(|t| serde_json::from_value(t.clone()).ok());
        Refusal {
            status,
            error,
            message,
            task,
        }
    }

    /// The error body for `--output json`: the contract's fields and the HTTP status.
    pub(crate) fn json(&self) -> Value {
        let mut v = json!({
            "error": self.error,
            "message": self.message,
            "status": self.status,
        });
        if let Some(task) = &self.task {
            v["task"] = json!(task);
        }
        v
    }

    /// The message the command fails with: the error's name and message, and what the
    /// recorded task says (who decided what and when; when and why it expired).
    pub(crate) fn explain(&self, task: Option<&TaskId>) -> String {
        let mut msg = if self.message.is_empty() || self.message == self.error {
            format!("review API: {} (HTTP {})", self.error, self.status)
        } else {
            format!("review API: {}: {}", self.error, self.message)
        };
        let recorded = self.task.as_ref();
        let id = recorded.map(|t| &t.task_id).or(task);
        match ErrorKind::from_name(&self.error) {
            Some(ErrorKind::AlreadyDecided) => match recorded.and_then(|t| t.decision.as_ref()) {
                Some(d) => {
                    let what = if d.is_approval() {
                        "approved"
                    } else {
                        "rejected"
                    };
                    msg += &format!(
                        "\ntask {} was already decided: {what} by {} at {}",
                        id.map(TaskId::as_str).unwrap_or("?"),
                        d.reviewer.id,
                        d.decided_at
                    );
                }
                None => msg += "\n(the API did not say who decided)",
            },
            Some(ErrorKind::ReviewExpired) => {
                if let Some(e) = recorded.and_then(|t| t.expiry.as_ref()) {
                    msg += &format!("\nthe task expired at {} ({})", e.at, e.reason);
                }
            }
            _ if self.status == 403 => {
                msg += "\nthe caller is not a reviewer (sign in with your tenant's reviewer role), \
                        or the request was not signed"
            }
            _ if self.error.starts_with("Transient.") || self.status >= 500 => {
                msg += "\nthis may pass: try again"
            }
            _ => {}
        }
        msg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::fixtures::{decided_json, task_json, TASK};

    #[test]
    fn already_decided_says_who_decided_what_and_when() {
        let body = json!({
            "error": "Conflict.AlreadyDecided",
            "message": "the task is decided",
            "task": decided_json()
        });
        let r = Refusal::parse(409, body.to_string().as_bytes());
        assert_eq!(r.error, "Conflict.AlreadyDecided");
        let msg = r.explain(None);
        assert!(msg.contains("Conflict.AlreadyDecided: the task is decided"));
        assert!(msg.contains(&format!(
            "task {TASK} was already decided: approved by alice at 2026-03-01T11:00:00.000Z"
        )));
        assert_eq!(r.json()["task"], decided_json());
        assert_eq!(r.json()["status"], 409);
    }

    #[test]
    fn an_expired_task_says_when_and_why() {
        let mut t = task_json("expired");
        t["expiry"] = json!({"reason": "TaskTimedOut", "at": "2026-03-02T10:00:01.000Z"});
        let body = json!({"error": "Conflict.ReviewExpired", "message": "too late", "task": t});
        let msg = Refusal::parse(410, body.to_string().as_bytes()).explain(None);
        assert!(msg.contains("Conflict.ReviewExpired: too late"));
        assert!(msg.contains("expired at 2026-03-02T10:00:01.000Z (TaskTimedOut)"));
    }

    #[test]
    fn the_function_urls_own_403_and_a_non_json_body_still_make_a_message() {
        let r = Refusal::parse(403, br#"{"Message":"Forbidden"}"#);
        assert_eq!(
            (r.error.as_str(), r.message.as_str()),
            ("Forbidden", "Forbidden")
        );
        let msg = r.explain(None);
        assert!(msg.starts_with("review API: Forbidden (HTTP 403)\n"));
        assert!(msg.contains("not a reviewer"));
        let r = Refusal::parse(502, b"<html>Bad Gateway</html>");
        assert_eq!(r.error, "HTTP 502");
        assert_eq!(r.message, "<html>Bad Gateway</html>");
        assert!(r.task.is_none());
        assert!(r.json().get("task").is_none());
    }

    #[test]
    fn a_transient_error_says_to_try_again() {
        let body = json!({"error": "Transient.Throttled", "message": "slow down"});
        let msg = Refusal::parse(503, body.to_string().as_bytes()).explain(None);
        assert!(msg.starts_with("review API: Transient.Throttled: slow down"));
        assert!(msg.contains("try again"));
    }
}
