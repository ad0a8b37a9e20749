//! The OCR waits (`OcrWaitsTable`, key [`KEY`] = the run id): the waiting `StartOcr` Task's
//! token ([`TOKEN`]) with what ending its wait needs ([`WAITER`]: the run and its job, as JSON)
//! and the job the provider's notification said had ended ([`ENDED`]), side by side in one
//! item. Each side is one `UpdateItem` that sets its attributes and returns the item as it now
//! stands (`ALL_NEW`), so of a waiter and a notice written in either order, the second write
//! sees the first. Items expire ([`EXPIRES`], the table's TTL attribute) a week after their
//! last write, long after any wait's deadline.

use aws_sdk_dynamodb::Client;
use docket_core::ids::RunId;
use docket_core::model::run::{RunInput, TaskToken};
use docket_core::ports::{OcrWaiter, OcrWaits};
use docket_core::Error;
use serde::{Deserialize, Serialize};

use crate::item::{opt_str, req_str, set_and_read, Item};

/// The key attribute.
pub const KEY: &str = "runId";
/// The waiting Task's token (never logged, never returned by anything but [`DynamoOcrWaits`]).
pub const TOKEN: &str = "taskToken";
/// The run and its job, as JSON ([`Waiter`]).
pub const WAITER: &str = "waiter";
/// The id of the job whose end the provider notified.
pub const ENDED: &str = "endedJob";
/// The TTL attribute (epoch seconds).
pub const EXPIRES: &str = "expiresAt";
/// How long an item outlives its last write.
const KEEP_SECONDS: i64 = 7 * 24 * 3600;

/// [`WAITER`]: the waiter but its token (kept apart: a token is not serializable).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Waiter {
    run: RunInput,
    job_id: String,
    fence: u64,
}

/// The OCR waits on DynamoDB.
#[derive(Debug, Clone)]
pub struct DynamoOcrWaits {
    client: Client,
    table: String,
}

impl DynamoOcrWaits {
    /// The waits in `table`.
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoOcrWaits {
            client,
            table: table.into(),
        }
    }

    /// Sets `values` on `run`'s item; the item as it now stands.
    async fn set(&self, run: &RunId, values: &[(&str, String)]) -> Result<Item, Error> {
        let key = (KEY, run.as_str());
        let expires = (EXPIRES, KEEP_SECONDS);
        let what = "dynamodb UpdateItem ocr wait";
        set_and_read(&self.client, &self.table, key, values, expires, what).await
    }
}

impl OcrWaits for DynamoOcrWaits {
    async fn wait(&self, waiter: &OcrWaiter) -> Result<Option<String>, Error> {
        let stored = Waiter {
            run: waiter.run.clone(),
            job_id: waiter.job_id.clone(),
            fence: waiter.fence,
        };
        let json = serde_json::to_string(&stored).expect("a waiter serializes");
        let token = waiter.token.expose().to_string();
        let values = [(TOKEN, token), (WAITER, json)];
        let item = self.set(&waiter.run.run_id, &values).await?;
        Ok(opt_str(&item, ENDED).map(str::to_string))
    }

    async fn ended(&self, run: &RunId, job_id: &str) -> Result<Option<OcrWaiter>, Error> {
        let item = self.set(run, &[(ENDED, job_id.to_string())]).await?;
        let Some(token) = opt_str(&item, TOKEN) else {
            return Ok(None);
        };
        let stored: Waiter = serde_json::from_str(req_str(&item, WAITER)?)
            .map_err(|e| Error::Internal(format!("stored OCR waiter of {run} unreadable: {e}")))?;
        Ok(Some(OcrWaiter {
            token: TaskToken::new(token)?,
            run: stored.run,
            job_id: stored.job_id,
            fence: stored.fence,
        }))
    }
}
