//! Identifiers that arrive on the wire: tenants, runs, steps and tool call ids.

use std::fmt;

use crate::error::Error;

/// Longest run id, tenant or call id accepted, in bytes.
pub const MAX_ID_BYTES: usize = 256;

fn parse_id(kind: &str, raw: &str) -> Result<String, Error> {
    if raw.is_empty() {
        return Err(Error::invalid(kind, format!("{kind} must not be empty")));
    }
    if raw.len() > MAX_ID_BYTES {
        return Err(Error::invalid(
            kind,
            format!("{kind} is {} bytes; the limit is {MAX_ID_BYTES}", raw.len()),
        ));
    }
    if raw.chars().any(char::is_control) {
        return Err(Error::invalid(
            kind,
            format!("{kind} must not contain control characters"),
        ));
    }
    Ok(raw.to_owned())
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// Parses wire input, rejecting empty, overlong or control-character values.
            pub fn parse(raw: &str) -> Result<Self, Error> {
                parse_id($kind, raw).map(Self)
            }

            /// The id as text.
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
    /// A run: one agent execution whose checkpoints form a sequence.
    RunId,
    "run_id"
);
id_type!(
    /// A tenant; every key in every store is scoped by it.
    Tenant,
    "tenant"
);
id_type!(
    /// A deterministic tool call id, unique within a run.
    CallId,
    "call_id"
);

impl Tenant {
    /// The tenant used when a request names none.
    pub fn default_tenant() -> Self {
        Self("default".to_owned())
    }
}

/// The tenant-scoped key of a run.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RunKey {
    pub tenant: Tenant,
    pub run_id: RunId,
}

impl RunKey {
    pub fn new(tenant: Tenant, run_id: RunId) -> Self {
        Self { tenant, run_id }
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.tenant, self.run_id)
    }
}

/// The smallest string above every string that starts with `prefix`, in byte order; `None`
/// when there is none (an empty prefix, or one made only of `char::MAX`).
///
/// `run_id >= prefix AND run_id < bound` is then an index range, unlike `LIKE` on input that
/// may itself hold wildcards. UTF-8 byte order is code point order, so bumping the last code
/// point that can be bumped gives the bound.
pub fn prefix_upper_bound(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match last {
            '\u{D7FF}' => Some('\u{E000}'),
            other => char::from_u32(u32::from(other) + 1),
        };
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// An agent step; never negative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Step(u64);

impl Step {
    /// Parses a wire step, rejecting negative values.
    pub fn parse(raw: i64) -> Result<Self, Error> {
        u64::try_from(raw)
            .map(Self)
            .map_err(|_| Error::invalid("step", format!("step must be >= 0, got {raw}")))
    }

    pub fn new(step: u64) -> Self {
        Self(step)
    }

    pub fn get(self) -> u64 {
        self.0
    }

    /// The step as the signed integer the wire and SQL use; steps come from an i64 so this never wraps.
    pub fn as_i64(self) -> i64 {
        self.0 as i64
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_reject_empty_overlong_and_control_characters() {
        assert!(RunId::parse("").is_err());
        assert!(RunId::parse(&"x".repeat(MAX_ID_BYTES + 1)).is_err());
        assert!(RunId::parse("a\nb").is_err());
        assert_eq!(RunId::parse("run-1").unwrap().as_str(), "run-1");
        assert_eq!(
            RunId::parse(&"x".repeat(MAX_ID_BYTES))
                .unwrap()
                .as_str()
                .len(),
            256
        );
    }

    #[test]
    fn the_prefix_bound_is_the_first_string_past_every_extension_of_the_prefix() {
        assert_eq!(prefix_upper_bound(""), None);
        assert_eq!(prefix_upper_bound("run-").as_deref(), Some("run."));
        assert_eq!(
            prefix_upper_bound("a\u{D7FF}").as_deref(),
            Some("a\u{E000}")
        );
        assert_eq!(prefix_upper_bound("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_upper_bound("\u{10FFFF}"), None);
        let bound = prefix_upper_bound("ab\u{FF61}").unwrap();
        for inside in [
            "ab\u{FF61}",
            "ab\u{FF61}\u{10FFFF}\u{10FFFF}",
            "ab\u{FF61}zzz",
        ] {
            assert!(inside < bound.as_str(), "{inside:?}");
        }
        assert!("ab\u{FF62}" >= bound.as_str());
    }

    #[test]
    fn negative_steps_are_rejected() {
        assert!(Step::parse(-1).is_err());
        assert_eq!(Step::parse(7).unwrap().get(), 7);
    }
}
