//! checkpointd on SQLite, the embedded default: one database file holds the checkpoint store,
//! the task queue and the API keys, with the migrations, driver-error mapping and time codec
//! they share.
//!
//! - `store`: [`SqliteStore`], both store contracts.
//! - `queue`: [`SqliteQueue`], the task queue on the store's file and connections.
//! - `keys`: the API key contract on the same file.
//! - `notifications`: webhook endpoints, the outbox and deliveries on the same file; the queue
//!   writes a transition's event in the transition's transaction.
//! - `codec` and `error`: column conversions and driver-error classification, shared by all
//!   three; `testing` (feature `testing`): the store as a behaviour-suite backend.

mod codec;
mod error;
mod keys;
mod notifications;
mod queue;
mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use queue::SqliteQueue;
pub use store::SqliteStore;
