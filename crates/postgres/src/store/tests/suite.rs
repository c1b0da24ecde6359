//! The whole checkpoint-store behaviour suite, run against the Postgres store: directly, and
//! through PgBouncer in transaction mode with unnamed statements (which fails, never skips,
//! without `TEST_PGBOUNCER_TRANSACTION_URL` / `TEST_PGBOUNCER_SESSION_URL`).

use crate::testing::PostgresBackend;

checkpointd_storage::store_behaviours!(PostgresBackend);

mod behind_a_transaction_pooler {
    use crate::testing::{PostgresBackend, TransactionPooler};

    checkpointd_storage::store_behaviours!(PostgresBackend<TransactionPooler>);
}
