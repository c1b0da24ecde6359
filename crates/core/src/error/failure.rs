//! A driver or internal failure: a short context of ours and, when there is one, the error that
//! caused it, kept whole so a log line can show its chain.

use std::error::Error as StdError;
use std::sync::Arc;

/// The error under a failure, shared so [`super::Error`] stays `Clone` (a batch of saves hands
/// one failure to every waiter).
pub type Source = Arc<dyn StdError + Send + Sync>;

/// `context` followed by each error in the chain from `source` that adds something
/// (`: `-separated): the detail an operator reads in the log, never sent to a client.
pub fn detail(context: &str, source: Option<&(dyn StdError + 'static)>) -> String {
    let mut text = context.to_owned();
    for cause in std::iter::successors(source, |&cause| cause.source()) {
        let cause = cause.to_string();
        // Drivers often repeat their source's text in their own; say it once.
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// `text` cut to at most `max_bytes`, on a character boundary: error texts are kept bounded
/// wherever they are stored (a task's last error, a webhook delivery's).
pub fn truncated(mut text: String, max_bytes: usize) -> String {
    if text.len() > max_bytes {
        let mut cut = max_bytes;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[derive(Debug, thiserror::Error)]
    #[error("error communicating with the server")]
    struct Driver(#[source] io::Error);

    #[test]
    fn the_detail_shows_the_context_then_every_source() {
        let source = Driver(io::Error::other("connection refused"));
        assert_eq!(
            detail("postgres", Some(&source)),
            "postgres: error communicating with the server: connection refused"
        );
        assert_eq!(
            detail("the save batcher is closed", None),
            "the save batcher is closed"
        );
    }
}
