//! Signed digests of the audit chains: the anchor outside the tables.
//!
//! The hash chain and its checkpoint catch an edit, a deletion or a truncation, but not a rewrite
//! by someone who may write the tables: edit entry `k`, recompute every later hash, move the
//! checkpoint, and [`super::verify`] passes. So, like CloudTrail's digest files, a scheduled
//! function periodically records every chain's head (`seq`, `hash`) in a [`Digest`], signs its
//! [`Digest::hash`] with a key only that function may use, and stores it where nothing can
//! overwrite or delete it for the retention period (S3 Object Lock). Digests chain too
//! ([`Digest::previous`]), so one cannot be left out unnoticed.
//!
//! [`check_chain`] compares a stored chain with the heads the verified digests signed for it: a
//! rewrite is named by document and by the entries it must lie in (after the newest head that
//! still matches, at or before the oldest that does not). This module is pure; fetching and
//! signature checks are the adapter's (`docket_aws::digest`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::macros::format_description;
use time::OffsetDateTime;

use super::{AuditEntry, Checkpoint};
use crate::ids::{canonical_json, sha256_hex};

/// Where digests are stored in the digest bucket; keys sort by time.
pub const DIGEST_PREFIX: &str = "digests/";

/// The version of the digest format this code writes and reads.
pub const DIGEST_VERSION: u32 = 1;

/// A pointer to the digest before this one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestLink {
    /// Its object key.
    pub key: String,
    /// Its [`Digest::hash`].
    pub hash: String,
}

/// Every audit chain's head at one time, plus the link to the previous digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Digest {
    /// [`DIGEST_VERSION`].
    pub version: u32,
    /// The stack whose audit tables this digest covers.
    pub stack: String,
    /// When the heads were read, fixed-width UTC (`2026-11-30T23:15:00.000Z`), so keys sort by
    /// time.
    pub time: String,
    /// The previous digest (none for the first).
    pub previous: Option<DigestLink>,
    /// documentId → the chain's head when read.
    pub chains: BTreeMap<String, Checkpoint>,
}

impl Digest {
    /// The digest of `chains` at `time`, after `previous`.
    pub fn new(
        stack: &str,
        time: OffsetDateTime,
        previous: Option<DigestLink>,
        chains: BTreeMap<String, Checkpoint>,
    ) -> Digest {
        let format = format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        );
        let time = time
            .to_offset(time::UtcOffset::UTC)
            .format(&format)
            .expect("the format has only numeric components");
        Digest {
            version: DIGEST_VERSION,
            stack: stack.into(),
            time,
            previous,
            chains,
        }
    }

    /// The exact bytes stored and hashed: canonical JSON (sorted keys, no spaces).
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let value = serde_json::to_value(self).expect("digests serialize");
        canonical_json(&value).into_bytes()
    }

    /// SHA-256 (hex) of [`Digest::canonical_bytes`]: what is signed and what the next digest
    /// links to.
    pub fn hash(&self) -> String {
        sha256_hex(&self.canonical_bytes())
    }

    /// Its object key: `digests/<time>-<hash>.json`.
    pub fn key(&self) -> String {
        format!("{DIGEST_PREFIX}{}-{}.json", self.time, self.hash())
    }

    /// The link the next digest carries.
    pub fn link(&self) -> DigestLink {
        DigestLink {
            key: self.key(),
            hash: self.hash(),
        }
    }

    /// Parses stored bytes, refusing anything that is not exactly the canonical form (so the
    /// hash of what was read is the hash of what was signed).
    pub fn parse(bytes: &[u8]) -> Result<Digest, String> {
        let digest: Digest =
            serde_json::from_slice(bytes).map_err(|e| format!("not a digest: {e}"))?;
        if digest.version != DIGEST_VERSION {
            return Err(format!("digest version {} unknown", digest.version));
        }
        if digest.canonical_bytes() != bytes {
            return Err("digest bytes are not canonical".into());
        }
        Ok(digest)
    }
}

