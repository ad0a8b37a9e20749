//! [`ConfigStore`] on DynamoDB (`CONFIG_TABLE`): one item per config, key `fingerprint`, the
//! config as JSON beside its `version`, `publishedAt` and `publishedBy`. A config is put once
//! (`attribute_not_exists(fingerprint)`) and never updated, so a function keeps every config it
//! read for as long as it lives (the cache is per execution environment).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::types::Put;
use aws_sdk_dynamodb::Client;
use docket_core::config::PipelineConfig;
use docket_core::ports::{ConfigStore, Published, PublishedConfig};
use docket_core::Error;

use crate::item::{get_item, put_item, req_str, s, scan_all, Item};

/// The table's hash key.
pub const KEY: &str = "fingerprint";
/// The condition of a publish: nothing is stored under the fingerprint.
pub const PUBLISH_CONDITION: &str = "attribute_not_exists(fingerprint)";

/// [`ConfigStore`] on DynamoDB, with the configs read so far kept in memory.
#[derive(Debug, Clone)]
pub struct DynamoConfigs {
    client: Client,
    table: String,
    read: Arc<Mutex<HashMap<String, PipelineConfig>>>,
}

impl DynamoConfigs {
    /// The config table `table` through `client`.
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoConfigs {
            client,
            table: table.into(),
            read: Arc::default(),
        }
    }
}

/// The config a stored item holds, checked against the fingerprint it is stored under.
fn config_of(item: &Item, fingerprint: &str) -> Result<PipelineConfig, Error> {
    let corrupt = |why: String| Error::Internal(format!("stored config {fingerprint}: {why}"));
    let config =
        PipelineConfig::from_json(req_str(item, "config")?).map_err(|e| corrupt(e.to_string()))?;
    match config.fingerprint() {
        f if f == fingerprint => Ok(config),
        other => Err(corrupt(format!("it is {other}"))),
    }
}

fn listed(item: &Item) -> Result<PublishedConfig, Error> {
    Ok(PublishedConfig {
        fingerprint: req_str(item, KEY)?.into(),
        version: req_str(item, "version")?.into(),
        published_at: req_str(item, "publishedAt")?.into(),
        published_by: req_str(item, "publishedBy")?.into(),
    })
}

impl ConfigStore for DynamoConfigs {
    async fn get(&self, fingerprint: &str) -> Result<Option<PipelineConfig>, Error> {
        if let Some(config) = self.read.lock().unwrap().get(fingerprint) {
            return Ok(Some(config.clone()));
        }
        let key = (KEY, fingerprint);
        let item = get_item(&self.client, &self.table, key, "dynamodb GetItem config").await?;
        let Some(item) = item else { return Ok(None) };
        let config = config_of(&item, fingerprint)?;
        let mut read = self.read.lock().unwrap();
        read.insert(fingerprint.to_string(), config.clone());
        Ok(Some(config))
    }

    async fn publish(
        &self,
        config: &PipelineConfig,
        by: &str,
        at: &str,
    ) -> Result<Published, Error> {
        let json = serde_json::to_string(config).expect("configs serialize");
        let item = HashMap::from([
            (KEY.into(), s(config.fingerprint())),
            ("version".into(), s(&config.version)),
            ("config".into(), s(json)),
            ("publishedAt".into(), s(at)),
            ("publishedBy".into(), s(by)),
        ]);
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression(PUBLISH_CONDITION)
            .build()
            .expect("complete put");
        // A lost answer is Ambiguous.OutcomeUnknown: publishing again is the reconciliation.
        match put_item(&self.client, put, "dynamodb PutItem config").await? {
            Ok(()) => Ok(Published::New),
            Err(_) => Ok(Published::Already),
        }
    }

    /// One Scan of the table: listing every config is what it is asked for, and the table
    /// holds one item per config ever published.
    async fn list(&self) -> Result<Vec<PublishedConfig>, Error> {
        let scan = self
            .client
            .scan()
            .table_name(&self.table)
            .consistent_read(true);
        let items = scan_all(scan, "dynamodb Scan config").await?;
        let mut all = items.iter().map(listed).collect::<Result<Vec<_>, _>>()?;
        all.sort_by(|a, b| b.published_at.cmp(&a.published_at));
        Ok(all)
    }
}
