//! [`Admission`] on DynamoDB: one table keyed by `pk` and `sk` (both strings).
//!
//! - A pacer is one item, `pk = pacer#<name>`, `sk = state`, with `nextMs`: taking a slot is
//!   one `UpdateItem` per [`docket_core::admission::pacer::claim`], its condition the claim's
//!   (advance: `SET nextMs = nextMs + :interval` if `nextMs BETWEEN :now AND :horizon`,
//!   returning the old `nextMs`, the slot; restart: `SET nextMs = :next` if there is no item
//!   or `nextMs < :now`). A refusal returns the item (`ALL_OLD`), from which the next claim is
//!   chosen; no read comes first. The first claim is chosen from the last `nextMs` this process
//!   saw (it only grows, so that is a lower bound): a warm function that finds the pacer as it
//!   left it writes once, whether busy or idle. A write whose answer was lost may have taken a slot
//!   no one uses, which only wastes it: the caller claims again.
//! - A slot pool is a partition `pk = pool#<name>`: the count (`sk = count`, `held`) and one
//!   lease per holder (`sk = lease#<holder>`, `holder`, `until`). Taking a slot is one
//!   transaction, with no read first: put the lease if the holder has none, and add one to the
//!   count if it is below the limit. Which condition refused is the decision
//!   ([`docket_core::admission::slots::acquire`]): the lease, a retry of a holder (its lease is
//!   renewed); the count, every slot held. Giving back is one transaction too: delete the lease
//!   if it is there and take one from the count. Reclaiming queries the partition's leases and
//!   gives back each run-out one conditional on its `until` as read (a renewed one is kept).
//!
//! - A provider's quotas (`docket ops quotas`) are one item, `pk = quotas#<provider>`,
//!   `sk = current`, the [`Quotas`] as JSON in `quotas`; read at each admitted call.
//!
//! A pool's write whose answer was lost is sent again (these writes are idempotent per holder:
//! the second finds the lease), at most [`MAX_RACES`] times; past that (or past a pacer's
//! [`MAX_WRITES`]) the caller is told to come back (`Transient.InProgress`). A transaction
//! cancelled for another reason (on AWS, `TransactionConflict` with a concurrent one on the
//! count) is `Transient.Dependency`, which the step retries with backoff.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, Delete, Put, ReturnValue, ReturnValuesOnConditionCheckFailure,
    TransactWriteItem, Update,
};
use aws_sdk_dynamodb::Client;
use docket_core::admission::pacer::{claim, Claim, Pace, Seen, Taken, MAX_WRITES};
use docket_core::admission::slots::{reclaimable, Acquired, Lease, Released};
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

/// How often a pool's write whose answer was lost is sent again, before the caller is told to
/// come back.
pub const MAX_RACES: usize = 20;

/// Pacers and slot pools in the DynamoDB table `table`.
#[derive(Debug, Clone)]
pub struct DynamoAdmission {
    client: Client,
    table: String,
    /// The last `nextMs` seen of each pacer, by this process (a warm Lambda's): the first claim
    /// is chosen from it, so a caller that finds the pacer as it was left writes once.
    seen: Arc<Mutex<HashMap<String, i64>>>,
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
            seen: Arc::default(),
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

    fn lease_key(pool: &str, holder: &str) -> (AttributeValue, AttributeValue) {
        (s(format!("pool#{pool}")), s(format!("lease#{holder}")))
    }

    /// The count item one higher while it is below `limit` (`Some`), or one lower while it is
    /// above zero (`None`): the condition follows from the direction, never from its text.
    fn count_update(&self, pool: &str, limit: Option<u32>) -> TransactWriteItem {
        let update = Update::builder()
            .table_name(&self.table)
            .key("pk", s(format!("pool#{pool}")))
            .key("sk", s("count"))
            .update_expression("SET held = if_not_exists(held, :zero) + :delta")
            .expression_attribute_values(":zero", n(0));
        let update = match limit {
            Some(limit) => update
                .condition_expression("attribute_not_exists(held) OR held < :limit")
                .expression_attribute_values(":delta", n(1))
                .expression_attribute_values(":limit", n(limit)),
            None => update
                .condition_expression("held > :zero")
                .expression_attribute_values(":delta", n(-1)),
        };
        TransactWriteItem::builder()
            .update(update.build().expect("table, key, update"))
            .build()
    }

