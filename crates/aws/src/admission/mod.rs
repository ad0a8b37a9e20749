//! [`Admission`] on DynamoDB: one table keyed by `pk` and `sk` (both strings).
//!
//! - A pacer is one item, `pk = pacer#<name>`, `sk = state`, with `nextMs`: taking a slot is
//!   one `UpdateItem` per [`docket_core::admission::pacer::claim`], its condition the claim's
//!   (advance: `SET nextMs = nextMs + :interval` if `nextMs BETWEEN :now AND :horizon`,
//!   returning the old `nextMs`, the slot; restart: `SET nextMs = :next` if there is no item
//!   or `nextMs < :now`). A refusal returns the item (`ALL_OLD`), from which the next claim is
//!   chosen; no read comes first. A write whose answer was lost may have taken a slot no one
//!   uses, which only wastes it: the caller claims again.
//! - A slot pool is a partition `pk = pool#<name>`: the count (`sk = count`, `held`) and one
//!   lease per holder (`sk = lease#<holder>`, `holder`, `until`). Taking a slot is one
//!   transaction: put the lease if the holder has none, and write the count conditional on the
//!   count read; giving it back deletes the lease conditional on the lease read (a renewed one
//!   is kept) and writes the count the same way. Reclaiming queries the partition's leases.
//!
//! - A provider's quotas (`docket ops quotas`) are one item, `pk = quotas#<provider>`,
//!   `sk = current`, the [`Quotas`] as JSON in `quotas`; read at each admitted call.
//!
//! A pool's write refused because another caller wrote first, or whose answer was lost (the
//! holder re-reads and finds whether it landed: these writes are idempotent per holder), is
//! decided again from a fresh read, at most [`MAX_RACES`] times; past that (or past a pacer's
//! [`MAX_WRITES`]) the caller is told to come back (`Transient.InProgress`).

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, Delete, Put, ReturnValue, ReturnValuesOnConditionCheckFailure,
    TransactWriteItem, Update,
};
use aws_sdk_dynamodb::Client;
use docket_core::admission::pacer::{claim, Claim, Pace, Seen, Taken, MAX_WRITES};
use docket_core::admission::slots::{acquire, reclaimable, release, Acquired, Lease, Released};
use docket_core::admission::Quotas;
use docket_core::ports::{Admission, Timer};
use docket_core::Error;

use crate::errors::{classify, classify_effect};
use crate::item::{n, put_item, query_all, req_str, s, transact, Item};

/// The system clock, and tokio's sleep (a Lambda's turn is taken in real time).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemTimer;

impl Timer for SystemTimer {
    fn now_ms(&self) -> i64 {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.map_or(0, |d| d.as_millis() as i64)
    }

    async fn sleep_until(&self, at_ms: i64) {
        let wait = at_ms - self.now_ms();
        if wait > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(wait as u64)).await;
        }
    }
}

/// How often a write is decided again after losing a race, before the caller is told to come
/// back.
pub const MAX_RACES: usize = 20;

/// Pacers and slot pools in the DynamoDB table `table`.
#[derive(Debug, Clone)]
pub struct DynamoAdmission {
    client: Client,
    table: String,
}

fn num(item: &Item, name: &str) -> Result<i64, Error> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::Internal(format!("stored item lacks number attribute {name}")))
}

fn too_many_races(what: &str) -> Error {
    Error::InProgress(format!(
        "{what}: lost {MAX_RACES} races to other callers; come back"
    ))
}

