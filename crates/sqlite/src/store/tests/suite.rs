//! The whole checkpoint-store behaviour suite, run against the SQLite store.

use crate::testing::SqliteBackend;

checkpointd_storage::store_behaviours!(SqliteBackend);
