//! Postgres store, the source of truth in production.

use async_trait::async_trait;

use super::{CheckpointStore, Snapshot, StoreOptions, Which};
use crate::domain::{
    CheckpointSummary, MessageChain, NewCheckpoint, NewToolResult, RunKey, SavedCheckpoint, Step,
    ToolRecord,
};
use crate::error::{Error, Result};

pub struct PostgresStore;

impl PostgresStore {
    /// Connects a pool to `url` and applies migrations under an advisory lock.
    pub async fn connect(url: &str, options: &StoreOptions) -> Result<Self> {
        let _ = (url, options);
        Err(Error::Internal("postgres store is not built yet".into()))
    }
}

#[async_trait]
impl CheckpointStore for PostgresStore {
    async fn save(&self, _: &NewCheckpoint) -> Result<SavedCheckpoint> {
        unimplemented!()
    }
    async fn record_tool_result(&self, _: &NewToolResult) -> Result<(ToolRecord, bool)> {
        unimplemented!()
    }
    async fn load(&self, _: &RunKey, _: Which) -> Result<Option<Snapshot>> {
        unimplemented!()
    }
    async fn tools(&self, _: &RunKey) -> Result<Vec<ToolRecord>> {
        unimplemented!()
    }
    async fn steps(&self, _: &RunKey) -> Result<Vec<Step>> {
        unimplemented!()
    }
    async fn quarantine(&self, _: &RunKey, _: Step, _: &str) -> Result<()> {
        unimplemented!()
    }
    async fn begin_resume(&self, _: &RunKey) -> Result<u64> {
        unimplemented!()
    }
    async fn rewind(&self, _: &RunKey, _: u64, _: MessageChain) -> Result<()> {
        unimplemented!()
    }
    async fn list(&self, _: &RunKey, _: Option<Step>, _: usize) -> Result<Vec<CheckpointSummary>> {
        unimplemented!()
    }
    async fn run_exists(&self, _: &RunKey) -> Result<bool> {
        unimplemented!()
    }
    async fn delete_run(&self, _: &RunKey) -> Result<u64> {
        unimplemented!()
    }
    async fn ping(&self) -> Result<()> {
        unimplemented!()
    }
}
