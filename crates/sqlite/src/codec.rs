//! Conversions between domain values and SQLite column values.
//!
//! Readers here are deliberately lenient about *payload* columns: a value damaged on disk (a
//! wrong-length digest, bytes where text was expected, undecodable metadata) is read as
//! something that cannot match its checksum, so the engine quarantines the checkpoint and falls
//! back to an earlier one. Failing the read instead would turn one bad row into a run that can
//! never be restored.

use std::collections::BTreeMap;
use std::time::SystemTime;

use rusqlite::Row;
use rusqlite::types::ValueRef;

use checkpointd_core::domain::Digest32;
use checkpointd_core::error::{Error, Result};
pub(crate) use checkpointd_core::time::{from_micros, to_micros};

/// Now, truncated to what a timestamp column keeps, so that what a write returns equals what a
/// later read returns.
pub(super) fn now() -> (SystemTime, i64) {
    let micros = to_micros(SystemTime::now());
    (from_micros(micros), micros)
}

/// A counter, step or epoch as the signed integer SQLite stores.
///
/// Steps arrive as non-negative i64 and counters stay far below 2^63, so this only fails on a
/// value that could never have been stored.
pub(crate) fn signed(value: u64, what: &str) -> Result<i64> {
    i64::try_from(value)
        .map_err(|_| Error::InvalidArgument(format!("{what} {value} is larger than 2^63 - 1")))
}

/// Reads an INTEGER column as u64. A negative value (only possible through tampering) reads as
/// `u64::MAX`, which no count or step ever equals, so verification rejects the row.
pub(super) fn unsigned(row: &Row<'_>, index: usize) -> rusqlite::Result<u64> {
    let value: i64 = row.get(index)?;
    Ok(u64::try_from(value).unwrap_or(u64::MAX))
}

/// Reads a payload column as bytes whatever its storage class: BLOB and TEXT as stored, NULL as
/// empty, numbers as their decimal text.
pub(crate) fn bytes(row: &Row<'_>, index: usize) -> rusqlite::Result<Vec<u8>> {
    Ok(match row.get_ref(index)? {
        ValueRef::Blob(bytes) | ValueRef::Text(bytes) => bytes.to_vec(),
        ValueRef::Null => Vec::new(),
        ValueRef::Integer(value) => value.to_string().into_bytes(),
        ValueRef::Real(value) => value.to_string().into_bytes(),
    })
}

/// Reads a text column; invalid UTF-8 is replaced, which changes the bytes and so fails the
/// checksum instead of failing the read.
pub(super) fn text(row: &Row<'_>, index: usize) -> rusqlite::Result<String> {
    let raw = bytes(row, index)?;
    Ok(match String::from_utf8(raw) {
        Ok(text) => text,
        Err(invalid) => String::from_utf8_lossy(invalid.as_bytes()).into_owned(),
    })
}

