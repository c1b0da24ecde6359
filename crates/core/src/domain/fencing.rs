//! The fencing tokens requests carry: a run's epoch (handed out by Resume) and a task's attempt
//! (handed out by Claim), parsed once from the wire.

use std::fmt;

/// The epoch a write claims to be made under. A write from an older epoch than the run's is
/// refused, so a worker that lost its run to a Resume cannot overwrite the new owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Epoch(u64);

impl Epoch {
    /// The epoch of a run that was never resumed.
    pub const NEVER_RESUMED: Self = Self(0);

    /// The epoch of a Save or RecordToolResult: absent on the wire means the run was never
    /// resumed, which is what a writer that never called Resume has seen.
    pub fn from_wire(raw: Option<u64>) -> Self {
        raw.map_or(Self::NEVER_RESUMED, Self)
    }

    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The attempt a task was claimed with: the fencing token of its lease. Claims count from 1,
/// so `0` never matches a lease and the queue answers it as a lost lease, like any other
/// attempt that is not the current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Attempt(u64);

impl Attempt {
    /// Every wire value is an attempt; whether it is the lease's is the queue's to judge.
    pub fn from_wire(raw: u64) -> Self {
        Self(raw)
    }

    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_without_an_epoch_is_from_a_run_never_resumed() {
        assert_eq!(Epoch::from_wire(None), Epoch::NEVER_RESUMED);
        assert_eq!(Epoch::from_wire(None).get(), 0);
    }

    #[test]
    fn a_write_keeps_the_epoch_it_carries() {
        assert_eq!(Epoch::from_wire(Some(7)).get(), 7);
        assert!(Epoch::from_wire(Some(2)) > Epoch::from_wire(Some(1)));
    }

    #[test]
    fn an_attempt_keeps_the_number_it_was_claimed_with() {
        assert_eq!(Attempt::from_wire(3).get(), 3);
        assert_eq!(Attempt::from_wire(0).to_string(), "0");
    }
}
