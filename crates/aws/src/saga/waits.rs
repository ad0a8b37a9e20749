//! The receipt waits (`ReceiptWaitsTable`, key [`KEY`] = the accepted event's id): the waiting
//! Task's token ([`TOKEN`]) and the consumer's answer ([`ANSWER`], its JSON) side by side in one
//! item. Each side is one `UpdateItem` that sets its attribute and returns the item as it now
//! stands (`ALL_NEW`), so of a token and an answer written in either order, the second write
//! sees the first. Items expire ([`EXPIRES`], the table's TTL attribute) a week after their last
//! write, long after any wait's deadline.

use aws_sdk_dynamodb::Client;
use docket_core::model::run::TaskToken;
use docket_core::ports::ReceiptWaits;
use docket_core::saga::sink::Answer;
use docket_core::saga::EventId;
use docket_core::Error;

use crate::item::{opt_str, set_and_read, Item};

/// The key attribute.
pub const KEY: &str = "eventId";
/// The waiting Task's token (never logged, never returned by anything but [`DynamoWaits`]).
pub const TOKEN: &str = "taskToken";
/// The consumer's answer, as JSON.
pub const ANSWER: &str = "answer";
/// The TTL attribute (epoch seconds).
pub const EXPIRES: &str = "expiresAt";
/// How long an item outlives its last write.
const KEEP_SECONDS: i64 = 7 * 24 * 3600;

/// The receipt waits on DynamoDB.
#[derive(Debug, Clone)]
pub struct DynamoWaits {
    client: Client,
    table: String,
}

impl DynamoWaits {
    /// The waits in `table`.
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoWaits {
            client,
            table: table.into(),
        }
    }

    /// Sets `attribute` of `event`'s item to `value`; the item as it now stands.
    async fn set(&self, event: &EventId, attribute: &str, value: String) -> Result<Item, Error> {
        let key = (KEY, event.as_str());
        let expires = (EXPIRES, KEEP_SECONDS);
        let what = "dynamodb UpdateItem receipt wait";
        set_and_read(
            &self.client,
            &self.table,
            key,
            &[(attribute, value)],
            expires,
            what,
        )
        .await
    }
}

impl ReceiptWaits for DynamoWaits {
    async fn wait(&self, event: &EventId, token: &TaskToken) -> Result<Option<Answer>, Error> {
        let item = self.set(event, TOKEN, token.expose().to_string()).await?;
        opt_str(&item, ANSWER)
            .map(|json| {
                serde_json::from_str(json)
                    .map_err(|e| Error::Internal(format!("stored answer unreadable: {e}")))
            })
            .transpose()
    }

    async fn answered(&self, answer: &Answer) -> Result<Option<TaskToken>, Error> {
        let json = serde_json::to_string(answer).expect("answers serialize");
        let item = self.set(answer.event_id(), ANSWER, json).await?;
        opt_str(&item, TOKEN)
            .map(|t| TaskToken::new(t.to_string()))
            .transpose()
    }
}
