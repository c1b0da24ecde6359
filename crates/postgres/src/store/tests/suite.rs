//! The whole checkpoint-store behaviour suite, run against the Postgres store.

use crate::testing::PostgresBackend;

checkpointd_storage::store_behaviours!(PostgresBackend);
