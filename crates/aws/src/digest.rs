//! The audit digests on AWS (see `docket_core::audit::digest`): chain heads read from the
//! checkpoints table, the digest's hash signed with a KMS asymmetric key (ECDSA P-256 over the
//! SHA-256 of the canonical bytes), the digest stored under `digests/` in a bucket with S3 Object
//! Lock, each object with its own retention, its signature in the object's metadata (which Object
//! Lock protects with the body).
//!
//! Only the digest function's role may `kms:Sign` with the key and `s3:PutObject` in the bucket
//! (template, "Audit digests"); readers need `kms:Verify` and `s3:GetObject`/`ListBucket`.

use std::collections::BTreeMap;

use aws_sdk_kms::primitives::Blob;
use aws_sdk_kms::types::{MessageType, SigningAlgorithmSpec};
use aws_sdk_s3::primitives::{ByteStream, DateTime};
use aws_sdk_s3::types::{ChecksumAlgorithm, ObjectLockMode};
use aws_smithy_types::base64;
use docket_core::audit::digest::{Digest, DIGEST_PREFIX};
use docket_core::audit::Checkpoint;
use docket_core::Error;
use time::OffsetDateTime;

use crate::errors::{classify, classify_effect, code};
use crate::item::{req_str, scan_all};

/// The object metadata entry holding the base64 signature.
const SIGNATURE: &str = "signature";
/// The one algorithm digests are signed with.
const ALGORITHM: SigningAlgorithmSpec = SigningAlgorithmSpec::EcdsaSha256;

/// How long, and how strictly, a stored digest is locked.
#[derive(Debug, Clone)]
pub struct Retention {
    /// `COMPLIANCE` (nobody, root included, may shorten it) or `GOVERNANCE`.
    pub mode: ObjectLockMode,
    /// Days from the write.
    pub days: u32,
}

/// Where digests are read from and written to.
#[derive(Debug, Clone)]
pub struct DigestConfig {
    /// The audit checkpoints table (chain heads).
    pub checkpoints_table: String,
    /// The Object Lock bucket.
    pub bucket: String,
    /// The KMS key (id, ARN or alias) that signs and verifies.
    pub key_id: String,
    /// The lock each new digest gets (none for a reader, which cannot write).
    pub retention: Option<Retention>,
}

impl DigestConfig {
    /// From `AUDIT_CHECKPOINTS_TABLE`, `DIGEST_BUCKET`, `DIGEST_KEY_ID`, `DIGEST_RETENTION_DAYS`
    /// and `DIGEST_LOCK_MODE` (default `COMPLIANCE`).
    pub fn from_env() -> Result<Self, Error> {
        let days = crate::env("DIGEST_RETENTION_DAYS")?
            .parse()
            .map_err(|_| Error::Internal("DIGEST_RETENTION_DAYS is not a number".into()))?;
        let mode = std::env::var("DIGEST_LOCK_MODE").unwrap_or_else(|_| "COMPLIANCE".into());
        Ok(DigestConfig {
            checkpoints_table: crate::env("AUDIT_CHECKPOINTS_TABLE")?,
            bucket: crate::env("DIGEST_BUCKET")?,
            key_id: crate::env("DIGEST_KEY_ID")?,
            retention: Some(Retention {
                mode: ObjectLockMode::from(mode.as_str()),
                days,
            }),
        })
    }
}

/// A stored digest as read: its bytes parsed (or why not) and whether its signature holds.
#[derive(Debug, Clone)]
pub struct StoredDigest {
    /// Its object key.
    pub key: String,
    /// The digest, when the bytes are one.
    pub digest: Result<Digest, String>,
    /// Whether KMS verified the signature over the bytes' SHA-256.
    pub signature_valid: bool,
}

/// Digests on DynamoDB, KMS and S3.
#[derive(Debug, Clone)]
pub struct DigestAnchor {
    dynamo: aws_sdk_dynamodb::Client,
    s3: aws_sdk_s3::Client,
    kms: aws_sdk_kms::Client,
    config: DigestConfig,
}

impl DigestAnchor {
    /// Clients from `sdk` (path-style S3 when a custom endpoint is set).
    pub fn new(sdk: &aws_config::SdkConfig, config: DigestConfig) -> Self {
        let s3 = aws_sdk_s3::config::Builder::from(sdk).force_path_style(crate::custom_endpoint());
        DigestAnchor {
            dynamo: crate::dynamodb_client(sdk, &crate::Faults::none()),
            s3: aws_sdk_s3::Client::from_conf(s3.build()),
            kms: aws_sdk_kms::Client::new(sdk),
            config,
        }
    }

