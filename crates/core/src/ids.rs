//! Identities (shared/DESIGN.md "Identities"): a checksum identifies content, not the operation.
//!
//! - [`Tenant`]: the first path segment under `inbox/`, never taken from anything else.
//! - [`DocumentId`]: stable per (tenant, logical key).
//! - [`SourceVersion`]: the S3 version id of the raw object plus its SHA-256, kept apart.
//! - [`RunId`]: deterministic from (document, source version, config fingerprint, reprocess
//!   generation); it is the Step Functions execution name, so a duplicate start cannot run twice.
//! - [`OperationId`]: one per (run, step[, effect]); the idempotency key handed to providers.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

use crate::Error;

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Canonical JSON: object keys sorted (recursively), no insignificant whitespace. Two values that
/// are equal as JSON give the same string, so hashes over it are stable.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<_> = map.keys().collect();
            keys.sort();
            let body: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Array(items) => {
            let body: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", body.join(","))
        }
        other => other.to_string(),
    }
}

/// Hash of parts joined unambiguously (length-prefixed, so ("ab","c") != ("a","bc")).
fn hash_parts(parts: &[&str]) -> String {
    let mut joined = Vec::new();
    for p in parts {
        joined.extend_from_slice(format!("{}:", p.len()).as_bytes());
        joined.extend_from_slice(p.as_bytes());
    }
    sha256_hex(&joined)
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The id as a string.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_type!(
    /// A tenant: lowercase letters, digits and `-`, 1..=63 characters.
    Tenant
);
id_type!(
    /// Stable per (tenant, logical key): `d` + 24 hex.
    DocumentId
);
id_type!(
    /// One processing of one source version: `<documentId>-r<20 hex>` (a valid execution name).
    RunId
);
id_type!(
    /// One (run, step[, effect]): `op-<32 hex>`, at most 64 characters (Textract's token limit).
    OperationId
);

impl Tenant {
    /// Validates a tenant name.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let ok = !s.is_empty()
            && s.len() <= 63
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !s.starts_with('-');
        if ok {
            Ok(Tenant(s.to_string()))
        } else {
            Err(Error::BadKey(format!(
                "tenant must be 1-63 of [a-z0-9-], got {s:?}"
            )))
        }
    }
}

/// Where a document came from in the raw bucket, after the key is decoded and checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxKey {
    /// The tenant (first segment under `inbox/`).
    pub tenant: Tenant,
    /// The rest of the key: the document's logical name within the tenant.
    pub logical_key: String,
    /// The decoded full key, as stored in S3.
    pub key: String,
}

/// The prefix under which uploads arrive.
pub const INBOX_PREFIX: &str = "inbox/";

/// Decodes an S3 event key (`+` is a space, `%XX` a byte; the result must be UTF-8).
pub fn decode_event_key(encoded: &str) -> Result<String, Error> {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = encoded
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| Error::BadKey(format!("bad percent-escape in {encoded:?}")))?;
                out.push(hex);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| Error::BadKey("key is not UTF-8".into()))
}

/// Encodes a key as S3 events carry it, the inverse of [`decode_event_key`]: a space is `+`,
/// every byte but an unreserved one (`A-Z a-z 0-9 - _ . ~`) and `/` is `%XX`. For an event
/// rebuilt from a listing (`docket ops sweep --resubmit`).
pub fn encode_event_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        match b {
            b' ' => out.push('+'),
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(char::from(b))
            }
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Unicode format characters (general category Cf, Unicode 15.1): invisible, they make a key read
/// differently from what it is (U+202E turns `invoice\u{202E}fdp.exe` into "invoiceexe.pdf";
/// U+200B makes two names that look the same). Ranges, inclusive.
const FORMAT_CHARACTERS: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),
    ('\u{0600}', '\u{0605}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{06DD}', '\u{06DD}'),
    ('\u{070F}', '\u{070F}'),
    ('\u{0890}', '\u{0891}'),
    ('\u{08E2}', '\u{08E2}'),
    ('\u{180E}', '\u{180E}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFF9}', '\u{FFFB}'),
    ('\u{110BD}', '\u{110BD}'),
    ('\u{110CD}', '\u{110CD}'),
    ('\u{13430}', '\u{1343F}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0001}', '\u{E0001}'),
    ('\u{E0020}', '\u{E007F}'),
];

fn is_format_character(c: char) -> bool {
    FORMAT_CHARACTERS
        .iter()
        .any(|&(low, high)| (low..=high).contains(&c))
}