impl DynamoAdmission {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoAdmission {
            client,
            table: table.into(),
        }
    }

    async fn get(&self, pk: &str, sk: &str, what: &str) -> Result<Option<Item>, Error> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("pk", s(pk))
            .key("sk", s(sk))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify(what, e))?;
        Ok(out.item().cloned())
    }

    /// Sends `claimed` as one conditional `UpdateItem` on pacer `pacer` (module docs): the
    /// slot taken, or the item as the refusal returned it.
    async fn claim_slot(&self, pacer: &str, claimed: &Claim) -> Result<Result<i64, Seen>, Error> {
        let pk = format!("pacer#{pacer}");
        let update = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("pk", s(&pk))
            .key("sk", s("state"))
            .return_values(ReturnValue::UpdatedOld)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let (update, slot) = match *claimed {
            Claim::Advance {
                from_ms,
                to_ms,
                interval_ms,
            } => (
                update
                    .update_expression("SET nextMs = nextMs + :interval")
                    .condition_expression("nextMs BETWEEN :from AND :to")
                    .expression_attribute_values(":interval", n(interval_ms))
                    .expression_attribute_values(":from", n(from_ms))
                    .expression_attribute_values(":to", n(to_ms)),
                None,
            ),
            Claim::Restart { at_ms, interval_ms } => (
                update
                    .update_expression("SET nextMs = :next")
                    .condition_expression("attribute_not_exists(pk) OR nextMs < :at")
                    .expression_attribute_values(":next", n(at_ms + interval_ms))
                    .expression_attribute_values(":at", n(at_ms)),
                Some(at_ms),
            ),
        };
        match update.send().await {
            Ok(out) => match slot {
                Some(at_ms) => Ok(Ok(at_ms)),
                // The advance's slot is the `nextMs` it replaced.
                None => out
                    .attributes()
                    .map(|old| num(old, "nextMs"))
                    .transpose()?
                    .map(Ok)
                    .ok_or_else(|| Error::Internal("an advance returned no old nextMs".into())),
            },
            Err(err) => match err.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(e)) => {
                    let item = match (e.item(), slot) {
                        (Some(item), _) => Some(item.clone()),
                        // A refused advance without the item: there is none.
                        (None, None) => None,
                        // A refused restart means there is one: an emulator that ignores
                        // `ReturnValuesOnConditionCheckFailure`; read it.
                        (None, Some(_)) => self.get(&pk, "state", "admission read pacer").await?,
                    };
                    let next = item.map(|item| num(&item, "nextMs")).transpose()?;
                    Ok(Err(next.map_or(Seen::Absent, Seen::Next)))
                }
                _ => Err(classify_effect("admission take slot", err)),
            },
        }
    }

    /// The slots of `pool` held now (`docket ops quotas`).
    pub async fn held(&self, pool: &str) -> Result<u32, Error> {
        let count = self
            .get(&format!("pool#{pool}"), "count", "admission read count")
            .await?;
        Ok(count.map(|c| num(&c, "held")).transpose()?.unwrap_or(0) as u32)
    }

    /// The pool's count and `holder`'s lease, as read now.
    async fn pool(&self, pool: &str, holder: &str) -> Result<(Option<u32>, Option<Lease>), Error> {
        let pk = format!("pool#{pool}");
        let count = self.get(&pk, "count", "admission read count").await?;
        let held = count
            .map(|c| num(&c, "held"))
            .transpose()?
            .map(|h| h as u32);
        let lease = self
            .get(&pk, &format!("lease#{holder}"), "admission read lease")
            .await?
            .map(|item| lease_of(&item))
            .transpose()?;
        Ok((held, lease))
    }

    /// The count item written as `held`, conditional on the count read (`None`: no item yet).
    fn count_write(&self, pool: &str, read: Option<u32>, held: u32) -> TransactWriteItem {
        let put = Put::builder()
            .table_name(&self.table)
            .item("pk", s(format!("pool#{pool}")))
            .item("sk", s("count"))
            .item("held", n(held));
        let put = match read {
            None => put.condition_expression("attribute_not_exists(pk)"),
            Some(old) => put
                .condition_expression("held = :old")
                .expression_attribute_values(":old", n(old)),
        };
        TransactWriteItem::builder()
            .put(put.build().expect("table, item"))
            .build()
    }

    /// Gives `lease` back: deletes it if unchanged and writes the count one lower.
    async fn give_back(&self, pool: &str, lease: &Lease, read: u32) -> Result<bool, Error> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .key("pk", s(format!("pool#{pool}")))
            .key("sk", s(format!("lease#{}", lease.holder)))
            .condition_expression("#until = :until")
            .expression_attribute_names("#until", "until")
            .expression_attribute_values(":until", n(lease.until))
            .build()
            .expect("table, key");
        let items = vec![
            TransactWriteItem::builder().delete(delete).build(),
            self.count_write(pool, Some(read), read.saturating_sub(1)),
        ];
        Ok(transact(&self.client, items, "admission give back")
            .await?
            .is_ok())
    }
}

fn lease_of(item: &Item) -> Result<Lease, Error> {
    Ok(Lease {
        holder: req_str(item, "holder")?.to_string(),
        until: num(item, "until")?,
    })
}

/// A write whose outcome is unknown is decided again from a fresh read, like a lost race.
fn lost(result: Result<bool, Error>) -> Result<bool, Error> {
    match result {
        Err(Error::OutcomeUnknown(_)) => Ok(false),
        other => other,
    }
}

impl Admission for DynamoAdmission {
    async fn take_slot(&self, pacer: &str, pace: &Pace, now_ms: i64) -> Result<Taken, Error> {
        let mut seen = Seen::Unknown;
        for _ in 0..MAX_WRITES {
            let claimed = match claim(seen, pace, now_ms) {
                Ok(claimed) => claimed,
                Err(busy) => return Ok(busy),
            };
            match self.claim_slot(pacer, &claimed).await {
                Ok(Ok(at_ms)) => return Ok(Taken::Slot { at_ms }),
                Ok(Err(now_seen)) => seen = now_seen,
                // Lost: a slot may have been taken and is wasted; claim again.
                Err(Error::OutcomeUnknown(_)) => seen = Seen::Unknown,
                Err(e) => return Err(e),
            }
        }
        Err(Error::InProgress(format!(
            "admission take slot: {MAX_WRITES} writes took no slot; come back"
        )))
    }

