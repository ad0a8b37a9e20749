//! In-memory implementations of the ports, side by side with the AWS ones in `docket-aws`: the
//! same contracts (conditional writes, versions, idempotency tokens), for unit tests of the steps.
//! One file per port, as in [`crate::ports`].

mod admission;
mod blobs;
mod config;
mod ledger;
mod ocr;
mod payable;
mod review;
mod saga;
mod store;
mod workflow;

pub use admission::{MemoryAdmission, VirtualTimer};
pub use blobs::MemoryBlobs;
pub use config::MemoryConfigs;
pub use ledger::MemoryLedger;
pub use ocr::{FakeOcr, MemoryOcrWaits};
pub use payable::{accepted_event, MemoryPayable};
pub use review::MemoryReviewStore;
pub use saga::{
    failed_compensation, MemoryBus, MemoryJournal, MemoryOutbox, MemorySink, MemoryWaits,
};
pub use store::MemoryStore;
pub use workflow::{MemoryCallback, MemoryWorkflow};

use crate::config::PipelineConfig;
use crate::ids::{DocumentId, RunId, SourceVersion, Tenant};
use crate::ports::{
    HasBlobs, HasBulk, HasCallback, HasConfigs, HasDownstream, HasEvents, HasJournal, HasLedger,
    HasOcr, HasOcrWaits, HasOutbox, HasReviews, HasStore, HasWaits, HasWorkflow,
};
use crate::steps::{Clock, Context, Layout};

/// Every in-memory port in one bundle, as the unit tests hand it to the steps. The ledger, the
/// saga journals and the outbox are the store's: its `Change::Ledger`, `Change::Journal` and
/// `Change::Outbox` writes commit there.
#[derive(Debug, Default)]
pub struct MemoryPorts {
    /// Objects.
    pub blobs: MemoryBlobs,
    /// Runs, documents, audit chains, the ledger, the saga journals and the outbox.
    pub store: MemoryStore,
    /// OCR jobs.
    pub ocr: FakeOcr,
    /// The OCR Tasks' waits for their jobs.
    pub ocr_waits: MemoryOcrWaits,
    /// Executions.
    pub workflow: MemoryWorkflow,
    /// Bulk reprocess executions.
    pub bulk: MemoryWorkflow,
    /// Review tasks.
    pub reviews: MemoryReviewStore,
    /// Callbacks to waiting Tasks.
    pub callback: MemoryCallback,
    /// The event bus.
    pub events: MemoryBus,
    /// The downstream consumer.
    pub downstream: MemorySink,
    /// The receipt waits.
    pub waits: MemoryWaits,
    /// The published configs.
    pub configs: MemoryConfigs,
}

impl HasConfigs for MemoryPorts {
    type Configs = MemoryConfigs;
    fn configs(&self) -> &MemoryConfigs {
        &self.configs
    }
}

impl HasBlobs for MemoryPorts {
    type Blobs = MemoryBlobs;
    fn blobs(&self) -> &MemoryBlobs {
        &self.blobs
    }
}

impl HasStore for MemoryPorts {
    type Store = MemoryStore;
    fn store(&self) -> &MemoryStore {
        &self.store
    }
}

impl HasLedger for MemoryPorts {
    type Ledger = MemoryLedger;
    fn ledger(&self) -> &MemoryLedger {
        &self.store.ledger
    }
}

impl HasOcr for MemoryPorts {
    type Ocr = FakeOcr;
    fn ocr(&self) -> &FakeOcr {
        &self.ocr
    }
}

impl HasOcrWaits for MemoryPorts {
    type OcrWaits = MemoryOcrWaits;
    fn ocr_waits(&self) -> &MemoryOcrWaits {
        &self.ocr_waits
    }
}

impl HasWorkflow for MemoryPorts {
    type Workflow = MemoryWorkflow;
    fn workflow(&self) -> &MemoryWorkflow {
        &self.workflow
    }
}

impl HasBulk for MemoryPorts {
    type Bulk = MemoryWorkflow;
    fn bulk(&self) -> &MemoryWorkflow {
        &self.bulk
    }
}

impl HasReviews for MemoryPorts {
    type Reviews = MemoryReviewStore;
    fn reviews(&self) -> &MemoryReviewStore {
        &self.reviews
    }
}

impl HasCallback for MemoryPorts {
    type Callback = MemoryCallback;
    fn callback(&self) -> &MemoryCallback {
        &self.callback
    }
}

impl HasJournal for MemoryPorts {
    type Journal = MemoryJournal;
    fn journal(&self) -> &MemoryJournal {
        &self.store.journal
    }
}

impl HasOutbox for MemoryPorts {
    type Outbox = MemoryOutbox;
    fn outbox(&self) -> &MemoryOutbox {
        &self.store.outbox
    }
}

impl HasEvents for MemoryPorts {
    type Events = MemoryBus;
    fn events(&self) -> &MemoryBus {
        &self.events
    }
}

impl HasDownstream for MemoryPorts {
    type Downstream = MemorySink;
    fn downstream(&self) -> &MemorySink {
        &self.downstream
    }
}

impl HasWaits for MemoryPorts {
    type Waits = MemoryWaits;
    fn waits(&self) -> &MemoryWaits {
        &self.waits
    }
}

/// Run `version` of `tenant`'s `logical_key` (the file's hash fixed, the config `pconfig`,
/// generation 0), as tests name a run.
pub fn test_run(tenant: &Tenant, logical_key: &str, version: &str) -> RunId {
    let document = DocumentId::new(tenant, logical_key);
    let source = SourceVersion {
        version_id: version.into(),
        sha256: "ab".repeat(32),
    };
    RunId::new(&document, &source, "pconfig", 0)
}

/// The context the tests hand the steps: buckets named `raw`, `normalized` and `derived`, the
/// built-in config, the actor `docket/test`, and `clock`.
pub fn test_context(clock: Clock) -> Context {
    Context {
        layout: Layout {
            raw_bucket: "raw".into(),
            normalized_bucket: "normalized".into(),
            derived_bucket: "derived".into(),
        },
        config: PipelineConfig::builtin(),
        actor: "docket/test".into(),
        clock,
        ocr_wait_seconds: crate::steps::DEFAULT_OCR_WAIT_SECONDS,
        review_wait_seconds: crate::steps::DEFAULT_REVIEW_WAIT_SECONDS,
        reads: std::sync::Arc::new(crate::read_budget::ReadBudget::unbounded()),
    }
}
