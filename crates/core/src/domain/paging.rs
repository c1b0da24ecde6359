//! Page sizes of the listing RPCs, parsed once: zero asks for the default, and a page never
//! grows past the limit.

use std::fmt;

use crate::error::Error;

/// How many entries one page of a listing holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PageSize(usize);

impl PageSize {
    /// What a request that names no page size (`0` on the wire) gets.
    pub const DEFAULT: Self = Self(100);
    /// The largest page anyone may ask for.
    pub const MAX: Self = Self(1000);

    /// Parses a wire `page_size`: `0` is [`Self::DEFAULT`], anything above [`Self::MAX`] is
    /// refused rather than quietly shortened, so a client never mistakes a cut page for the end.
    pub fn parse(raw: u32) -> Result<Self, Error> {
        match usize::try_from(raw) {
            Ok(0) => Ok(Self::DEFAULT),
            Ok(size) if size <= Self::MAX.0 => Ok(Self(size)),
            _ => Err(Error::invalid(
                "page_size",
                format!("page_size {raw} is above the limit of {}", Self::MAX),
            )),
        }
    }

    pub fn get(self) -> usize {
        self.0
    }
}

impl fmt::Display for PageSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_asks_for_the_default_page() {
        assert_eq!(PageSize::parse(0).unwrap(), PageSize::DEFAULT);
        assert_eq!(PageSize::DEFAULT.get(), 100);
    }

    #[test]
    fn sizes_up_to_the_limit_are_taken_as_asked() {
        assert_eq!(PageSize::parse(1).unwrap().get(), 1);
        assert_eq!(PageSize::parse(1000).unwrap(), PageSize::MAX);
    }

    #[test]
    fn sizes_above_the_limit_are_refused_with_the_limit_named() {
        let refused = PageSize::parse(1001).unwrap_err();
        assert!(
            matches!(&refused, Error::InvalidField { .. }),
            "{refused:?}"
        );
        assert!(
            refused.to_string().contains("above the limit of 1000"),
            "{refused}"
        );
        assert!(PageSize::parse(u32::MAX).is_err());
    }
}
