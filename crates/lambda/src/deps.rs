//! What the steps need, built once per execution environment from the function's environment
//! variables: the adapters every function shares, and the ones only some have.

use std::sync::Arc;

use aws_config::SdkConfig;
use docket_aws::admission::{DynamoAdmission, SystemTimer};
use docket_aws::config::DynamoConfigs;
use docket_aws::downstream::LambdaDownstream;
use docket_aws::dynamodb::DynamoStore;
use docket_aws::events::EventBridgeBus;
use docket_aws::ledger::DynamoLedger;
use docket_aws::ocr_waits::DynamoOcrWaits;
use docket_aws::review::DynamoReviewStore;
use docket_aws::s3::S3Blobs;
use docket_aws::saga::{DynamoJournal, DynamoOutbox, DynamoWaits};
use docket_aws::sfn::{SfnCallback, SfnWorkflow};
use docket_aws::sqs::QueuedEvents;
use docket_aws::textract::TextractOcr;
use docket_aws::{env, Faults};
use docket_core::admitted::starts::PacedStarts;
use docket_core::admitted::{AdmittedOcr, Rules};
use docket_core::config::PipelineConfig;
use docket_core::ports::{
    HasBlobs, HasBulk, HasCallback, HasConfigs, HasDownstream, HasEvents, HasJournal, HasLedger,
    HasOcr, HasOcrWaits, HasOutbox, HasReviews, HasStore, HasWaits, HasWorkflow,
};
use docket_core::read_budget::ReadBudget;
use docket_core::steps::{
    Clock, Context, Layout, DEFAULT_OCR_WAIT_SECONDS, DEFAULT_REVIEW_WAIT_SECONDS,
};
use docket_core::Error;

/// The adapters and context of a function. `X` is what only this function has (see [`Extra`]),
/// so that a function needs no environment variable for an adapter it does not use.
pub struct Deps<X = ()> {
    /// S3.
    pub blobs: S3Blobs,
    /// DynamoDB.
    pub store: DynamoStore,
    /// The operation ledger (its table is also the store's, for `Change::Ledger` writes).
    pub ledger: DynamoLedger,
    /// The published pipeline configs (`CONFIG_TABLE`), each kept once read: a run's steps run
    /// under the config the run started under, read from here when it is not this function's.
    pub configs: DynamoConfigs,
    /// Layout, the deployed pipeline config (the one built in, which must be the stack's
    /// `CONFIG_FINGERPRINT`: new runs start under it), actor, clock.
    pub ctx: Context,
    /// This function's own adapters.
    pub extra: X,
}

/// Adapters only some functions have, built from their own environment variables.
pub trait Extra: Sized {
    /// Builds them on `sdk`, with the process's injected `faults`; a DynamoDB adapter shares
    /// `store`'s client.
    fn from_env(sdk: &SdkConfig, faults: &Faults, store: &DynamoStore) -> Result<Self, Error>;
}

impl Extra for () {
    fn from_env(_: &SdkConfig, _: &Faults, _: &DynamoStore) -> Result<(), Error> {
        Ok(())
    }
}

/// reprocess starts executions of `STATE_MACHINE_ARN` (ingest too, paced: [`Ingest`]).
impl Extra for SfnWorkflow {
    fn from_env(sdk: &SdkConfig, faults: &Faults, _: &DynamoStore) -> Result<Self, Error> {
        Ok(SfnWorkflow::with_faults(
            sdk,
            env("STATE_MACHINE_ARN")?,
            faults,
        ))
    }
}

/// What ingest has: executions started at the pace OCR admits them, and its queue.
pub struct Ingest {
    /// `STATE_MACHINE_ARN`'s executions, each start paced through `ADMISSION_TABLE`.
    pub workflow: PacedStarts<SfnWorkflow, DynamoAdmission, SystemTimer>,
    /// `INGEST_QUEUE_URL`, its failures set aside on `INGEST_FAILURE_QUEUE_URL`.
    pub queue: QueuedEvents,
}

