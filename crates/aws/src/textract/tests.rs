//! The client as it meets a provider that refuses: against a stand-in Textract on 127.0.0.1
//! that answers every call with `ProvisionedThroughputExceededException` and counts the
//! requests it read, one call of ours is one request on the wire.

use docket_core::ids::Tenant;

use super::*;
use crate::stand_in::{sdk_config, StandIn};

const REFUSAL: &str = r#"{"__type":"ProvisionedThroughputExceededException","Message":"The number of requests exceeded your throughput limit."}"#;

/// A stand-in Textract refusing every call.
fn refusing() -> StandIn {
    StandIn::answering(|_| (400, vec![("x-amzn-requestid", "refused")], REFUSAL.into()))
}

fn operation() -> OperationId {
    let run = docket_core::memory::test_run(&Tenant::parse("acme").unwrap(), "a.png", "v1");
    OperationId::new(&run, "ocr", None)
}

#[tokio::test]
async fn a_refused_call_is_one_request_the_sdk_does_not_send_again_outside_admission() {
    let provider = refusing();
    let textract = TextractOcr::new(&sdk_config(provider.port).await);
    let document = ObjectRef::new("inbox", "acme/a.png");

    let read = textract.detect(&operation(), &document, None).await;
    let started = textract.start(&operation(), &document, "run").await;

    let read = read.expect_err("refused");
    assert_eq!(read.name(), "Transient.Dependency", "{read}");
    assert!(
        read.to_string()
            .contains("ProvisionedThroughputExceededException"),
        "{read}"
    );
    let started = started.expect_err("refused");
    assert_eq!(started.name(), "Transient.Dependency", "{started}");
    assert_eq!(provider.seen().len(), 2, "one request a call, no SDK retry");
}
