//! The feed of key changes that caches of verified keys listen to: each backend publishes the
//! id of every key it creates or revokes (and the Postgres one, every change another process
//! commits), so a cache can drop what it holds for that key at once instead of waiting for its
//! entry to expire.
//!
//! The feed is a bounded broadcast: a listener that falls behind, or a backend that may have
//! missed changes (a dropped database connection), gets [`KeyChange::Resync`], meaning "forget
//! everything cached", so no change is ever silently lost to a cache that keeps serving.

use tokio::sync::broadcast;

/// Changes a slow listener may fall behind by before it is told to resync.
const BACKLOG: usize = 1024;

/// One thing a cache of verified keys must hear of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyChange {
    /// The key with this id was created or revoked: drop what is cached for it.
    Key(String),
    /// Changes may have been missed: drop everything cached.
    Resync,
}

/// The publishing end, kept by the backend; see the module documentation.
pub struct KeyChanges {
    sender: broadcast::Sender<KeyChange>,
}

impl Default for KeyChanges {
    fn default() -> Self {
        Self {
            sender: broadcast::channel(BACKLOG).0,
        }
    }
}

impl KeyChanges {
    pub fn new() -> Self {
        Self::default()
    }

    /// Tells every listener; with none listening, nothing is kept.
    pub fn publish(&self, change: KeyChange) {
        // An error only means nobody listens, which is fine.
        let _ = self.sender.send(change);
    }

    /// A listener that hears every change published from now on.
    pub fn subscribe(&self) -> KeyWatch {
        KeyWatch {
            receiver: self.sender.subscribe(),
        }
    }
}

/// The listening end: polled, never awaited, so reading it costs a cache nothing when there is
/// no news.
pub struct KeyWatch {
    receiver: broadcast::Receiver<KeyChange>,
}

impl KeyWatch {
    /// The next change not yet seen, or `None` when there is none now. Having fallen more
    /// than the backlog behind is [`KeyChange::Resync`].
    pub fn next_change(&mut self) -> Option<KeyChange> {
        match self.receiver.try_recv() {
            Ok(change) => Some(change),
            Err(broadcast::error::TryRecvError::Lagged(_)) => Some(KeyChange::Resync),
            Err(broadcast::error::TryRecvError::Empty | broadcast::error::TryRecvError::Closed) => {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listener_hears_each_change_once() {
        let changes = KeyChanges::new();
        let (mut a, mut b) = (changes.subscribe(), changes.subscribe());
        changes.publish(KeyChange::Key("k1".into()));
        for watch in [&mut a, &mut b] {
            assert_eq!(watch.next_change(), Some(KeyChange::Key("k1".into())));
            assert_eq!(watch.next_change(), None);
        }
    }

    #[test]
    fn a_listener_that_falls_behind_the_backlog_is_told_to_resync() {
        let changes = KeyChanges::new();
        let mut watch = changes.subscribe();
        for n in 0..BACKLOG + 1 {
            changes.publish(KeyChange::Key(format!("k{n}")));
        }
        assert_eq!(watch.next_change(), Some(KeyChange::Resync));
    }
}