    /// Gives `holder`'s slot back in one transaction: its lease deleted (if `until` is given,
    /// only while it still runs out then: a renewed one is kept) and the count one lower.
    /// `Ok(false)`: there was no such lease.
    async fn give_back(&self, pool: &str, holder: &str, until: Option<i64>) -> Result<bool, Error> {
        let (pk, sk) = Self::lease_key(pool, holder);
        let delete = Delete::builder()
            .table_name(&self.table)
            .key("pk", pk)
            .key("sk", sk);
        let delete = match until {
            None => delete.condition_expression("attribute_exists(sk)"),
            Some(until) => delete
                .condition_expression("#until = :until")
                .expression_attribute_names("#until", "until")
                .expression_attribute_values(":until", n(until)),
        };
        let items = vec![
            TransactWriteItem::builder()
                .delete(delete.build().expect("table, key"))
                .build(),
            self.count_update(pool, None),
        ];
        for _ in 0..MAX_RACES {
            match transact(&self.client, items.clone(), "admission give back").await {
                Ok(Ok(())) => return Ok(true),
                Ok(Err(0)) => return Ok(false),
                Ok(Err(_)) => {
                    return Err(Error::Internal(format!(
                        "pool {pool}: a lease of {holder} is held but the count is 0"
                    )))
                }
                // Lost: sent again; if the first landed, the lease is gone (given back).
                Err(Error::OutcomeUnknown(_)) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(too_many_races("admission give back"))
    }

    /// Renews `holder`'s lease to `until`; `Ok(false)` when it has none (given back meanwhile).
    async fn renew(&self, pool: &str, holder: &str, until: i64) -> Result<bool, Error> {
        let (pk, sk) = Self::lease_key(pool, holder);
        let renew = Update::builder()
            .table_name(&self.table)
            .key("pk", pk)
            .key("sk", sk)
            .update_expression("SET #until = :until")
            .condition_expression("attribute_exists(sk)")
            .expression_attribute_names("#until", "until")
            .expression_attribute_values(":until", n(until))
            .build()
            .expect("table, key, update");
        let items = vec![TransactWriteItem::builder().update(renew).build()];
        Ok(transact(&self.client, items, "admission renew")
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

impl Admission for DynamoAdmission {
    async fn take_slot(&self, pacer: &str, pace: &Pace, now_ms: i64) -> Result<Taken, Error> {
        // `nextMs` only grows, so one seen before is a lower bound: safe to claim from.
        let remembered = self.seen.lock().unwrap().get(pacer).copied();
        let remember = |next: i64| {
            let mut seen = self.seen.lock().unwrap();
            let last = seen.entry(pacer.to_string()).or_insert(next);
            *last = (*last).max(next);
        };
        let mut seen = remembered.map_or(Seen::Unknown, Seen::Next);
        for _ in 0..MAX_WRITES {
            let claimed = match claim(seen, pace, now_ms) {
                Ok(claimed) => claimed,
                Err(busy) => return Ok(busy),
            };
            match self.claim_slot(pacer, &claimed).await {
                Ok(Ok(at_ms)) => {
                    remember(at_ms + pace.interval_ms);
                    return Ok(Taken::Slot { at_ms });
                }
                Ok(Err(now_seen)) => {
                    if let Seen::Next(next) = now_seen {
                        remember(next);
                    }
                    seen = now_seen;
                }
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
        let lease = Lease {
            holder: holder.to_string(),
            until: now + lease_seconds,
        };
        let (pk, sk) = Self::lease_key(pool, holder);
        let put = Put::builder()
            .table_name(&self.table)
            .item("pk", pk)
            .item("sk", sk)
            .item("holder", s(holder))
            .item("until", n(lease.until))
            .condition_expression("attribute_not_exists(sk)")
            .build()
            .expect("table, item");
        let items = vec![
            TransactWriteItem::builder().put(put).build(),
            self.count_update(pool, Some(limit)),
        ];
        for _ in 0..MAX_RACES {
            match transact(&self.client, items.clone(), "admission acquire").await {
                Ok(Ok(())) => return Ok(Acquired::Taken { lease }),
                // The holder's lease is there (a retry, or a lost answer that landed): renew it.
                Ok(Err(0)) => {
                    if self.renew(pool, holder, lease.until).await? {
                        return Ok(Acquired::AlreadyHeld { lease });
                    }
                    // Given back meanwhile: take a slot again.
                }
                Ok(Err(_)) => return Ok(Acquired::Full { held: limit }),
                Err(Error::OutcomeUnknown(_)) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(too_many_races("admission acquire"))
    }

    async fn release(&self, pool: &str, holder: &str) -> Result<Released, Error> {
        Ok(match self.give_back(pool, holder, None).await? {
            true => Released::Given,
            false => Released::NotHeld,
        })
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
            // Given back or renewed meanwhile: not this sweep's to reclaim.
            if self
                .give_back(pool, &lease.holder, Some(lease.until))
                .await?
            {
                reclaimed.push(lease.holder.clone());
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
