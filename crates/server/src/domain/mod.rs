//! Domain types: wire input parsed once at the edge into values that are valid by construction.

mod checksum;
mod ids;
mod records;

pub use checksum::{Checksum, Digest32, MessageChain, ToolChain, checkpoint_checksum};
pub use ids::{CallId, RunId, RunKey, Step, Tenant};
pub use records::{
    CheckpointSummary, Message, NewCheckpoint, NewToolResult, Quarantine, Restored, Resumed,
    SavedCheckpoint, StoredCheckpoint, ToolRecord, Verdict, verify_tool_journal,
};
