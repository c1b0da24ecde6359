//! A window of a run's tool journal: which entries a load reads for its journal scope, and how
//! a window is verified from the chain digests stored beside the journal instead of from seq 1.
//!
//! Each journal entry carries the tool chain's head after it, as the message log does. A window
//! `[from, end of journal]` is verified link by link from the digest stored with entry
//! `from - 1`: every entry's stored digest must equal the chain recomputed over the entries
//! before it in the window, so a damaged entry, a hole or a forged digest before the window
//! (the recomputation then disagrees with the first stored digest after it) all fail. The
//! chain the checkpoint's checksum covers is then the verified digest at its `tool_count`: from
//! the window when the window holds that entry, else the digest stored there, which the
//! checksum itself checks. A load therefore costs the entries it returns, as
//! [`super::covered_chain`] makes it for messages.

use super::checksum::{Digest32, ToolChain};
use super::records::ToolRecord;
use crate::domain::ToolJournal;

/// Where a backend's journal read starts, and the chain digests stored around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolWindow {
    /// The seq of the first entry read: 1 for the whole journal, the first entry of the
    /// checkpoint's step for [`super::JournalScope::Step`] (the journal's length + 1 when the
    /// step has none), and past every entry for [`super::JournalScope::None`], which reads none.
    /// The entries read run from here to the journal's end.
    pub from: u64,
    /// The digest stored with entry `from - 1` (`None` when `from` is 1 or the row is missing).
    pub before: Option<Digest32>,
    /// The digest stored with entry `tool_count` of the checkpoint, read when the window does
    /// not hold that entry (`None` when `tool_count` is 0 or the row is missing).
    pub covered: Option<Digest32>,
}

impl ToolWindow {
    /// The whole journal, from seq 1: what Resume, Validate and a cache entry read.
    pub const WHOLE: Self = Self {
        from: 1,
        before: None,
        covered: None,
    };

    /// The `from` of a window holding no entry, what [`super::JournalScope::None`] reads:
    /// past every seq, and the largest one a SQL bigint holds, so every backend agrees on it.
    pub const NO_ENTRIES: u64 = i64::MAX as u64;

    /// Whether the window is the whole journal.
    pub fn is_whole(&self) -> bool {
        self.from <= 1
    }
}

impl Default for ToolWindow {
    fn default() -> Self {
        Self::WHOLE
    }
}

/// Verifies the journal entries a load read: a gapless run of seqs from `window.from`, each
/// stored digest equal to the tool chain recomputed from the digest stored before the window.
/// Over the whole journal this is the full check (nothing stored is trusted).
pub fn verify_tool_window(tools: &[ToolRecord], window: &ToolWindow) -> Result<(), String> {
    let Some(first) = tools.first() else {
        return Ok(());
    };
    let from = window.from.max(1);
    let mut chain = if from == 1 {
        ToolChain::EMPTY
    } else {
        let head = window.before.ok_or_else(|| {
            format!(
                "the chain digest stored with tool journal entry {} is missing",
                from - 1
            )
        })?;
        ToolChain {
            len: from - 1,
            head,
        }
    };
    if first.seq != from {
        return Err(format!(
            "tool journal has a hole: entry {from} carries seq {}",
            first.seq
        ));
    }
    for (index, record) in tools.iter().enumerate() {
        let expected = from + index as u64;
        if record.seq != expected {
            return Err(format!(
                "tool journal has a hole: entry {expected} carries seq {}",
                record.seq
            ));
        }
        if chain.push_record(record) != record.chain {
            return Err(format!(
                "tool result {} (seq {}) does not match its digest",
                record.call_id, record.seq
            ));
        }
    }
    Ok(())
}

