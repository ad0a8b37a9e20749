//! The config store in memory: a map by fingerprint, written once per fingerprint.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::config::PipelineConfig;
use crate::ports::{ConfigStore, Published, PublishedConfig};
use crate::Error;

/// Published configs by fingerprint (in the order published).
#[derive(Debug, Default)]
pub struct MemoryConfigs {
    configs: Mutex<BTreeMap<String, (PipelineConfig, PublishedConfig)>>,
}

impl ConfigStore for MemoryConfigs {
    async fn get(&self, fingerprint: &str) -> Result<Option<PipelineConfig>, Error> {
        let configs = self.configs.lock().unwrap();
        Ok(configs.get(fingerprint).map(|(c, _)| c.clone()))
    }

    async fn publish(
        &self,
        config: &PipelineConfig,
        by: &str,
        at: &str,
    ) -> Result<Published, Error> {
        let fingerprint = config.fingerprint();
        let mut configs = self.configs.lock().unwrap();
        if configs.contains_key(&fingerprint) {
            return Ok(Published::Already);
        }
        let listed = PublishedConfig {
            fingerprint: fingerprint.clone(),
            version: config.version.clone(),
            published_at: at.into(),
            published_by: by.into(),
        };
        configs.insert(fingerprint, (config.clone(), listed));
        Ok(Published::New)
    }

    async fn list(&self) -> Result<Vec<PublishedConfig>, Error> {
        let configs = self.configs.lock().unwrap();
        let mut listed: Vec<_> = configs.values().map(|(_, l)| l.clone()).collect();
        listed.sort_by(|a, b| b.published_at.cmp(&a.published_at));
        Ok(listed)
    }
}