    /// Every chain's head (a paginated, strongly consistent scan of the checkpoints table).
    pub async fn heads(&self) -> Result<BTreeMap<String, Checkpoint>, Error> {
        let scan = self
            .dynamo
            .scan()
            .table_name(&self.config.checkpoints_table)
            .consistent_read(true);
        let items = scan_all(scan, "dynamodb Scan audit checkpoints").await?;
        let mut heads = BTreeMap::new();
        for item in &items {
            let seq = item
                .get("seq")
                .and_then(|v| v.as_n().ok())
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| Error::Internal("checkpoint without seq".into()))?;
            let hash = req_str(item, "hash")?.to_string();
            heads.insert(
                req_str(item, "documentId")?.to_string(),
                Checkpoint { seq, hash },
            );
        }
        Ok(heads)
    }

    /// Every digest key, oldest first (keys begin with the digest's fixed-width time).
    pub async fn keys(&self) -> Result<Vec<String>, Error> {
        let pages: Vec<_> = self
            .s3
            .list_objects_v2()
            .bucket(&self.config.bucket)
            .prefix(DIGEST_PREFIX)
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| classify("s3 ListObjectsV2 digests", e))?;
        let mut keys: Vec<String> = pages
            .iter()
            .flat_map(|p| {
                p.contents()
                    .iter()
                    .filter_map(|o| o.key().map(String::from))
            })
            .collect();
        keys.sort();
        Ok(keys)
    }

    /// Reads the digest at `key` and checks its signature with KMS.
    pub async fn read(&self, key: &str) -> Result<StoredDigest, Error> {
        let out = self
            .s3
            .get_object()
            .bucket(&self.config.bucket)
            .key(key)
            .send()
            .await
            .map_err(|e| classify("s3 GetObject digest", e))?;
        let signature = out
            .metadata()
            .and_then(|m| m.get(SIGNATURE))
            .and_then(|s| base64::decode(s).ok());
        let bytes = out
            .body
            .collect()
            .await
            .map_err(|e| Error::Dependency(format!("s3 GetObject digest body: {e}")))?
            .into_bytes();
        let signature_valid = match signature {
            Some(sig) => self.verify(&bytes, sig).await?,
            None => false,
        };
        Ok(StoredDigest {
            key: key.into(),
            digest: Digest::parse(&bytes),
            signature_valid,
        })
    }

    /// The newest `limit` digests, newest first.
    pub async fn latest(&self, limit: usize) -> Result<(Vec<StoredDigest>, bool), Error> {
        let keys = self.keys().await?;
        let complete = keys.len() <= limit;
        let mut out = Vec::new();
        for key in keys.iter().rev().take(limit) {
            out.push(self.read(key).await?);
        }
        Ok((out, complete))
    }

    /// Reads every head, signs the digest that follows the newest stored one, and stores it
    /// locked. Returns what was written.
    pub async fn write(&self, stack: &str, now: OffsetDateTime) -> Result<Digest, Error> {
        let retention = self.config.retention.clone().ok_or_else(|| {
            Error::Internal("no digest retention configured: a reader cannot write".into())
        })?;
        let previous = match self.keys().await?.last() {
            Some(key) => {
                let stored = self.read(key).await?;
                let digest = stored.digest.map_err(|e| {
                    Error::Internal(format!("latest digest {key} is unreadable: {e}"))
                })?;
                if !stored.signature_valid {
                    return Err(Error::Internal(format!(
                        "latest digest {key} has no valid signature; not chaining to it"
                    )));
                }
                Some(digest.link())
            }
            None => None,
        };
        let digest = Digest::new(stack, now, previous, self.heads().await?);
        let bytes = digest.canonical_bytes();
        let signature = self.sign(&bytes).await?;
        let retain_until = now + time::Duration::days(retention.days.into());
        self.s3
            .put_object()
            .bucket(&self.config.bucket)
            .key(digest.key())
            .body(ByteStream::from(bytes))
            .content_type("application/json")
            .metadata(SIGNATURE, base64::encode(&signature))
            .checksum_algorithm(ChecksumAlgorithm::Sha256)
            .object_lock_mode(retention.mode)
            .object_lock_retain_until_date(DateTime::from_secs(retain_until.unix_timestamp()))
            .send()
            .await
            .map_err(|e| classify_effect("s3 PutObject digest", e))?;
        Ok(digest)
    }

    async fn sign(&self, bytes: &[u8]) -> Result<Vec<u8>, Error> {
        let out = self
            .kms
            .sign()
            .key_id(&self.config.key_id)
            .message(Blob::new(sha256(bytes)))
            .message_type(MessageType::Digest)
            .signing_algorithm(ALGORITHM)
            .send()
            .await
            .map_err(|e| classify("kms Sign digest", e))?;
        out.signature()
            .map(|s| s.as_ref().to_vec())
            .ok_or_else(|| Error::Internal("kms Sign returned no signature".into()))
    }

    /// KMS Verify with the configured key (never a key named by the object).
    async fn verify(&self, bytes: &[u8], signature: Vec<u8>) -> Result<bool, Error> {
        let result = self
            .kms
            .verify()
            .key_id(&self.config.key_id)
            .message(Blob::new(sha256(bytes)))
            .message_type(MessageType::Digest)
            .signing_algorithm(ALGORITHM)
            .signature(Blob::new(signature))
            .send()
            .await;
        match result {
            Ok(out) => Ok(out.signature_valid()),
            // An invalid signature is an error response, not `SignatureValid: false`.
            Err(e) if code(&e) == Some("KMSInvalidSignatureException") => Ok(false),
            Err(e) => Err(classify("kms Verify digest", e)),
        }
    }
}

fn sha256(bytes: &[u8]) -> Vec<u8> {
    use sha2::{Digest as _, Sha256};
    Sha256::digest(bytes).to_vec()
}