/// Checks a decoded key: `inbox/<tenant>/<name...>`, no empty, `.` or `..` segments, no control
/// or format characters (bidi overrides, zero-width; the error names the code point). The
/// logical key is the name in NFC, so a composed and a decomposed `é` name one document; `key`
/// stays as stored.
pub fn parse_inbox_key(key: &str) -> Result<InboxKey, Error> {
    let rest = key
        .strip_prefix(INBOX_PREFIX)
        .ok_or_else(|| Error::BadKey(format!("key is not under {INBOX_PREFIX}")))?;
    if key.chars().any(char::is_control) {
        return Err(Error::BadKey("key contains control characters".into()));
    }
    if let Some(c) = key.chars().find(|&c| is_format_character(c)) {
        return Err(Error::BadKey(format!(
            "key contains the Unicode format character U+{:04X}",
            u32::from(c)
        )));
    }
    let rest: String = rest.nfc().collect();
    let segments: Vec<&str> = rest.split('/').collect();
    if segments.len() < 2 {
        return Err(Error::BadKey(
            "key has no document name after the tenant".into(),
        ));
    }
    if let Some(bad) = segments
        .iter()
        .find(|s| s.is_empty() || **s == "." || **s == "..")
    {
        return Err(Error::BadKey(format!(
            "key has an empty or relative segment {bad:?}"
        )));
    }
    Ok(InboxKey {
        tenant: Tenant::parse(segments[0])?,
        logical_key: segments[1..].join("/"),
        key: key.to_string(),
    })
}

/// The raw object's version: S3's version id and the SHA-256 of its content, kept separately (the
/// hash identifies content; the version id identifies this upload of it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceVersion {
    /// S3 version id of the raw object.
    pub version_id: String,
    /// SHA-256 of the raw bytes, lowercase hex.
    pub sha256: String,
}

impl DocumentId {
    /// The document named `logical_key` within `tenant`.
    pub fn new(tenant: &Tenant, logical_key: &str) -> Self {
        DocumentId(format!(
            "d{}",
            &hash_parts(&["document", tenant.as_str(), logical_key])[..24]
        ))
    }

    /// The id under which an upload whose key names no valid document is recorded (it has no
    /// tenant to scope it); derived from the raw key so repeated events land on the same chain.
    pub fn for_rejected_key(raw_key: &str) -> Self {
        DocumentId(format!(
            "d{}",
            &hash_parts(&["rejected-key", raw_key])[..24]
        ))
    }

    /// Accepts an id read back from storage or input, if it has the right shape.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let ok =
            s.len() == 25 && s.starts_with('d') && s[1..].bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| DocumentId(s.to_string()))
            .ok_or_else(|| Error::BadInput(format!("not a document id: {s:?}")))
    }
}

id_type!(
    /// A bulk reprocess: `rp-` and 24 hex of its request (`reprocess::Request`); the name of
    /// its bulk execution.
    ReprocessId
);

impl ReprocessId {
    /// The id of a request given as JSON: the same request always has the same id.
    pub fn of_request(request: &Value) -> Self {
        let hash = sha256_hex(canonical_json(request).as_bytes());
        ReprocessId(format!("rp-{}", &hash[..24]))
    }

    /// Accepts an id as `docket reprocess` printed it.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let ok =
            s.len() == 27 && s.starts_with("rp-") && s[3..].bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| ReprocessId(s.to_string()))
            .ok_or_else(|| Error::BadInput(format!("not a reprocess id: {s:?}")))
    }
}

impl RunId {
    /// The run of `document` at `source` under the config `config_fingerprint`; `generation` is
    /// bumped to reprocess the same version deliberately (the old run stays for audit).
    pub fn new(
        document: &DocumentId,
        source: &SourceVersion,
        config_fingerprint: &str,
        generation: u32,
    ) -> Self {
        let h = hash_parts(&[
            "run",
            document.as_str(),
            &source.version_id,
            config_fingerprint,
            &generation.to_string(),
        ]);
        RunId(format!("{}{}", RunId::prefix_of(document), &h[..20]))
    }

    /// How every run id of `document` begins (an execution's name is its run id, so this finds
    /// a document's executions by name).
    pub fn prefix_of(document: &DocumentId) -> String {
        format!("{document}-r")
    }

    /// Accepts an id read back from storage or input, if it has the right shape.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let ok = s.len() == 47
            && DocumentId::parse(&s[..25]).is_ok()
            && &s[25..27] == "-r"
            && s[27..].bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| RunId(s.to_string()))
            .ok_or_else(|| Error::BadInput(format!("not a run id: {s:?}")))
    }

    /// The document this run belongs to.
    pub fn document_id(&self) -> DocumentId {
        DocumentId(self.0[..25].to_string())
    }
}

impl OperationId {
    /// The operation `step` (and optional `effect`, e.g. one destination) of `run`.
    pub fn new(run: &RunId, step: &str, effect: Option<&str>) -> Self {
        let h = hash_parts(&["operation", run.as_str(), step, effect.unwrap_or("")]);
        OperationId(format!("op-{}", &h[..32]))
    }

    /// The quarantining of one raw version (it has no run).
    pub fn quarantine(document: &DocumentId, version_id: &str) -> Self {
        let h = hash_parts(&["quarantine", document.as_str(), version_id]);
        OperationId(format!("op-{}", &h[..32]))
    }
}

/// Hash of the canonical intended parameters of an operation. The same operation id with another
/// fingerprint is a conflict, never a silent reuse.
pub fn params_fingerprint(params: &Value) -> String {
    format!("p{}", &sha256_hex(canonical_json(params).as_bytes())[..32])
}

#[cfg(test)]
mod tests;
