//! What a run carries between steps: the run input the workflow passes along, pointers to
//! stored objects, and the token of a workflow Task that waits for a review.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ids::{DocumentId, RunId, Tenant};
use crate::Error;

/// The state the workflow carries between steps: ids and pointers, never document content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInput {
    /// The tenant.
    pub tenant: Tenant,
    /// The document.
    pub document_id: DocumentId,
    /// The run (also the execution name).
    pub run_id: RunId,
    /// The raw object version.
    pub raw: ObjectRef,
    /// SHA-256 of the raw bytes.
    pub sha256: String,
    /// Orders this source version among the document's versions.
    pub source_order: String,
    /// The config the run was started under.
    pub config_fingerprint: String,
    /// A reprocessed run's stored normalized OCR of the same source version (the run it
    /// follows): the OCR step reuses it instead of asking the provider again when the provider's
    /// engine is the one that produced it (`steps::ocr`). `None` for an upload's run and for a
    /// reprocess with `--reocr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse_ocr: Option<ObjectRef>,
    /// The raw document's page count, when ingest could read it from the bytes
    /// ([`crate::pages`]); a reprocess passes on the count its run recorded
    /// ([`crate::ports::RunRecord::pages`]); `None` otherwise. A one-page
    /// document is read by the provider's synchronous API ([`RunInput::one_page`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// The call slot (unix ms) at the provider's synchronous read pacer that ingest booked for
    /// the run's one-page read when it started the execution ([`crate::admitted::starts`]):
    /// the OCR step reads at it, or, come too late for it, takes a turn as any read does.
    /// `None` when the start booked none (a document of more pages, a reprocess).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_at_ms: Option<i64>,
}

impl RunInput {
    /// Whether the raw document is known to have one page: the OCR step reads it synchronously
    /// (no job), and its execution's start takes no job slot.
    pub fn one_page(&self) -> bool {
        self.pages == Some(1)
    }
}

/// An execution's input, as a run's start writes it (`steps::ingest::begin_run`): the run, how
/// long its OCR Task waits for the job's completion notification and how long its Validate Task
/// waits for a reviewer (the Tasks' `TimeoutSecondsPath`; an execution without them fails at
/// StartOcr or Validate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionInput {
    /// The run.
    pub run: RunInput,
    /// Seconds (`steps::Context::ocr_wait_seconds`).
    pub ocr_wait_seconds: u32,
    /// Seconds (`steps::Context::review_wait_seconds`).
    pub review_wait_seconds: u32,
}

/// A pointer to an S3 object (optionally one version of it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// Bucket name.
    pub bucket: String,
    /// Object key (decoded).
    pub key: String,
    /// A specific version, or the latest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
}

impl ObjectRef {
    /// The latest version of `bucket`/`key`.
    pub fn new(bucket: &str, key: impl Into<String>) -> Self {
        ObjectRef {
            bucket: bucket.into(),
            key: key.into(),
            version_id: None,
        }
    }
}

impl ObjectRef {
    /// A pointer as [`fmt::Display`] writes it (`s3://bucket/key`, optionally
    /// `?versionId=…`), as run records keep their outputs; `None` for anything else.
    pub fn from_pointer(pointer: &str) -> Option<Self> {
        let (bucket, rest) = pointer.strip_prefix("s3://")?.split_once('/')?;
        let (key, version_id) = match rest.rsplit_once("?versionId=") {
            Some((key, version)) => (key, Some(version.to_string())),
            None => (rest, None),
        };
        (!bucket.is_empty() && !key.is_empty()).then(|| ObjectRef {
            bucket: bucket.into(),
            key: key.into(),
            version_id,
        })
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.key)?;
        if let Some(v) = &self.version_id {
            write!(f, "?versionId={v}")?;
        }
        Ok(())
    }
}

/// The longest task token Step Functions issues (its API's limit).
pub const MAX_TOKEN_CHARS: usize = 2048;

/// A Step Functions task token. It is a bearer credential for the waiting execution, so it is
/// kept server-side: not `Serialize` (a struct holding it cannot derive it), redacted in
/// `Debug` and `Display`, and readable only through [`TaskToken::expose`].
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct TaskToken(String);

impl TaskToken {
    /// A token as Step Functions issued it (1..=2048 characters).
    pub fn new(token: impl Into<String>) -> Result<Self, Error> {
        let token = token.into();
        let n = token.chars().count();
        if n == 0 || n > MAX_TOKEN_CHARS {
            return Err(Error::BadInput(format!(
                "a task token has 1 to {MAX_TOKEN_CHARS} characters, got {n}"
            )));
        }
        Ok(TaskToken(token))
    }

    /// The token itself. Only the adapter that calls Step Functions (`SendTaskSuccess`,
    /// `SendTaskFailure`) and the store that keeps it may call this; never log or return it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for TaskToken {
    type Error = Error;

    fn try_from(s: String) -> Result<Self, Error> {
        TaskToken::new(s)
    }
}

impl fmt::Debug for TaskToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TaskToken(<redacted>)")
    }
}

impl fmt::Display for TaskToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TaskToken(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_task_token_does_not_implement_serialize() {
        // The static_assertions `assert_not_impl_any!` trick: if TaskToken implemented Serialize,
        // both impls would apply and `check` would be ambiguous, which does not compile.
        trait AmbiguousIfSerialize<A> {
            fn check() {}
        }
        impl<T: ?Sized> AmbiguousIfSerialize<()> for T {}
        #[allow(dead_code)]
        struct IsSerialize;
        impl<T: ?Sized + Serialize> AmbiguousIfSerialize<IsSerialize> for T {}
        <TaskToken as AmbiguousIfSerialize<_>>::check();
    }

    #[test]
    fn a_task_token_is_read_from_input_but_must_be_1_to_2048_characters() {
        let token: TaskToken = serde_json::from_value(json!("tok")).unwrap();
        assert_eq!(token.expose(), "tok");
        assert!(serde_json::from_value::<TaskToken>(json!("")).is_err());
        assert!(TaskToken::new("x".repeat(MAX_TOKEN_CHARS)).is_ok());
        let err = TaskToken::new("x".repeat(MAX_TOKEN_CHARS + 1)).unwrap_err();
        assert_eq!(err.name(), "Fatal.BadInput");
        assert!(!err.to_string().contains("xxx"));
    }
}
