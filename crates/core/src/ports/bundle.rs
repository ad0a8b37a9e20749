//! How a step is handed its ports: one small accessor trait per port, so that a step names
//! exactly the ports it uses (`ports: &(impl HasBlobs + HasStore)`) and a bundle implements
//! only the ones it has. A Lambda builds (and needs the configuration of) only the adapters its
//! steps use; the unit tests hand every step [`crate::memory::MemoryPorts`].

use super::{
    BlobStore, ConfigStore, Downstream, EventBus, Ledger, Ocr, OcrWaits, Outbox, ReceiptWaits,
    ReviewStore, SagaJournal, Store, TaskCallback, Workflow,
};

/// Declares one accessor trait: `$has` gives `&Self::$assoc`, a `$port`.
macro_rules! accessor {
    ($(#[$doc:meta])* $has:ident { type $assoc:ident: $port:ident; fn $get:ident; }) => {
        $(#[$doc])*
        pub trait $has: Sync {
            #[doc = concat!("The [`", stringify!($port), "`] adapter.")]
            type $assoc: $port;
            #[doc = concat!("The [`", stringify!($port), "`] adapter.")]
            fn $get(&self) -> &Self::$assoc;
        }
    };
}

accessor! {
    /// A bundle with object storage.
    HasBlobs { type Blobs: BlobStore; fn blobs; }
}
accessor! {
    /// A bundle with the runs, documents and audit log.
    HasStore { type Store: Store; fn store; }
}
accessor! {
    /// A bundle with the operation ledger.
    HasLedger { type Ledger: Ledger; fn ledger; }
}
accessor! {
    /// A bundle with an OCR provider.
    HasOcr { type Ocr: Ocr; fn ocr; }
}
accessor! {
    /// A bundle with the workflow engine.
    HasWorkflow { type Workflow: Workflow; fn workflow; }
}
accessor! {
    /// A bundle that starts bulk reprocesses (the bulk reprocess state machine; only review-api,
    /// for a verified operator).
    HasBulk { type Bulk: Workflow; fn bulk; }
}
accessor! {
    /// A bundle with the review tasks.
    HasReviews { type Reviews: ReviewStore; fn reviews; }
}
accessor! {
    /// A bundle that can answer a Task waiting for a token.
    HasCallback { type Callback: TaskCallback; fn callback; }
}
accessor! {
    /// A bundle with the saga journals.
    HasJournal { type Journal: SagaJournal; fn journal; }
}
accessor! {
    /// A bundle with the outbox.
    HasOutbox { type Outbox: Outbox; fn outbox; }
}
accessor! {
    /// A bundle with the event bus.
    HasEvents { type Events: EventBus; fn events; }
}
accessor! {
    /// A bundle with the downstream consumer.
    HasDownstream { type Downstream: Downstream; fn downstream; }
}
accessor! {
    /// A bundle with the receipt waits.
    HasWaits { type Waits: ReceiptWaits; fn waits; }
}
accessor! {
    /// A bundle with the OCR waits.
    HasOcrWaits { type OcrWaits: OcrWaits; fn ocr_waits; }
}
accessor! {
    /// A bundle with the published configs.
    HasConfigs { type Configs: ConfigStore; fn configs; }
}
