//! The memory store as a [`TestBackend`], running the whole suite; the other backends run it
//! from their own crates, and the server's wrappers around this one.

use std::sync::Arc;

use super::{DAMAGED_DIGEST, DAMAGED_STATE, Damage, TestBackend};
use crate::store::{CheckpointStore, MemoryStore, RetentionStore};
use checkpointd_core::domain::{RunKey, Step};

pub struct MemoryBackend(Arc<MemoryStore>);

impl TestBackend for MemoryBackend {
    async fn create() -> Self {
        Self(Arc::new(MemoryStore::new()))
    }

    fn store(&self) -> Arc<dyn CheckpointStore> {
        self.0.clone()
    }

    fn retention(&self) -> Arc<dyn RetentionStore> {
        self.0.clone()
    }

    async fn damage_state(&self, run: &RunKey, step: Step) {
        self.0.overwrite_state(run, step, DAMAGED_STATE);
    }

    async fn damage_tool_output(&self, run: &RunKey, seq: u64) {
        self.0.overwrite_tool_output(run, seq, DAMAGED_STATE);
    }

    async fn damage(&self, run: &RunKey, damage: Damage) {
        match damage {
            Damage::ToolChain(seq) => self.0.overwrite_tool_chain(run, seq, DAMAGED_DIGEST),
            Damage::MessageContent(seq) => self.0.overwrite_message(run, seq, |message, _| {
                message.content = DAMAGED_STATE.to_vec();
            }),
            Damage::MessageChain(seq) => self.0.overwrite_message(run, seq, |_, chain| {
                *chain = DAMAGED_DIGEST;
            }),
        }
    }
}

#[cfg(test)]
mod suite {
    crate::store_behaviours!(super::MemoryBackend);
}
