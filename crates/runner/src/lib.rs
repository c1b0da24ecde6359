//! The bundled runner: drives agents through the queue and the recovery loop. A client of
//! checkpointd over gRPC only: it depends on the protocol and telemetry crates, never the server,
//! and its Saves carry the client's checksum v1 for the server to verify (unless the tool journal
//! it saw has a gap; the server then computes the checksum alone).
//!
//! - [`agent`]: the `Agent` trait agents implement, one step at a time.
//! - [`agent_error`]: why a step failed, the error agents return.
//! - [`arguments`]: the digest of a tool call's arguments, and the check that a replay matches.
//! - [`context`]: what a step sees: state, messages, journalled tools, approvals.
//! - [`effects`]: side-effecting tools: intents, idempotency keys, in-doubt policies.
//! - [`strategy`]: when to checkpoint (`every_step`, `every_n`, `hybrid`, modifiers).
//! - [`classify`]: fatal versus transient errors.
//! - [`api`]: the checkpointd calls the runner makes, over gRPC ([`client`], dialled and stamped
//!   by the `checkpointd-client` crate) or a test double.
//! - [`pages`]: loads and resumes that follow paged answers, so a long history comes back whole.
//! - [`dial`]: how clients reach the server (`https://`, CA, client certificate, token), from
//!   `checkpointd-client`.
//! - [`claimed`]: a claimed task, the only thing that moves it through the queue.
//! - [`events`]: what the runner reports as it goes (`event ...` lines on stdout).
//! - [`task_end`]: how an attempt at a task ended.
//! - [`recovery`]: resume, step, checkpoint, resurrect, report.
//! - [`worker`]: claims, leases, heartbeats and graceful shutdown.
//! - [`demo_agent`]: a deterministic simulated agent with fault injection.
//! - [`worker_command`]: `checkpointd worker`, the runner as a process.

pub mod agent;
pub mod agent_error;
pub mod api;
pub mod arguments;
pub mod claimed;
pub mod classify;
pub mod client;
pub mod context;
pub mod demo_agent;
pub mod dial;
pub mod effects;
pub mod events;
pub mod pages;
pub mod recovery;
pub mod session;
pub mod shutdown;
pub mod stats;
pub mod strategy;
pub mod task_end;
pub mod worker;
pub mod worker_command;

pub use checkpointd_protocol::v1 as proto;

/// Parses a human duration such as `500ms`, `30s` or `2m` for the command line.
pub fn parse_duration(raw: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(raw).map_err(|error| format!("invalid duration {raw:?}: {error}"))
}
