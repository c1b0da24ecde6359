//! PgBouncer in front of the test Postgres, for the pooler tests: a database of its own per
//! test, reached through the transaction-mode pooler (`TEST_PGBOUNCER_TRANSACTION_URL`) by what
//! is under test and through the session-mode one (`TEST_PGBOUNCER_SESSION_URL`) by the test's
//! own raw SQL. `.ci/pgbouncer.sh` starts both and prints the two variables; when they are
//! unset, each test process starts a pair of its own (`throwaway/pgbouncer.rs`).
//!
//! A database rather than a schema: PgBouncer (1.18) refuses the `options` startup parameter
//! that selects a schema, and a `SET search_path` would not survive a transaction-mode pooler.

use tokio_postgres::NoTls;

use crate::postgres::execute_detached;
use crate::unique::unique_name;

/// `TEST_PGBOUNCER_TRANSACTION_URL`, or else this process's throwaway transaction-mode
/// PgBouncer (started on first use; a panic naming the package when pgbouncer is missing, so a
/// pooler test fails rather than passes without a pooler).
pub fn transaction_pooler_url() -> String {
    std::env::var("TEST_PGBOUNCER_TRANSACTION_URL")
        .unwrap_or_else(|_| crate::throwaway::pgbouncer_urls().transaction)
}

/// `TEST_PGBOUNCER_SESSION_URL`, or else the throwaway session-mode PgBouncer, as for
/// [`transaction_pooler_url`].
pub fn session_pooler_url() -> String {
    std::env::var("TEST_PGBOUNCER_SESSION_URL")
        .unwrap_or_else(|_| crate::throwaway::pgbouncer_urls().session)
}

/// `url` naming database `name` instead of its own, keeping any query.
pub fn url_with_database(url: &str, name: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_end = base.find("://").map_or(0, |scheme| scheme + 3);
    let host = match base[authority_end..].find('/') {
        Some(slash) => &base[..authority_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{host}/{name}?{query}"),
        None => format!("{host}/{name}"),
    }
}

/// A database of its own behind both poolers, dropped (connections and all) when this value
/// is dropped, even when the test panics.
pub struct PooledDatabase {
    pub name: String,
    transaction: String,
    session: String,
}

impl PooledDatabase {
    /// Creates `cpd_pool_<pid>_<n>_<nanos>` through the session pooler; panics when the pooler
    /// does not answer.
    pub async fn create() -> Self {
        let transaction = transaction_pooler_url();
        let session = session_pooler_url();
        let name = unique_name("cpd_pool", '_');
        connect(&session)
            .await
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|error| panic!("create database {name} via {session}: {error}"));
        Self {
            name,
            transaction,
            session,
        }
    }

    /// The database through the transaction-mode pooler: what the code under test uses.
    pub fn transaction_url(&self) -> String {
        url_with_database(&self.transaction, &self.name)
    }

    /// The database through the session-mode pooler: for a test's own SQL (named statements
    /// and all), and for what needs a session, like `LISTEN`.
    pub fn session_url(&self) -> String {
        url_with_database(&self.session, &self.name)
    }
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|error| panic!("connect to the pooler at {url}: {error}"));
    tokio::spawn(connection);
    client
}

impl Drop for PooledDatabase {
    fn drop(&mut self) {
        // FORCE ends the poolers' server connections to it, which would otherwise block the drop.
        let statement = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        execute_detached(self.session.clone(), statement);
    }
}

#[cfg(test)]
mod tests {
    use super::url_with_database;

    #[test]
    fn the_database_is_replaced_and_the_query_kept() {
        assert_eq!(
            url_with_database("postgres://u@h:6432/test?sslmode=disable", "d"),
            "postgres://u@h:6432/d?sslmode=disable"
        );
        assert_eq!(
            url_with_database("postgres://u@h:6432", "d"),
            "postgres://u@h:6432/d"
        );
    }
}
