//! checkpointd on Postgres, the source of truth in production: the checkpoint store, the task
//! queue and the API keys on one pool, with the migrations, SQLSTATE mapping and TLS settings
//! they share.
//!
//! - `store`: [`PostgresStore`], both store contracts.
//! - `queue`: [`PostgresQueue`], the task queue on the store's pool and schema.
//! - `keys`: the API key contract on the same pool; `key_listener`: the `LISTEN` that tells
//!   every server process of each key created or revoked.
//! - `notifications`: webhook endpoints, the outbox and deliveries on the same pool; the
//!   queue writes a transition's event in the transition's transaction.
//! - `statements`: the one way queries are sent, prepared and cached or (behind a
//!   transaction-mode pooler) unnamed.
//! - [`placement`]: where each table goes when distributed by tenant on Citus, the command
//!   that distributes them and the schema lint; `tenant_scans`: the locking scans over every
//!   tenant (reaper, webhook sender), run one tenant at a time.
//! - `error`: driver errors classified by SQLSTATE; [`tls`]: `sslmode` and certificates from
//!   the database URL; `testing` (feature `testing`): a schema per test.

mod error;
mod key_listener;
mod keys;
mod notifications;
pub mod placement;
mod pooler_probe;
mod queue;
mod statements;
mod store;
#[cfg(test)]
mod tenant_keys_migration_tests;
mod tenant_scans;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tls;

pub use queue::PostgresQueue;
pub use store::PostgresStore;