impl Extra for Ingest {
    fn from_env(sdk: &SdkConfig, faults: &Faults, store: &DynamoStore) -> Result<Self, Error> {
        let admission = DynamoAdmission::new(store.client().clone(), env("ADMISSION_TABLE")?);
        let workflow = <SfnWorkflow as Extra>::from_env(sdk, faults, store)?;
        let (queue, failures) = (env("INGEST_QUEUE_URL")?, env("INGEST_FAILURE_QUEUE_URL")?);
        Ok(Ingest {
            workflow: PacedStarts::new(workflow, admission, SystemTimer, Rules::textract()),
            queue: QueuedEvents::with_faults(sdk, queue, failures, faults),
        })
    }
}

/// Textract, each call admitted under its quotas through the table `ADMISSION_TABLE`.
pub type Textract = AdmittedOcr<TextractOcr, DynamoAdmission, SystemTimer>;

/// What the OCR functions have (ocr, which starts a run's job and waits; ocr-notified, which
/// ends the wait when the job's end is notified): Textract through admission, its jobs
/// notifying SNS topic `OCR_TOPIC_ARN` as `TEXTRACT_PUBLISH_ROLE_ARN`; the waits
/// (`OCR_WAITS_TABLE`); the callback that ends a wait.
pub struct OcrFns {
    /// Textract, each call admitted under its quotas through the table `ADMISSION_TABLE`.
    pub textract: Textract,
    /// The runs' OCR waits.
    pub waits: DynamoOcrWaits,
    /// Step Functions' SendTaskSuccess/SendTaskFailure.
    pub callback: SfnCallback,
}

impl Extra for OcrFns {
    fn from_env(sdk: &SdkConfig, faults: &Faults, store: &DynamoStore) -> Result<Self, Error> {
        let client = store.client();
        let admission = DynamoAdmission::new(client.clone(), env("ADMISSION_TABLE")?);
        let textract = TextractOcr::with_faults(sdk, faults)
            .notifying(&env("OCR_TOPIC_ARN")?, &env("TEXTRACT_PUBLISH_ROLE_ARN")?)?;
        Ok(OcrFns {
            textract: AdmittedOcr::new(textract, admission, SystemTimer, Rules::textract()),
            waits: DynamoOcrWaits::new(client.clone(), env("OCR_WAITS_TABLE")?),
            callback: SfnCallback::with_faults(sdk, faults),
        })
    }
}

/// What the review functions have: the tasks and the callback to the waiting execution.
pub struct Review {
    /// The review tasks (`REVIEW_TABLE`).
    pub reviews: DynamoReviewStore,
    /// `SendTaskSuccess` / `SendTaskFailure`.
    pub callback: SfnCallback,
}

impl Extra for Review {
    fn from_env(sdk: &SdkConfig, faults: &Faults, _: &DynamoStore) -> Result<Self, Error> {
        Ok(Review {
            reviews: DynamoReviewStore::with_faults(sdk, env("REVIEW_TABLE")?, faults),
            callback: SfnCallback::with_faults(sdk, faults),
        })
    }
}

/// What review-api has: review's adapters, and the bulk reprocess state machine
/// (`BULK_REPROCESS_ARN`) it starts for a verified operator (`POST /reprocesses`).
pub struct ReviewApi {
    /// The review tasks and the callback.
    pub review: Review,
    /// Executions of the bulk reprocess state machine.
    pub bulk: SfnWorkflow,
}

impl Extra for ReviewApi {
    fn from_env(sdk: &SdkConfig, faults: &Faults, store: &DynamoStore) -> Result<Self, Error> {
        Ok(ReviewApi {
            review: Review::from_env(sdk, faults, store)?,
            bulk: SfnWorkflow::with_faults(sdk, env("BULK_REPROCESS_ARN")?, faults),
        })
    }
}

