//! Review task ids: one per run, derived from it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ids::{sha256_hex, RunId};
use crate::Error;

/// A review task: `rev-` + 32 hex, derived from the run ([`task_id_for`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TaskId(String);

impl TaskId {
    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Accepts an id read back from storage or input, if it has the right shape.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let ok = s.len() == 36
            && s.starts_with("rev-")
            && s[4..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| TaskId(s.to_string()))
            .ok_or_else(|| Error::BadInput(format!("not a review task id: {s:?}")))
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for TaskId {
    type Error = Error;

    fn try_from(s: String) -> Result<Self, Error> {
        TaskId::parse(&s)
    }
}

impl From<TaskId> for String {
    fn from(id: TaskId) -> String {
        id.0
    }
}

/// The review task of `run`: one per run, so a retried open (a new attempt of the Task, a
/// duplicate invocation) finds the same task instead of creating a second one.
pub fn task_id_for(run: &RunId) -> TaskId {
    let h = sha256_hex(format!("review:{run}").as_bytes());
    TaskId(format!("rev-{}", &h[..32]))
}