/// Reads a nullable text column such as `quarantine_reason`.
pub(super) fn optional_text(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<String>> {
    match row.get_ref(index)? {
        ValueRef::Null => Ok(None),
        _ => text(row, index).map(Some),
    }
}

/// Reads a 32-byte digest column. Any other length reads as the SHA-256 of the stored bytes
/// under a distinct framing: a value no honest chain or checksum takes, so it fails
/// verification.
pub(super) fn digest(row: &Row<'_>, index: usize) -> rusqlite::Result<Digest32> {
    let raw = bytes(row, index)?;
    Ok(match <Digest32>::try_from(raw.as_slice()) {
        Ok(digest) => digest,
        Err(_) => damaged_digest(&raw),
    })
}

fn damaged_digest(raw: &[u8]) -> Digest32 {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(b"checkpointd.sqlite.damaged-digest");
    hasher.update(raw);
    hasher.finalize().into()
}

/// The key a damaged metadata blob is read under (see [`decode_metadata`]).
pub(super) const UNDECODABLE_METADATA_KEY: &str = "\u{0}checkpointd.undecodable_metadata";

/// Encodes metadata as `u64be(count)` then, for each entry in ascending key order,
/// `u64be(len(key)) key u64be(len(value)) value` — the same framing checksum v1 uses, so the
/// encoding is canonical: one map, one byte string.
pub(super) fn encode_metadata(metadata: &BTreeMap<String, String>) -> Vec<u8> {
    let size: usize = metadata.iter().map(|(k, v)| 16 + k.len() + v.len()).sum();
    let mut out = Vec::with_capacity(8 + size);
    out.extend_from_slice(&(metadata.len() as u64).to_be_bytes());
    for (key, value) in metadata {
        for part in [key.as_bytes(), value.as_bytes()] {
            out.extend_from_slice(&(part.len() as u64).to_be_bytes());
            out.extend_from_slice(part);
        }
    }
    out
}

/// Decodes [`encode_metadata`]'s output.
///
/// Bytes that are not a canonical encoding decode to a single entry under
/// [`UNDECODABLE_METADATA_KEY`] holding the hex of the blob. The checksum covers metadata, so
/// that map fails verification and the checkpoint is quarantined rather than unreadable.
pub(super) fn decode_metadata(raw: &[u8]) -> BTreeMap<String, String> {
    strict_decode_metadata(raw).unwrap_or_else(|| {
        BTreeMap::from([(UNDECODABLE_METADATA_KEY.to_owned(), hex::encode(raw))])
    })
}

fn strict_decode_metadata(mut raw: &[u8]) -> Option<BTreeMap<String, String>> {
    fn take_u64(raw: &mut &[u8]) -> Option<u64> {
        let (head, rest) = raw.split_first_chunk::<8>()?;
        *raw = rest;
        Some(u64::from_be_bytes(*head))
    }
    fn take_text(raw: &mut &[u8]) -> Option<String> {
        let len = usize::try_from(take_u64(raw)?).ok()?;
        if raw.len() < len {
            return None;
        }
        let (head, rest) = raw.split_at(len);
        *raw = rest;
        String::from_utf8(head.to_vec()).ok()
    }

    let count = take_u64(&mut raw)?;
    let mut metadata = BTreeMap::new();
    let mut previous: Option<String> = None;
    for _ in 0..count {
        let key = take_text(&mut raw)?;
        let value = take_text(&mut raw)?;
        // Canonical means strictly ascending keys; anything else was not written by us.
        if previous.as_ref().is_some_and(|previous| *previous >= key) {
            return None;
        }
        previous = Some(key.clone());
        metadata.insert(key, value);
    }
    raw.is_empty().then_some(metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_exactly() {
        let metadata = BTreeMap::from([
            (String::new(), String::new()),
            ("b".to_owned(), "two\0with nul".to_owned()),
            ("a".to_owned(), "ünïcode".to_owned()),
        ]);
        assert_eq!(decode_metadata(&encode_metadata(&metadata)), metadata);
        assert_eq!(
            decode_metadata(&encode_metadata(&BTreeMap::new())),
            BTreeMap::new()
        );
    }

    #[test]
    fn damaged_metadata_decodes_to_a_map_that_cannot_verify() {
        let mut raw = encode_metadata(&BTreeMap::from([("k".to_owned(), "v".to_owned())]));
        raw.push(0);
        let decoded = decode_metadata(&raw);
        assert_eq!(decoded.len(), 1);
        assert!(decoded.contains_key(UNDECODABLE_METADATA_KEY));
        assert!(decode_metadata(b"{}").contains_key(UNDECODABLE_METADATA_KEY));
    }

    #[test]
    fn micros_round_trip_on_both_sides_of_the_epoch() {
        for micros in [0, 1, -1, 1_700_000_000_123_456, -86_400_000_000] {
            assert_eq!(to_micros(from_micros(micros)), micros);
        }
    }
}
