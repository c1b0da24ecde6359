//! The fencing tokens requests carry: a run's epoch (handed out by Resume) and a task's attempt
//! (handed out by Claim), parsed once from the wire and carried as these types down to the SQL
//! parameter. The fence rules live here, once, for every backend.

use std::fmt;

use super::RunKey;
use crate::error::{Error, Result};

/// The epoch a write claims to be made under. A write from an older epoch than the run's is
/// refused, so a worker that lost its run to a Resume cannot overwrite the new owner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Epoch(u64);

impl Epoch {
    /// The epoch of a run that was never resumed.
    pub const NEVER_RESUMED: Self = Self(0);

    /// The epoch of a Save or RecordToolResult: absent on the wire means the run was never
    /// resumed, which is what a writer that never called Resume has seen.
    pub fn from_wire(raw: Option<u64>) -> Self {
        raw.map_or(Self::NEVER_RESUMED, Self)
    }

    /// An epoch as a database column or a test names it.
    pub fn new(raw: u64) -> Self {
        Self(raw)
    }

    pub fn get(self) -> u64 {
        self.0
    }

    /// The epoch a Resume hands out after this one.
    pub fn next(self) -> Self {
        Self(self.0 + 1)
    }

    /// Fencing: a write must carry exactly the run's current epoch. An older one is a fenced
    /// writer (`StaleEpoch`); a newer one was never handed out (`EpochNotIssued`).
    pub fn check_write(self, current: Epoch) -> Result<()> {
        if self < current {
            return Err(Error::StaleEpoch(format!(
                "stale epoch {self}: the run was resumed at epoch {current}; this writer is fenced"
            )));
        }
        if self > current {
            return Err(Error::EpochNotIssued(format!(
                "epoch {self} was never issued: the run is at epoch {current}"
            )));
        }
        Ok(())
    }

    /// A retention delete planned at this epoch applies only while the run (`current`, `None`
    /// when it is gone) is still at it: a Resume since the facts were read refuses it.
    pub fn check_unmoved(self, run: &RunKey, current: Option<Epoch>) -> Result<()> {
        if current != Some(self) {
            return Err(Error::StaleEpoch(format!(
                "run {} moved to another epoch since its retention facts were read",
                run.run_id
            )));
        }
        Ok(())
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Attempt(u64);

impl Attempt {
    /// The attempt of a task never claimed.
    pub const NEVER_CLAIMED: Self = Self(0);

    /// Every wire value is an attempt; whether it is the lease's is the queue's to judge.
    pub fn from_wire(raw: u64) -> Self {
        Self(raw)
    }

    /// An attempt as a database column or a test names it.
    pub fn new(raw: u64) -> Self {
        Self(raw)
    }

    pub fn get(self) -> u64 {
        self.0
    }

    /// The attempt the next claim leases with.
    pub fn next(self) -> Self {
        Self(self.0 + 1)
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
    use crate::domain::{RunId, Tenant};

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
    fn only_the_current_epoch_may_write() {
        for (requested, current, allowed) in [
            (0, 0, true),
            (3, 3, true),
            (2, 3, false),
            (0, 1, false),
            (4, 3, false),
            (1, 0, false),
        ] {
            let checked = Epoch::new(requested).check_write(Epoch::new(current));
            assert_eq!(
                checked.is_ok(),
                allowed,
                "epoch {requested} on a run at {current}: {checked:?}"
            );
            if let Err(error) = checked {
                assert!(error.is_fenced(), "{error:?}");
            }
        }
    }

    #[test]
    fn a_retention_delete_is_refused_once_the_run_moved_or_is_gone() {
        let run = RunKey::new(Tenant::default_tenant(), RunId::parse("r").unwrap());
        let read = Epoch::new(4);
        assert!(read.check_unmoved(&run, Some(Epoch::new(4))).is_ok());
        assert!(matches!(
            read.check_unmoved(&run, Some(Epoch::new(5))),
            Err(Error::StaleEpoch(_))
        ));
        assert!(matches!(
            read.check_unmoved(&run, None),
            Err(Error::StaleEpoch(_))
        ));
    }

    #[test]
    fn an_attempt_keeps_the_number_it_was_claimed_with() {
        assert_eq!(Attempt::from_wire(3).get(), 3);
        assert_eq!(Attempt::from_wire(0).to_string(), "0");
        assert_eq!(Attempt::NEVER_CLAIMED.next(), Attempt::new(1));
    }
}