/// What the functions that run the saga share: the journal and the outbox (their tables are
/// also the store's, for the writes committed with an audit entry) and the bus events are
/// published on.
pub struct Saga {
    /// `SAGA_JOURNAL_TABLE`.
    pub journal: DynamoJournal,
    /// `OUTBOX_TABLE`.
    pub outbox: DynamoOutbox,
    /// `EVENT_BUS_NAME`.
    pub events: EventBridgeBus,
}

impl Extra for Saga {
    fn from_env(sdk: &SdkConfig, faults: &Faults, store: &DynamoStore) -> Result<Self, Error> {
        let tables = store.saga().ok_or_else(|| {
            Error::Internal("the saga needs SAGA_JOURNAL_TABLE and OUTBOX_TABLE".into())
        })?;
        let client = store.client();
        Ok(Saga {
            journal: DynamoJournal::new(client.clone(), &tables.journal),
            outbox: DynamoOutbox::new(client.clone(), &tables.outbox),
            events: EventBridgeBus::with_faults(sdk, env("EVENT_BUS_NAME")?, faults),
        })
    }
}

/// A function's own adapters that include the saga's.
pub trait WithSaga {
    /// The saga's adapters.
    fn saga(&self) -> &Saga;
}

/// What route has: the saga, the receipt waits and the callback that ends a wait.
pub struct Route {
    /// The saga's adapters.
    pub saga: Saga,
    /// `RECEIPT_WAITS_TABLE`.
    pub waits: DynamoWaits,
    /// Step Functions' SendTaskSuccess/SendTaskFailure.
    pub callback: SfnCallback,
    /// `REVIEW_TABLE`, read only for the oldest pending task's age (the sweep's metric).
    pub reviews: DynamoReviewStore,
}

impl Extra for Route {
    fn from_env(sdk: &SdkConfig, faults: &Faults, store: &DynamoStore) -> Result<Self, Error> {
        Ok(Route {
            saga: Saga::from_env(sdk, faults, store)?,
            waits: DynamoWaits::new(store.client().clone(), env("RECEIPT_WAITS_TABLE")?),
            callback: SfnCallback::with_faults(sdk, faults),
            reviews: DynamoReviewStore::with_faults(sdk, env("REVIEW_TABLE")?, faults),
        })
    }
}

impl WithSaga for Route {
    fn saga(&self) -> &Saga {
        &self.saga
    }
}

/// What compensate has: the saga, and the consumer it asks by ids.
pub struct Compensation {
    /// The saga's adapters.
    pub saga: Saga,
    /// `DOWNSTREAM_FUNCTION`: the consumer's function.
    pub downstream: LambdaDownstream,
}

impl Extra for Compensation {
    fn from_env(sdk: &SdkConfig, faults: &Faults, store: &DynamoStore) -> Result<Self, Error> {
        Ok(Compensation {
            saga: Saga::from_env(sdk, faults, store)?,
            downstream: LambdaDownstream::with_faults(sdk, env("DOWNSTREAM_FUNCTION")?, faults),
        })
    }
}

impl WithSaga for Compensation {
    fn saga(&self) -> &Saga {
        &self.saga
    }
}

