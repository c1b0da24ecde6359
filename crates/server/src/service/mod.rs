//! The service layer: the rules every caller goes through, whatever the transport. The gRPC
//! adapters convert, call one of these and map the error; the maintenance jobs call them too.
//!
//! - [`checkpoints`]: the checkpoint engine (verification, fallback); `resume` adds Resume,
//!   `unpaged` the size refusal for clients that do not page, `deletes` DeleteCheckpoints.
//! - [`journal`]: tool intents, the operator's view of a run's journal and its repairs.
//! - [`retention`]: an operator's retention policies and pins.
//! - [`tasks`]: the task queue with its defaults, and the pins that keep an approval's
//!   checkpoint while the task waits.

pub mod checkpoints;
mod deletes;
pub mod journal;
mod resume;
pub mod retention;
pub mod tasks;
mod unpaged;

pub use checkpoints::Engine;
pub use deletes::MAX_DELETE_STEPS;
pub use journal::JournalView;
pub use resume::ResumeOptions;
pub use retention::RetentionService;
pub use tasks::{EnqueueTask, RetryOverrides, TaskService};
pub use unpaged::answer_too_large;

/// Every service the transports serve, built once, by the composition root ([`crate::app`]).
#[derive(Clone)]
pub struct Services {
    /// The checkpoint engine over the store, with the cache in front when there is one.
    pub engine: Engine,
    /// Operator retention on the same database, reached around any cache.
    pub retention: RetentionService,
    /// The task queue's rules, when the server serves a queue.
    pub tasks: Option<TaskService>,
    /// Webhook endpoints, deliveries and the watch streams, when the server serves them.
    pub notifications: Option<crate::notify::Notifications>,
}

#[cfg(test)]
mod tests;
