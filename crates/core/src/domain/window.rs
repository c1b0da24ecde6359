//! A window of a checkpoint's message log: which messages a load reads, and how a window is
//! verified from the chain digests stored beside the log instead of from the whole history.
//!
//! Each stored message carries the message chain's head after it (checksum v1's running
//! digest). A window `[from, end)` is verified by recomputing the chain from the stored digest
//! before `from` over the window's messages: when the window reaches the log's end, the result
//! goes into the checkpoint's checksum; when it stops short, it must equal the stored digest
//! after `end`, and the stored head stands for the rest. Pages read one after another from 0
//! therefore chain into the checksum link by link, and a load costs what it returns.

use super::checksum::{Digest32, MessageChain};
use super::records::Message;
use crate::domain::MessageLog;

/// Which messages of a checkpoint a load reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageWindow {
    /// The first log position read, clamped to the checkpoint's `message_count`.
    pub offset: u64,
    /// The most message content bytes read; the window's first message is read whatever its
    /// size, so every window makes progress.
    pub max_bytes: usize,
}

impl MessageWindow {
    /// The whole log, as Validate and scrub read it.
    pub const ALL: Self = Self {
        offset: 0,
        max_bytes: usize::MAX,
    };

    /// The window from `offset` of at most `max_bytes`.
    pub fn new(offset: u64, max_bytes: usize) -> Self {
        Self { offset, max_bytes }
    }

    /// How many of `sizes` (content bytes of the messages from the window's offset on, in
    /// order) the window takes; see [`WindowCut::admit`].
    pub fn take(&self, sizes: impl IntoIterator<Item = usize>) -> usize {
        let mut cut = self.cut();
        sizes
            .into_iter()
            .take_while(|size| cut.admit(*size))
            .count()
    }

    /// The rule a backend cuts the window by as it reads messages one at a time.
    pub fn cut(&self) -> WindowCut {
        WindowCut {
            max_bytes: self.max_bytes,
            total: 0,
            taken: 0,
        }
    }
}

/// A window being filled: the one rule every backend cuts a window by.
#[derive(Clone, Copy, Debug)]
pub struct WindowCut {
    max_bytes: usize,
    total: usize,
    taken: usize,
}

impl WindowCut {
    /// Whether the next message, of `size` content bytes, belongs in the window: the first
    /// always does, then each while the running total stays within the window's bytes.
    pub fn admit(&mut self, size: usize) -> bool {
        let total = self.total.saturating_add(size);
        if self.taken > 0 && total > self.max_bytes {
            return false;
        }
        self.total = total;
        self.taken += 1;
        true
    }
}

/// The chain digests a backend stored beside the log around a window, as read with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowChains {
    /// The digest stored with the message before the window (`None` at offset 0 or when the
    /// row is missing).
    pub before: Option<Digest32>,
    /// The digest stored with the window's last message, read when the window stops short
    /// of the checkpoint's `message_count`.
    pub after: Option<Digest32>,
    /// The digest stored with the checkpoint's last message (`message_count - 1`), read when
    /// the window stops short.
    pub head: Option<Digest32>,
}

/// The message chain a checkpoint's checksum covers, established from a window: the chain
/// recomputed from the stored digest before it when the window reaches `message_count`, else
/// the stored head once the recomputed value matches the stored digest at the window's end.
pub fn covered_chain(
    messages: &[Message],
    from: u64,
    end: u64,
    message_count: u64,
    chains: &WindowChains,
) -> Result<MessageChain, String> {
    if messages.len() as u64 != end.saturating_sub(from) || end > message_count {
        return Err(format!(
            "message log holds {} of the {} messages the checkpoint covers",
            from + messages.len() as u64,
            message_count
        ));
    }
    let mut chain = if from == 0 {
        MessageChain::EMPTY
    } else {
        let head = chains
            .before
            .ok_or_else(|| format!("the chain digest stored before message {from} is missing"))?;
        MessageChain { len: from, head }
    };
    for message in messages {
        chain.push_message(message);
    }
    if end == message_count {
        return Ok(chain);
    }
    if chains.after != Some(chain.head) {
        return Err(format!(
            "messages {from}..{end} do not match the chain digest stored with them"
        ));
    }
    let head = chains.head.ok_or_else(|| {
        format!(
            "the chain digest stored with message {} is missing",
            message_count - 1
        )
    })?;
    Ok(MessageChain {
        len: message_count,
        head,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(content: &str) -> Message {
        Message {
            role: "user".into(),
            content: content.as_bytes().to_vec(),
        }
    }

    fn heads(log: &[Message]) -> Vec<Digest32> {
        let mut chain = MessageChain::EMPTY;
        log.iter()
            .map(|message| chain.push_message(message))
            .collect()
    }

    #[test]
    fn a_window_takes_at_least_one_message_then_what_fits() {
        let window = MessageWindow::new(0, 10);
        assert_eq!(window.take([50, 1]), 1);
        assert_eq!(window.take([4, 6, 1]), 2);
        assert_eq!(window.take([]), 0);
        assert_eq!(MessageWindow::ALL.take([usize::MAX, 5]), 2);
    }

    #[test]
    fn pages_chain_into_the_whole_log_and_a_changed_message_breaks_its_link() {
        let log: Vec<Message> = (0..6).map(|i| message(&format!("m{i}"))).collect();
        let stored = heads(&log);
        let whole = MessageChain::over_messages(&log);
        let chains = |from: usize, end: usize| WindowChains {
            before: from.checked_sub(1).map(|i| stored[i]),
            after: Some(stored[end - 1]),
            head: Some(stored[5]),
        };
        for (from, end) in [(0, 2), (2, 4), (4, 6), (0, 6), (3, 6)] {
            let covered = covered_chain(
                &log[from..end],
                from as u64,
                end as u64,
                6,
                &chains(from, end),
            );
            assert_eq!(covered, Ok(whole), "{from}..{end}");
        }
        let mut tampered = log[2..4].to_vec();
        tampered[1].content = b"changed".to_vec();
        assert!(covered_chain(&tampered, 2, 4, 6, &chains(2, 4)).is_err());
        let mut forged = chains(2, 4);
        forged.before = Some([7; 32]);
        assert!(covered_chain(&log[2..4], 2, 4, 6, &forged).is_err());
        assert!(
            covered_chain(&log[2..3], 2, 4, 6, &chains(2, 4)).is_err(),
            "a missing row"
        );
    }
}