impl<X: Extra> Deps<X> {
    /// From the environment: `RAW_BUCKET`, `NORMALIZED_BUCKET`, `DERIVED_BUCKET`, the table
    /// names, `CONFIG_TABLE`, `CONFIG_FINGERPRINT` (the config the stack deployed: the one built
    /// into this function, or it refuses to start, `Fatal.Internal`), `DOCKET_ACTOR` (default
    /// `docket/<function name>`), what `X` reads, and the SDK fault injection of
    /// `docket_aws::faults` when (and only when) `DOCKET_FAULT_INJECTION=1`. No request is
    /// sent: a cold start cannot fail on a throttled dependency (the first read of another
    /// config happens in an invocation, where its failure is classified and retried).
    pub async fn from_env() -> Result<Self, Error> {
        let sdk = docket_aws::load_config().await;
        let actor = std::env::var("DOCKET_ACTOR").unwrap_or_else(|_| {
            format!(
                "docket/{}",
                std::env::var("AWS_LAMBDA_FUNCTION_NAME").unwrap_or_else(|_| "unknown".into())
            )
        });
        let faults = docket_aws::configured_faults()?;
        let from_env = DynamoStore::from_env(&sdk)?;
        let store = DynamoStore::with_faults(&sdk, from_env.tables().clone(), &faults);
        let configs = DynamoConfigs::new(store.client().clone(), env("CONFIG_TABLE")?);
        let config = deployed_config(&env("CONFIG_FINGERPRINT")?)?;
        let ctx = Context {
            layout: Layout {
                raw_bucket: env("RAW_BUCKET")?,
                normalized_bucket: env("NORMALIZED_BUCKET")?,
                derived_bucket: env("DERIVED_BUCKET")?,
            },
            actor,
            clock: Clock::System,
            ocr_wait_seconds: seconds_env("OCR_WAIT_SECONDS", DEFAULT_OCR_WAIT_SECONDS)?,
            review_wait_seconds: seconds_env("REVIEW_WAIT_SECONDS", DEFAULT_REVIEW_WAIT_SECONDS)?,
            reads: Arc::new(ReadBudget::for_memory(
                memory_mib()?,
                config.limits.max_document_bytes,
            )),
            config,
        };
        let store = match from_env.saga() {
            Some(saga) => store.with_saga(saga.clone()),
            None => store,
        };
        Ok(Deps {
            blobs: S3Blobs::with_faults(&sdk, &faults),
            ledger: DynamoLedger::new(store.client().clone(), &store.tables().ledger),
            extra: X::from_env(&sdk, &faults, &store)?,
            store,
            configs,
            ctx,
        })
    }
}

// The ports the steps take (`docket_core::ports::Has*`): the shared adapters for every function,
// each function's own ones from its `X`.

impl<X: Sync> HasBlobs for Deps<X> {
    type Blobs = S3Blobs;
    fn blobs(&self) -> &S3Blobs {
        &self.blobs
    }
}

impl<X: Sync> HasStore for Deps<X> {
    type Store = DynamoStore;
    fn store(&self) -> &DynamoStore {
        &self.store
    }
}

/// A wait of the execution input, from `name` (the functions that start runs have it), or
/// `default`.
fn seconds_env(name: &str, default: u32) -> Result<u32, Error> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(s) => s
            .parse()
            .map_err(|_| Error::Internal(format!("{name} is not a number of seconds: {s:?}"))),
    }
}

/// The function's memory in MiB (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, which Lambda and the local
/// executor set; 128, Lambda's smallest and default, outside either).
fn memory_mib() -> Result<u64, Error> {
    match std::env::var("AWS_LAMBDA_FUNCTION_MEMORY_SIZE") {
        Err(_) => Ok(128),
        Ok(s) => s.parse().map_err(|_| {
            Error::Internal(format!(
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE is not a size: {s:?}"
            ))
        }),
    }
}

/// The built-in config, which must be the one the stack deployed (`deployed`, its fingerprint):
/// the deploy publishes `config/pipeline.json` and deploys functions built from the same tree.
fn deployed_config(deployed: &str) -> Result<PipelineConfig, Error> {
    let config = PipelineConfig::builtin();
    match config.fingerprint() {
        built if built == deployed => Ok(config),
        built => Err(Error::Internal(format!(
            "this function was built with config {built}, the stack deployed {deployed}: deploy \
             the functions and the config together (scripts/deploy.sh)"
        ))),
    }
}

impl<X: Sync> HasConfigs for Deps<X> {
    type Configs = DynamoConfigs;
    fn configs(&self) -> &DynamoConfigs {
        &self.configs
    }
}

