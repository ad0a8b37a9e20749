//! What a test creates in local AWS besides the deployed stack (tables, buckets, functions, state
//! machines, stacks) is deleted when the test ends, so that a shared LocalStack does not fill up.
//!
//! A [`Resource`] is the unique name of one such resource, and its deletion: dropping it deletes
//! the resource, also when the test panics. A `#[tokio::test]` drops its locals while its runtime
//! is shutting down, so the deletion runs on a runtime of its own, on a thread of its own, and the
//! drop waits for it. Only a killed test process skips it: the names carry their creation time
//! (`docket-e2e-<unix seconds>-<label>-…`), and the first resource a test process makes in a
//! region sweeps the ones older than [`LEFTOVER_AGE`] there.

use std::collections::BTreeSet;
use std::fmt;
use std::ops::Deref;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_config::{Region, SdkConfig};
use aws_sdk_dynamodb::operation::create_table::builders::CreateTableFluentBuilder;
use aws_sdk_dynamodb::types::BillingMode;
use aws_sdk_s3::types::{BucketVersioningStatus, VersioningConfiguration};
use serde_json::Value;

use crate::util;

/// How every name of a test's resource starts.
pub const PREFIX: &str = "docket-e2e-";

/// A resource with [`PREFIX`] older than this is a leftover of a killed run: no test runs as long.
pub const LEFTOVER_AGE: Duration = Duration::from_secs(3600);

/// The role state machines are created with (LocalStack does not check it).
const STATE_MACHINE_ROLE: &str = "arn:aws:iam::000000000000:role/sfn";

/// The kinds of resources tests create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A DynamoDB table.
    Table,
    /// An S3 bucket (emptied before it is deleted).
    Bucket,
    /// A Lambda function (and its log group).
    Function,
    /// A Step Functions state machine.
    StateMachine,
    /// A CloudFormation stack.
    Stack,
}

const KINDS: [Kind; 5] = [
    Kind::Table,
    Kind::Bucket,
    Kind::Function,
    Kind::StateMachine,
    Kind::Stack,
];

/// The unique name of a resource a test creates; the resource is deleted when this drops.
///
/// It reads as the name (`&str`, `Display`, `Into<String>`), so SDK builders take `&resource`.
#[derive(Debug)]
pub struct Resource {
    kind: Kind,
    region: String,
    name: String,
    /// False once deleted explicitly.
    live: bool,
}

impl Resource {
    /// A fresh name for a resource of `kind` in `region` (the region of the client that creates
    /// it; every test config has one). The caller creates the resource under this name.
    pub async fn new(kind: Kind, region: Option<&Region>, label: &str) -> Resource {
        let region = region.expect("a region").to_string();
        sweep_once(&region).await;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        Resource {
            kind,
            region,
            name: util::unique(&format!("{PREFIX}{}-{label}", now.as_secs())),
            live: true,
        }
    }

    /// The resource's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Deletes the resource now, for a test that wants it gone before it ends.
    pub async fn delete(mut self) {
        self.live = false;
        let config = util::aws_in(&self.region).await;
        if let Err(e) = remove(self.kind, &config, &self.name).await {
            eprintln!("cleanup: {:?} {}: {e}", self.kind, self.name);
        }
    }
}

impl Drop for Resource {
    fn drop(&mut self) {
        if !self.live {
            return;
        }
        let (kind, region, name) = (self.kind, &self.region, &self.name);
        let deleted = util::block_on_aside(async {
            let config = util::aws_in(region).await;
            remove(kind, &config, name).await
        });
        match deleted {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("cleanup: {kind:?} {}: {e}", self.name),
            Err(_) => eprintln!("cleanup: {kind:?} {}: the deletion panicked", self.name),
        }
    }
}

impl Deref for Resource {
    type Target = str;