    async fn acquire(
        &self,
        pool: &str,
        holder: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> Result<Acquired, Error> {
        for _ in 0..MAX_RACES {
            let (read, lease) = self.pool(pool, holder).await?;
            let decided = acquire(
                read.unwrap_or(0),
                lease.as_ref(),
                holder,
                limit,
                now,
                lease_seconds,
            );
            let lease_put = |new: &Lease, condition: &str| {
                Put::builder()
                    .table_name(&self.table)
                    .item("pk", s(format!("pool#{pool}")))
                    .item("sk", s(format!("lease#{holder}")))
                    .item("holder", s(holder))
                    .item("until", n(new.until))
                    .condition_expression(condition)
                    .build()
                    .expect("table, item")
            };
            let written = match &decided {
                Acquired::Full { .. } => return Ok(decided),
                Acquired::Taken { held, lease: new } => {
                    let items = vec![
                        TransactWriteItem::builder()
                            .put(lease_put(new, "attribute_not_exists(sk)"))
                            .build(),
                        self.count_write(pool, read, *held),
                    ];
                    transact(&self.client, items, "admission acquire")
                        .await
                        .map(|r| r.is_ok())
                }
                Acquired::AlreadyHeld { lease: new } => {
                    let renew = Update::builder()
                        .table_name(&self.table)
                        .key("pk", s(format!("pool#{pool}")))
                        .key("sk", s(format!("lease#{holder}")))
                        .update_expression("SET #until = :until")
                        .condition_expression("attribute_exists(sk)")
                        .expression_attribute_names("#until", "until")
                        .expression_attribute_values(":until", n(new.until))
                        .build()
                        .expect("table, key, update");
                    let items = vec![TransactWriteItem::builder().update(renew).build()];
                    transact(&self.client, items, "admission renew")
                        .await
                        .map(|r| r.is_ok())
                }
            };
            if lost(written)? {
                return Ok(decided);
            }
        }
        Err(too_many_races("admission acquire"))
    }

    async fn release(&self, pool: &str, holder: &str) -> Result<Released, Error> {
        for _ in 0..MAX_RACES {
            let (read, lease) = self.pool(pool, holder).await?;
            let decided = release(read.unwrap_or(0), lease.as_ref(), holder);
            let (Released::Given { .. }, Some(lease), Some(read)) = (decided, &lease, read) else {
                return Ok(Released::NotHeld);
            };
            if lost(self.give_back(pool, lease, read).await)? {
                return Ok(decided);
            }
        }
        Err(too_many_races("admission release"))
    }

    async fn reclaim(&self, pool: &str, now: i64) -> Result<Vec<String>, Error> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .consistent_read(true)
            .key_condition_expression("pk = :pk AND begins_with(sk, :lease)")
            .expression_attribute_values(":pk", s(format!("pool#{pool}")))
            .expression_attribute_values(":lease", AttributeValue::S("lease#".into()));
        let leases = query_all(query, "admission leases")
            .await?
            .iter()
            .map(lease_of)
            .collect::<Result<Vec<_>, _>>()?;
        let mut reclaimed = Vec::new();
        for lease in reclaimable(&leases, now) {
            for race in 0..=MAX_RACES {
                if race == MAX_RACES {
                    return Err(too_many_races("admission reclaim"));
                }
                let (read, current) = self.pool(pool, &lease.holder).await?;
                // Given back or renewed meanwhile: not this sweep's to reclaim.
                if current.as_ref() != Some(lease) {
                    break;
                }
                if lost(self.give_back(pool, lease, read.unwrap_or(0)).await)? {
                    reclaimed.push(lease.holder.clone());
                    break;
                }
            }
        }
        Ok(reclaimed)
    }

    async fn quotas(&self, provider: &str) -> Result<Option<Quotas>, Error> {
        let pk = format!("quotas#{provider}");
        let Some(item) = self.get(&pk, "current", "admission read quotas").await? else {
            return Ok(None);
        };
        let json = req_str(&item, "quotas")?;
        serde_json::from_str(json)
            .map(Some)
            .map_err(|e| Error::Internal(format!("stored quotas of {provider}: {e}")))
    }

    async fn set_quotas(&self, provider: &str, quotas: &Quotas) -> Result<(), Error> {
        quotas.check()?;
        let json = serde_json::to_string(quotas).expect("quotas serialize");
        let put = Put::builder()
            .table_name(&self.table)
            .item("pk", s(format!("quotas#{provider}")))
            .item("sk", s("current"))
            .item("quotas", s(json))
            .build()
            .expect("table, item");
        put_item(&self.client, put, "admission set quotas")
            .await?
            .map_err(|_| Error::Internal("an unconditional put was refused".into()))
    }
}