/// The tool chain a checkpoint covering the journal's first `tool_count` entries has in its
/// checksum, established from a window verified by [`verify_tool_window`]: the digest of entry
/// `tool_count` from the window when it holds it, the digest before the window when that is
/// the one, else the digest stored with that entry. A forged digest standing for it makes
/// the checksum disagree.
pub fn covered_tools(
    tools: &[ToolRecord],
    tool_count: u64,
    window: &ToolWindow,
) -> Result<ToolChain, String> {
    if tool_count == 0 {
        return Ok(ToolChain::EMPTY);
    }
    let from = window.from.max(1);
    let held = tool_count
        .checked_sub(from)
        .and_then(|index| usize::try_from(index).ok())
        .and_then(|index| tools.get(index));
    let head = match held {
        Some(record) if record.seq != tool_count => {
            return Err(format!(
                "tool journal has a hole: entry {tool_count} carries seq {}",
                record.seq
            ));
        }
        Some(record) => Some(record.chain),
        None if tool_count == from - 1 => window.before,
        None => window.covered,
    };
    let head = head.ok_or_else(|| {
        format!("tool journal holds fewer than the {tool_count} results the checkpoint covers")
    })?;
    Ok(ToolChain {
        len: tool_count,
        head,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{CallId, EntryKind, Step};
    use std::time::SystemTime;

    fn journal(steps: &[u64]) -> Vec<ToolRecord> {
        let mut chain = ToolChain::EMPTY;
        steps
            .iter()
            .enumerate()
            .map(|(index, step)| {
                let mut record = ToolRecord {
                    kind: EntryKind::Result,
                    call_id: CallId::parse(&format!("call-{index}")).unwrap(),
                    tool_name: "search".into(),
                    step: Step::new(*step),
                    output: format!("out-{index}").into_bytes(),
                    is_error: false,
                    seq: index as u64 + 1,
                    recorded_at: SystemTime::UNIX_EPOCH,
                    chain: [0; 32],
                    arguments_digest: Default::default(),
                };
                record.chain = chain.push_record(&record);
                record
            })
            .collect()
    }

    fn window(whole: &[ToolRecord], from: u64, tool_count: u64) -> ToolWindow {
        let stored = |seq: u64| {
            seq.checked_sub(1)
                .and_then(|index| whole.get(index as usize))
                .map(|record| record.chain)
        };
        ToolWindow {
            from,
            before: stored(from - 1),
            covered: stored(tool_count),
        }
    }

    fn recomputed(whole: &[ToolRecord], tool_count: usize) -> ToolChain {
        let mut chain = ToolChain::EMPTY;
        for record in &whole[..tool_count] {
            chain.push_record(record);
        }
        chain
    }

    #[test]
    fn every_window_gives_the_chain_recomputed_from_seq_one() {
        let whole = journal(&[1, 1, 2, 2, 3, 3]);
        for tool_count in 0..=6u64 {
            for from in 1..=7u64 {
                let read = &whole[(from - 1) as usize..];
                let window = window(&whole, from, tool_count);
                verify_tool_window(read, &window).unwrap();
                assert_eq!(
                    covered_tools(read, tool_count, &window),
                    Ok(recomputed(&whole, tool_count as usize)),
                    "from {from}, tool_count {tool_count}"
                );
            }
        }
        let none = ToolWindow {
            from: ToolWindow::NO_ENTRIES,
            ..window(&whole, 1, 4)
        };
        assert_eq!(covered_tools(&[], 4, &none), Ok(recomputed(&whole, 4)));
    }

    #[test]
    fn a_damaged_entry_in_the_window_fails_and_one_before_it_is_not_read() {
        let mut damaged = journal(&[1, 1, 2, 2]);
        damaged[2].output = b"changed".to_vec();
        assert!(verify_tool_window(&damaged[2..], &window(&damaged, 3, 4)).is_err());
        // Entry 1 lies before a window from 4: the window does not depend on it.
        let mut early = journal(&[1, 1, 2, 2]);
        early[0].output = b"changed".to_vec();
        verify_tool_window(&early[3..], &window(&early, 4, 4)).unwrap();
    }

    #[test]
    fn a_forged_digest_before_the_window_disagrees_with_the_first_entry() {
        let whole = journal(&[1, 2, 2]);
        let mut forged = window(&whole, 2, 3);
        forged.before = Some([7; 32]);
        assert!(verify_tool_window(&whole[1..], &forged).is_err());
        forged.before = None;
        assert!(verify_tool_window(&whole[1..], &forged).is_err(), "missing");
    }

    #[test]
    fn a_forged_covered_digest_changes_the_chain_the_checksum_sees() {
        let whole = journal(&[1, 2, 3]);
        let mut forged = window(&whole, 3, 1);
        forged.covered = Some([7; 32]);
        let covered = covered_tools(&whole[2..], 1, &forged).unwrap();
        assert_ne!(covered, recomputed(&whole, 1));
    }

    #[test]
    fn a_hole_or_a_journal_shorter_than_the_checkpoint_fails() {
        let whole = journal(&[1, 1, 1]);
        let holed = [whole[0].clone(), whole[2].clone()];
        assert!(verify_tool_window(&holed, &ToolWindow::WHOLE).is_err());
        assert!(verify_tool_window(&whole[1..], &window(&whole, 1, 3)).is_err());
        assert!(covered_tools(&whole, 4, &ToolWindow::WHOLE).is_err());
        let missing = ToolWindow {
            covered: None,
            ..window(&whole, 3, 1)
        };
        assert!(covered_tools(&whole[2..], 1, &missing).is_err());
    }
}
