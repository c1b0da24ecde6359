//! The bundled runner: drives agents through the queue and the recovery loop.
//!
//! - [`agent`]: the `Agent` trait agents implement, one step at a time.
//! - [`context`]: what a step sees: state, messages, journalled tools, approvals.
//! - [`strategy`]: when to checkpoint (`every_step`, `every_n`, `hybrid`, modifiers).
//! - [`classify`]: fatal versus transient errors.
//! - [`recovery`]: resume, step, checkpoint, resurrect, report.
//! - [`worker`]: claims, leases, heartbeats and graceful shutdown.
//! - [`demo_agent`]: a deterministic simulated agent with fault injection.

pub mod agent;
pub mod classify;
pub mod client;
pub mod context;
pub mod demo;
pub mod demo_agent;
pub mod recovery;
pub mod session;
pub mod stats;
pub mod strategy;
pub mod worker;
pub mod worker_command;
