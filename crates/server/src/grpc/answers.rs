//! How large a load's answer may be: the page of messages a client that follows continuations
//! gets at a time, the whole answer a client that does not may get, and the continuation token
//! that names the next page.
//!
//! A load reads only its window of the log ([`checkpointd_core::domain::MessageWindow`]), so a server
//! answering a 180 MB history holds one page of it per call, never the whole. A client that
//! declares `CLIENT_CAPABILITY_PAGED_MESSAGES` follows the token with LoadAtStep; one that does
//! not (an older client) gets the whole history up to `max_unpaged_bytes` and beyond that
//! `RESOURCE_EXHAUSTED`/`ANSWER_TOO_LARGE`, never a history silently cut short.

use crate::config::AnswerLimits;
use crate::proto;
use crate::service::answer_too_large;
use crate::service::checkpoints::NextPage;
use checkpointd_core::domain::{Checksum, MessageWindow, Step, StoredCheckpoint, ToolRecord};
use checkpointd_core::error::{Error, Result};

/// The token's layout version; a token of another version is refused as invalid.
const TOKEN_VERSION: u8 = 1;
/// Version, step, offset, checksum and the digest before the page, then the checkpoint id.
const TOKEN_FIXED_BYTES: usize = 1 + 8 + 8 + 32 + 32;

impl AnswerLimits {
    /// The message bytes one answer carries for a client that declares `capabilities`.
    pub fn window_bytes(&self, capabilities: &[i32]) -> usize {
        if pages(capabilities) {
            self.page_bytes
        } else {
            self.max_unpaged_bytes
        }
    }

    /// The continuation of an answer whose messages are `checkpoint`'s window: the token of the
    /// next page, or empty when the window reached the log's end. A client that does not follow
    /// continuations gets ANSWER_TOO_LARGE instead of part of the history.
    pub fn continuation(
        &self,
        checkpoint: &StoredCheckpoint,
        capabilities: &[i32],
    ) -> Result<Vec<u8>> {
        let Some(next) = NextPage::after(checkpoint)? else {
            return Ok(Vec::new());
        };
        if !pages(capabilities) {
            let window = MessageWindow::new(checkpoint.messages_from, self.max_unpaged_bytes);
            return Err(answer_too_large(checkpoint.step, window));
        }
        Ok(encode(&next))
    }
}

/// What an answer holds in memory: its state, metadata, messages and journal entries.
pub fn answer_bytes(checkpoint: &StoredCheckpoint, tools: &[ToolRecord]) -> usize {
    let metadata: usize = checkpoint
        .metadata
        .iter()
        .map(|(key, value)| key.len() + value.len())
        .sum();
    let messages: usize = checkpoint
        .messages
        .iter()
        .map(|message| message.role.len() + message.content.len())
        .sum();
    let journal: usize = tools.iter().map(|record| record.output.len()).sum();
    checkpoint.state.len() + metadata + messages + journal
}

/// Whether the client follows continuations.
pub fn pages(capabilities: &[i32]) -> bool {
    capabilities.contains(&(proto::ClientCapability::PagedMessages as i32))
}

/// The token of `page`: opaque to clients, and checked against the store on use, so a forged
/// one can only name a page the caller's tenant could load anyway.
pub fn encode(page: &NextPage) -> Vec<u8> {
    let mut token = Vec::with_capacity(TOKEN_FIXED_BYTES + page.checkpoint_id.len());
    token.push(TOKEN_VERSION);
    token.extend_from_slice(&page.step.as_i64().to_be_bytes());
    token.extend_from_slice(&page.offset.to_be_bytes());
    token.extend_from_slice(page.checksum.as_bytes());
    token.extend_from_slice(&page.before);
    token.extend_from_slice(page.checkpoint_id.as_bytes());
    token
}

/// The page a token names; INVALID_ARGUMENT for anything this server did not issue.
pub fn decode(token: &[u8]) -> Result<NextPage> {
    let invalid = || Error::invalid("continuation", "continuation is not one this server issued");
    if token.len() < TOKEN_FIXED_BYTES || token[0] != TOKEN_VERSION {
        return Err(invalid());
    }
    let (step, rest) = token[1..].split_at(8);
    let (offset, rest) = rest.split_at(8);
    let (checksum, rest) = rest.split_at(32);
    let (before, id) = rest.split_at(32);
    let step = i64::from_be_bytes(step.try_into().map_err(|_| invalid())?);
    Ok(NextPage {
        step: Step::parse(step).map_err(|_| invalid())?,
        offset: u64::from_be_bytes(offset.try_into().map_err(|_| invalid())?),
        checksum: Checksum::from_bytes(checksum.try_into().map_err(|_| invalid())?),
        before: before.try_into().map_err(|_| invalid())?,
        checkpoint_id: String::from_utf8(id.to_vec()).map_err(|_| invalid())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_the_page_it_was_made_for_and_nothing_else_decodes() {
        let page = NextPage {
            step: Step::new(7),
            checkpoint_id: "0190-abc".into(),
            checksum: Checksum::from_bytes([3; 32]),
            offset: 1234,
            before: [9; 32],
        };
        assert_eq!(decode(&encode(&page)).unwrap(), page);
        assert!(decode(b"").is_err());
        let mut other_version = encode(&page);
        other_version[0] = 2;
        assert!(decode(&other_version).is_err());
        assert!(decode(&encode(&page)[..40]).is_err());
    }
}
