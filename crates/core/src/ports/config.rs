//! The published pipeline configs, by fingerprint: a run carries the fingerprint of the config it
//! started under, and every step of it runs under that config, not the one compiled into the
//! function that happens to be deployed when the step runs.

use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::config::PipelineConfig;
use crate::Error;

/// One published config, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishedConfig {
    /// `cfg-…` ([`PipelineConfig::fingerprint`]).
    pub fingerprint: String,
    /// The config's own `version` label.
    pub version: String,
    /// When it was first published (RFC 3339).
    pub published_at: String,
    /// Who published it (the caller's principal, or `docket/deploy`).
    pub published_by: String,
}

/// What a publish did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    /// The config is stored under its fingerprint now.
    New,
    /// It was already: a config is published once and never changed.
    Already,
}

/// The config store. A config is written once under its fingerprint and never changed.
pub trait ConfigStore: Send + Sync {
    /// The config published under `fingerprint`, checked (`Fatal.Internal` if what is stored
    /// does not parse or has another fingerprint).
    fn get(
        &self,
        fingerprint: &str,
    ) -> impl Future<Output = Result<Option<PipelineConfig>, Error>> + Send;
    /// Publishes `config` under its fingerprint (once), as `by` at `at` (RFC 3339).
    fn publish(
        &self,
        config: &PipelineConfig,
        by: &str,
        at: &str,
    ) -> impl Future<Output = Result<Published, Error>> + Send;
    /// Every published config, newest first.
    fn list(&self) -> impl Future<Output = Result<Vec<PublishedConfig>, Error>> + Send;
}
