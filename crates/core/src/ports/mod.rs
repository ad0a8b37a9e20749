//! The narrow ports the steps are written against, one file each. Each returns docket's own
//! types; the AWS adapters (crate `docket-aws`) and the in-memory ones ([`crate::memory`])
//! implement them. Everything is re-exported here: `docket_core::ports::Store`, etc. A step takes
//! its ports as one bundle through the `Has*` accessor traits (`bundle.rs`).

mod admission;
mod blobs;
mod bundle;
mod config;
mod ledger;
mod ocr;
mod payable;
mod review;
mod saga;
mod store;
mod workflow;

pub use admission::{Admission, Timer};
pub use blobs::{BlobStore, ObjectMeta};
pub use bundle::{
    HasBlobs, HasBulk, HasCallback, HasConfigs, HasDownstream, HasEvents, HasJournal, HasLedger,
    HasOcr, HasOcrWaits, HasOutbox, HasReviews, HasStore, HasWaits, HasWorkflow,
};
pub use config::{ConfigStore, Published, PublishedConfig};
pub use ledger::Ledger;
pub use ocr::{CallPace, Ocr, OcrPoll, OcrWaiter, OcrWaits, Unpaced};
pub use payable::{AnswerBus, PayableBook};
pub use review::ReviewStore;
pub use saga::{Deliver, Downstream, EventBus, Outbox, ReceiptWaits, SagaJournal, StaleJournal};
pub use store::{Change, DocumentRecord, Refused, RunRecord, RunStatus, Store};
pub use workflow::{Started, TaskCallback, Workflow};
