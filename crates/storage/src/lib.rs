//! checkpointd's storage contracts and the memory backend that implements them all.
//!
//! - [`store`]: the `CheckpointStore` and `RetentionStore` contracts, `MemoryStore`, and
//!   `wrap_checkpoint_store!` for wrappers that forward to a store.
//! - [`queue`]: the `TaskQueue` contract and `MemoryQueue`.
//! - [`keys`]: the `ApiKeyStore` contract, `MemoryKeys`, and the feed of key changes that
//!   caches of verified keys listen to.
//! - [`notifications`]: the `NotificationStore` contract (webhook endpoints, the outbox,
//!   deliveries) and `MemoryNotifications`, which the memory queue writes its events to.
//! - [`migrations`]: the schema versions every SQL backend applies, named once.
//!
//! With the `testsuite` feature, each contract's behaviour suite (`store::tests`,
//! `queue::tests`, `keys::tests`, `notification_tests`, `outbox_tests`) is public, so the
//! database crates and the server's wrappers run the same behaviours from their own tests.

pub mod keys;
pub mod migrations;
#[cfg(any(test, feature = "testsuite"))]
pub mod notification_tests;
pub mod notifications;
#[cfg(any(test, feature = "testsuite"))]
pub mod outbox_tests;
pub mod queue;
pub mod store;

/// The core crate, for the paths `wrap_checkpoint_store!` expands to in other crates.
#[doc(hidden)]
pub use checkpointd_core as __core;