/// A break in the chain of digests (newest first).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DigestChainError {
    /// The digest at `key` does not link to the one stored before it.
    #[error("digest {key} does not link to the digest before it ({expected})")]
    BrokenLink {
        /// The digest whose link is wrong.
        key: String,
        /// The key of the digest stored before it (or `none`).
        expected: String,
    },
}

/// Checks that `digests` (newest first, as listed) each link to the next older one, and that the
/// oldest given has a link only if it is not the first digest (`complete`: the list reaches the
/// first digest ever written).
pub fn check_links(digests: &[Digest], complete: bool) -> Result<(), DigestChainError> {
    for (i, digest) in digests.iter().enumerate() {
        let older = digests.get(i + 1);
        let ok = match (&digest.previous, older) {
            (Some(link), Some(older)) => *link == older.link(),
            (None, None) => true,
            (Some(_), None) => !complete,
            (None, Some(_)) => false,
        };
        if !ok {
            return Err(DigestChainError::BrokenLink {
                key: digest.key(),
                expected: older.map_or("none".into(), Digest::key),
            });
        }
    }
    Ok(())
}

/// How a stored chain differs from what the signed digests recorded of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DigestMismatch {
    /// The entry at a signed head has another hash than the digest signed: the chain was
    /// rewritten (and re-hashed) at an entry in `from..=to`.
    #[error(
        "entry {to} differs from the signed digest of {time}: rewritten at an entry in {from}..={to}"
    )]
    Rewritten {
        /// The first entry that may have been rewritten (the one after the newest signed head
        /// that still matches; 1 if none does).
        from: u64,
        /// The oldest signed head that does not match.
        to: u64,
        /// That digest's time.
        time: String,
    },
    /// The chain ends before a head a digest signed (entries removed, checkpoint moved back).
    #[error("chain ends at entry {last} but the signed digest of {time} records entry {signed}")]
    Truncated {
        /// The last entry present.
        last: u64,
        /// The signed head's seq.
        signed: u64,
        /// That digest's time.
        time: String,
    },
}

impl DigestMismatch {
    /// The first entry that may differ (for a truncation, the first missing one).
    pub fn seq(&self) -> u64 {
        match self {
            DigestMismatch::Rewritten { from, .. } => *from,
            DigestMismatch::Truncated { last, .. } => last + 1,
        }
    }
}

/// Compares `entries` (one document's chain in seq order, as stored) with the heads that
/// `digests` (newest first, as listed) signed for `document_id`. A document no digest names yet
/// passes (its entries are newer than the latest digest).
///
/// The heads are read in the order they were signed: a digest signed after a rewrite matches
/// the rewritten chain and vouches for nothing the rewrite changed, so only the matching heads
/// signed before the oldest mismatching one narrow the range.
pub fn check_chain(
    document_id: &str,
    entries: &[AuditEntry],
    digests: &[Digest],
) -> Result<(), DigestMismatch> {
    let heads = digests
        .iter()
        .rev()
        .filter_map(|d| d.chains.get(document_id).map(|h| (h, d.time.as_str())));
    let mut newest_good = 0;
    for (head, time) in heads {
        let at = (head.seq as usize).checked_sub(1);
        let Some(entry) = at.and_then(|i| entries.get(i)) else {
            return Err(DigestMismatch::Truncated {
                last: entries.len() as u64,
                signed: head.seq,
                time: time.into(),
            });
        };
        if entry.seq != head.seq || entry.hash != head.hash {
            // An older head at or past this one matched: the chain was put back after this
            // digest, and nothing narrows where.
            let from = if newest_good < head.seq {
                newest_good + 1
            } else {
                1
            };
            return Err(DigestMismatch::Rewritten {
                from,
                to: head.seq,
                time: time.into(),
            });
        }
        newest_good = newest_good.max(head.seq);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
