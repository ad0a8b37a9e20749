//! The S3 adapter (`docket_aws::s3::S3Blobs`) against LocalStack: a prefix read returns the
//! first bytes of the version asked for, all of a shorter object, none of an empty one, and a
//! missing object is named as such.

use aws_sdk_s3::primitives::ByteStream;
use docket_aws::s3::S3Blobs;
use docket_core::model::run::ObjectRef;
use docket_core::ports::BlobStore;
use docket_core::Error;
use docket_e2e::{resource, util};

#[tokio::test]
async fn a_prefix_read_returns_the_first_bytes_of_the_version_asked_for() {
    let config = util::aws().await;
    let bucket = resource::versioned_bucket(&config, "prefix").await;
    let s3 = util::s3(&config);
    let put = |key: &'static str, body: &'static [u8]| {
        let s3 = s3.clone();
        let bucket = bucket.to_string();
        async move {
            let out = s3
                .put_object()
                .bucket(bucket)
                .key(key)
                .body(ByteStream::from_static(body))
                .send()
                .await
                .unwrap();
            out.version_id().map(str::to_string)
        }
    };
    let first = put("doc", b"%PDF-1.7 the first version").await;
    put("doc", b"\x89PNG\r\n\x1a\n the second version").await;
    put("short", b"%PD").await;
    put("empty", b"").await;
    let at = |key: &str, version_id: Option<String>| ObjectRef {
        bucket: bucket.to_string(),
        key: key.into(),
        version_id,
    };
    let blobs = S3Blobs::new(&config);

    assert_eq!(
        blobs
            .get_prefix(&at("doc", first.clone()), 8)
            .await
            .unwrap(),
        b"%PDF-1.7"
    );
    assert_eq!(
        blobs.get_prefix(&at("doc", None), 8).await.unwrap(),
        b"\x89PNG\r\n\x1a\n"
    );
    // The whole object is still there to read.
    assert_eq!(
        blobs.get(&at("doc", first)).await.unwrap(),
        b"%PDF-1.7 the first version"
    );
    assert_eq!(
        blobs.get_prefix(&at("short", None), 8).await.unwrap(),
        b"%PD"
    );
    assert_eq!(blobs.get_prefix(&at("empty", None), 8).await.unwrap(), b"");
    let missing = blobs.get_prefix(&at("missing", None), 8).await.unwrap_err();
    assert!(matches!(missing, Error::BadInput(_)), "{missing:?}");
}
