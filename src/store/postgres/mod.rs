//! Postgres store, the source of truth in production.

pub struct PostgresStore;
