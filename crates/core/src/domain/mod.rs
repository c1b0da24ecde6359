//! Domain types: wire input parsed once at the edge into values that are valid by construction.

mod access;
mod arguments;
mod checksum;
mod fencing;
mod ids;
mod journal;
mod paging;
mod passed_over;
mod records;
mod text;
mod tool_window;
mod window;

pub use access::{ApiKey, Identity, NewApiKey, PresentedKey, Role, TenantScope, check_binding};
pub use arguments::ArgumentsDigest;
pub use checksum::{
    Checksum, Digest32, MessageChain, MessageLog, ToolChain, ToolJournal, checkpoint_checksum,
};
pub use fencing::{Attempt, Epoch};
pub use ids::{CallId, RunId, RunKey, Step, Tenant, prefix_upper_bound};
pub use journal::{
    EntryKind, InDoubt, IntentOutcome, JournalAction, JournalDiagnosis, JournalRepair,
    NewToolIntent, Repair, idempotency_key,
};
pub use paging::PageSize;
pub use passed_over::PassedOver;
pub use records::{
    CheckpointSummary, JournalScope, ListQuery, LoadOptions, Message, NewCheckpoint, NewToolResult,
    Quarantine, Restored, Resumed, RunInfo, SavedCheckpoint, StoredCheckpoint, ToolRecord, Verdict,
    verify_tool_journal,
};
pub use text::{MAX_LABEL_BYTES, MAX_TEXT_BYTES, check_label, check_no_nul, check_text};
pub use tool_window::{ToolWindow, covered_tools, verify_tool_window};
pub use window::{MessageWindow, WindowChains, WindowCut, covered_chain};
