//! The digest of a tool call's arguments, as the client computed it: what lets a replay be
//! refused when the call being made is not the call that was journalled (DESIGN contract 14).

use std::fmt;

use crate::error::Error;

/// Lower-case hex SHA-256 of a call's arguments in the client's documented serialization (64
/// characters), or empty when the client sent none. Opaque to the server, which only compares
/// two of them; not covered by checksum v1.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ArgumentsDigest(String);

impl ArgumentsDigest {
    /// No digest: the client did not say (an older client, or a call without arguments it
    /// hashes). Never conflicts with anything.
    pub const NONE: Self = Self(String::new());

    /// A wire digest: empty, or exactly 64 lower-case hex characters; otherwise
    /// INVALID_ARGUMENT naming `field`.
    pub fn parse(field: &str, raw: &str) -> Result<Self, Error> {
        let hex = |byte: &u8| byte.is_ascii_digit() || (b'a'..=b'f').contains(byte);
        if raw.is_empty() || (raw.len() == 64 && raw.as_bytes().iter().all(hex)) {
            return Ok(Self(raw.to_owned()));
        }
        Err(Error::invalid(
            field,
            format!(
                "{field} must be empty or 64 lower-case hex characters (SHA-256), got {} \
                 characters",
                raw.chars().count()
            ),
        ))
    }

    /// A digest read back from a store, which only ever holds parsed ones.
    pub fn stored(raw: String) -> Self {
        Self(raw)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a call with this digest is another call than one journalled with `stored`:
    /// both are known and they differ. An empty digest on either side matches anything, so
    /// older clients and older rows behave as before.
    pub fn conflicts_with(&self, stored: &Self) -> bool {
        !self.is_empty() && !stored.is_empty() && self != stored
    }
}

impl fmt::Display for ArgumentsDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_empty_or_lower_case_sha256_hex_parses() {
        let good = "a".repeat(64);
        assert_eq!(ArgumentsDigest::parse("d", &good).unwrap().as_str(), good);
        assert!(ArgumentsDigest::parse("d", "").unwrap().is_empty());
        for bad in [
            "A".repeat(64),
            "a".repeat(63),
            "a".repeat(65),
            "g".repeat(64),
        ] {
            let error = ArgumentsDigest::parse("results[2].arguments_digest", &bad).unwrap_err();
            assert!(
                matches!(&error, Error::InvalidField { field, .. } if field == "results[2].arguments_digest"),
                "{error:?}"
            );
        }
    }

    #[test]
    fn an_empty_digest_on_either_side_never_conflicts() {
        let a = ArgumentsDigest::parse("d", &"a".repeat(64)).unwrap();
        let b = ArgumentsDigest::parse("d", &"b".repeat(64)).unwrap();
        assert!(a.conflicts_with(&b));
        assert!(!a.conflicts_with(&a.clone()));
        assert!(!a.conflicts_with(&ArgumentsDigest::NONE));
        assert!(!ArgumentsDigest::NONE.conflicts_with(&b));
    }
}
