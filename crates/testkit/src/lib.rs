//! Test support shared by checkpointd's crates and its benchmark: the test Postgres and Redis
//! (`TEST_DATABASE_URL` / `TEST_REDIS_URL`, or throwaway instances started from the binaries on
//! the machine when those are unset), a Postgres schema per test, a database per test behind
//! PgBouncer (`TEST_PGBOUNCER_*_URL`, or throwaway PgBouncers when those are unset),
//! `redis-server` processes a test owns (TLS and password optional), Postgres clusters with TLS,
//! certificates made at test time, an HTTPS server with canned answers, and an in-memory OTLP
//! collector.
//!
//! Nothing here knows checkpointd's types, so the server's own unit tests can use it without
//! compiling a second copy of the server.

mod https_server;
mod otlp_receiver;
mod pg_binaries;
mod pg_cluster;
mod pgbouncer;
mod pki;
mod postgres;
mod redis;
mod throwaway;
mod unique;
mod wait;

pub use https_server::{HttpsServer, RecordedRequest};
pub use otlp_receiver::{OtlpReceiver, ReceivedSpan};
pub use pg_cluster::{PgHba, PgTlsCluster};
pub use pgbouncer::{
    PooledDatabase, session_pooler_url, transaction_pooler_url, url_with_database,
};
pub use pki::{CertFiles, TestCa, first_cert_der};
pub use postgres::{PgSchema, connect_or_panic, database_url, url_with_schema};
pub use redis::{RedisOptions, RedisProcess, redis_connection, redis_url, unique_prefix};
pub use wait::wait_until;