    fn deref(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl From<&Resource> for String {
    fn from(resource: &Resource) -> String {
        resource.name.clone()
    }
}

/// A fresh on-demand table made by `client`, its key schema and indexes set by `schema`.
pub async fn table(
    client: &aws_sdk_dynamodb::Client,
    label: &str,
    schema: impl FnOnce(CreateTableFluentBuilder) -> CreateTableFluentBuilder,
) -> Resource {
    let table = Resource::new(Kind::Table, client.config().region(), label).await;
    schema(client.create_table().table_name(&table))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap_or_else(|e| panic!("create table {table}: {e:?}"));
    table
}

/// A fresh empty bucket.
pub async fn bucket(config: &SdkConfig, label: &str) -> Resource {
    let bucket = Resource::new(Kind::Bucket, config.region(), label).await;
    util::s3(config)
        .create_bucket()
        .bucket(&bucket)
        .send()
        .await
        .unwrap_or_else(|e| panic!("create bucket {bucket}: {e:?}"));
    bucket
}

/// A fresh empty bucket that keeps every version of an object, as the stack's raw bucket does.
pub async fn versioned_bucket(config: &SdkConfig, label: &str) -> Resource {
    let bucket = bucket(config, label).await;
    util::s3(config)
        .put_bucket_versioning()
        .bucket(&*bucket)
        .versioning_configuration(
            VersioningConfiguration::builder()
                .status(BucketVersioningStatus::Enabled)
                .build(),
        )
        .send()
        .await
        .unwrap_or_else(|e| panic!("version bucket {bucket}: {e:?}"));
    bucket
}

/// A fresh state machine with `definition`; returns it and its ARN.
pub async fn state_machine(
    config: &SdkConfig,
    label: &str,
    definition: &Value,
) -> (Resource, String) {
    let machine = Resource::new(Kind::StateMachine, config.region(), label).await;
    let created = aws_sdk_sfn::Client::new(config)
        .create_state_machine()
        .name(&machine)
        .role_arn(STATE_MACHINE_ROLE)
        .definition(definition.to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("create state machine {machine}: {e:?}"));
    let arn = created.state_machine_arn().to_string();
    (machine, arn)
}

/// Deletes the resource `name` of `kind`.
async fn remove(kind: Kind, config: &SdkConfig, name: &str) -> Result<(), String> {
    match kind {
        Kind::Table => {
            let dynamodb = aws_sdk_dynamodb::Client::new(config);
            let deleted = dynamodb.delete_table().table_name(name).send().await;
            deleted.map(drop).map_err(debug)
        }
        Kind::Bucket => {
            let s3 = util::s3(config);
            let mut pages = s3.list_objects_v2().bucket(name).into_paginator().send();
            while let Some(page) = pages.try_next().await.map_err(debug)? {
                for key in page.contents().iter().filter_map(|o| o.key()) {
                    let deleted = s3.delete_object().bucket(name).key(key).send().await;
                    deleted.map_err(debug)?;
                }
            }
            let deleted = s3.delete_bucket().bucket(name).send().await;
            deleted.map(drop).map_err(debug)
        }
        Kind::Function => {
            let lambda = aws_sdk_lambda::Client::new(config);
            let deleted = lambda.delete_function().function_name(name).send().await;
            // The log group exists only if the function ran.
            let _ = aws_sdk_cloudwatchlogs::Client::new(config)
                .delete_log_group()
                .log_group_name(format!("/aws/lambda/{name}"))
                .send()
                .await;
            deleted.map(drop).map_err(debug)
        }
        Kind::StateMachine => {
            let sfn = aws_sdk_sfn::Client::new(config);
            let machines = state_machines(&sfn).await?;
            let Some((_, arn)) = machines.iter().find(|(n, _)| n == name) else {
                return Ok(());
            };
            let deleted = sfn
                .delete_state_machine()
                .state_machine_arn(arn)
                .send()
                .await;
            deleted.map(drop).map_err(debug)
        }
        Kind::Stack => {
            let cfn = aws_sdk_cloudformation::Client::new(config);
            let deleted = cfn.delete_stack().stack_name(name).send().await;
            deleted.map(drop).map_err(debug)
        }
    }
}

/// The names of every resource of `kind` in the region of `config`.
async fn names(kind: Kind, config: &SdkConfig) -> Result<Vec<String>, String> {
    let owned = |s: Option<&str>| s.map(str::to_string);
    Ok(match kind {
        Kind::Table => {
            let dynamodb = aws_sdk_dynamodb::Client::new(config);
            let pages = dynamodb.list_tables().into_paginator().items().send();
            pages.collect::<Result<_, _>>().await.map_err(debug)?
        }
        Kind::Bucket => {
            let listed = util::s3(config).list_buckets().send().await;
            let buckets = listed.map_err(debug)?;
            buckets
                .buckets()
                .iter()
                .filter_map(|b| owned(b.name()))
                .collect()
        }
        Kind::Function => {
            let lambda = aws_sdk_lambda::Client::new(config);
            let pages = lambda.list_functions().into_paginator().items().send();
            let functions: Vec<_> = pages.collect::<Result<_, _>>().await.map_err(debug)?;
            functions
                .iter()
                .filter_map(|f| owned(f.function_name()))
                .collect()
        }
        Kind::StateMachine => {
            let sfn = aws_sdk_sfn::Client::new(config);
            let machines = state_machines(&sfn).await?;
            machines.into_iter().map(|(name, _)| name).collect()
        }
        Kind::Stack => {
            let cfn = aws_sdk_cloudformation::Client::new(config);
            let pages = cfn.describe_stacks().into_paginator().items().send();
            let stacks: Vec<_> = pages.collect::<Result<_, _>>().await.map_err(debug)?;
            stacks
                .iter()
                .filter_map(|s| owned(s.stack_name()))
                .collect()
        }
    })
}

/// Every state machine as (name, ARN).
async fn state_machines(sfn: &aws_sdk_sfn::Client) -> Result<Vec<(String, String)>, String> {
    let pages = sfn.list_state_machines().into_paginator().items().send();
    let machines: Vec<_> = pages.collect::<Result<_, _>>().await.map_err(debug)?;
    Ok(machines
        .iter()
        .map(|m| (m.name().to_string(), m.state_machine_arn().to_string()))
        .collect())
}

fn debug(e: impl fmt::Debug) -> String {
    format!("{e:?}")
}

/// Whether `name` is a test resource's made more than [`LEFTOVER_AGE`] ago.
fn is_leftover(name: &str, now: Duration) -> bool {
    let made = name
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(secs, _)| secs.parse().ok())
        .map(Duration::from_secs);
    made.is_some_and(|made| now.saturating_sub(made) > LEFTOVER_AGE)
}

/// Deletes the leftovers in `region`, once per test process (the first caller sweeps; the
/// others go on: a leftover is no resource of theirs).
async fn sweep_once(region: &str) {
    static SWEPT: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    if !SWEPT.lock().unwrap().insert(region.to_string()) {
        return;
    }
    let config = util::aws_in(region).await;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    for kind in KINDS {
        let found = match names(kind, &config).await {
            Ok(found) => found,
            Err(e) => {
                eprintln!("cleanup: listing {kind:?} in {region}: {e}");
                continue;
            }
        };
        for name in found.iter().filter(|n| is_leftover(n, now)) {
            if let Err(e) = remove(kind, &config, name).await {
                eprintln!("cleanup: leftover {kind:?} {name}: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_names_with_the_prefix_are_leftovers() {
        let now = Duration::from_secs(1_800_000_000);
        let made = |secs: u64| format!("{PREFIX}{secs}-ledger-1a2b3c-0");

        assert!(is_leftover(&made(1_800_000_000 - 3_601), now));
        assert!(!is_leftover(&made(1_800_000_000 - 3_599), now));
        assert!(!is_leftover(&made(1_800_000_000 + 5), now));
        assert!(!is_leftover("ledger-1a2b3c-0", now));
        assert!(!is_leftover("docket-e2e-ledger-1a2b3c-0", now));
    }
}