impl<X: Sync> HasLedger for Deps<X> {
    type Ledger = DynamoLedger;
    fn ledger(&self) -> &DynamoLedger {
        &self.ledger
    }
}

impl HasOcr for Deps<OcrFns> {
    type Ocr = Textract;
    fn ocr(&self) -> &Textract {
        &self.extra.textract
    }
}

impl HasOcrWaits for Deps<OcrFns> {
    type OcrWaits = DynamoOcrWaits;
    fn ocr_waits(&self) -> &DynamoOcrWaits {
        &self.extra.waits
    }
}

impl HasCallback for Deps<OcrFns> {
    type Callback = SfnCallback;
    fn callback(&self) -> &SfnCallback {
        &self.extra.callback
    }
}

impl HasWorkflow for Deps<Ingest> {
    type Workflow = PacedStarts<SfnWorkflow, DynamoAdmission, SystemTimer>;
    fn workflow(&self) -> &Self::Workflow {
        &self.extra.workflow
    }
}

impl HasWorkflow for Deps<SfnWorkflow> {
    type Workflow = SfnWorkflow;
    fn workflow(&self) -> &SfnWorkflow {
        &self.extra
    }
}

/// Adapters that carry review's (`Review`, and `ReviewApi` around it): one impl of
/// `HasReviews` and `HasCallback` serves both.
pub trait WithReview: Send + Sync {
    /// The review tasks and the callback.
    fn review(&self) -> &Review;
}

impl WithReview for Review {
    fn review(&self) -> &Review {
        self
    }
}

impl WithReview for ReviewApi {
    fn review(&self) -> &Review {
        &self.review
    }
}

impl<X: WithReview> HasReviews for Deps<X> {
    type Reviews = DynamoReviewStore;
    fn reviews(&self) -> &DynamoReviewStore {
        &self.extra.review().reviews
    }
}

impl<X: WithReview> HasCallback for Deps<X> {
    type Callback = SfnCallback;
    fn callback(&self) -> &SfnCallback {
        &self.extra.review().callback
    }
}

impl HasBulk for Deps<ReviewApi> {
    type Bulk = SfnWorkflow;
    fn bulk(&self) -> &SfnWorkflow {
        &self.extra.bulk
    }
}

impl<X: WithSaga + Sync> HasJournal for Deps<X> {
    type Journal = DynamoJournal;
    fn journal(&self) -> &DynamoJournal {
        &self.extra.saga().journal
    }
}

impl<X: WithSaga + Sync> HasOutbox for Deps<X> {
    type Outbox = DynamoOutbox;
    fn outbox(&self) -> &DynamoOutbox {
        &self.extra.saga().outbox
    }
}

impl<X: WithSaga + Sync> HasEvents for Deps<X> {
    type Events = EventBridgeBus;
    fn events(&self) -> &EventBridgeBus {
        &self.extra.saga().events
    }
}

impl HasWaits for Deps<Route> {
    type Waits = DynamoWaits;
    fn waits(&self) -> &DynamoWaits {
        &self.extra.waits
    }
}

impl HasReviews for Deps<Route> {
    type Reviews = DynamoReviewStore;
    fn reviews(&self) -> &DynamoReviewStore {
        &self.extra.reviews
    }
}

impl HasCallback for Deps<Route> {
    type Callback = SfnCallback;
    fn callback(&self) -> &SfnCallback {
        &self.extra.callback
    }
}

impl HasDownstream for Deps<Compensation> {
    type Downstream = LambdaDownstream;
    fn downstream(&self) -> &LambdaDownstream {
        &self.extra.downstream
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_starts_only_under_the_config_the_stack_deployed() {
        let built = PipelineConfig::builtin().fingerprint();
        assert_eq!(deployed_config(&built).unwrap().fingerprint(), built);
        let other = deployed_config("cfg-0000000000000000").unwrap_err();
        assert_eq!(other.name(), "Fatal.Internal");
        assert!(other.to_string().contains(&built), "{other}");
    }
}
