//! A fresh Postgres schema per test (or per benchmark measurement), so nobody sees anyone
//! else's rows: parallel tests, parallel test binaries, or a benchmark next to them.

use tokio_postgres::NoTls;

use crate::unique::unique_name;

/// `TEST_DATABASE_URL`, or (when it is unset) a Postgres of this process's own, started on
/// the first call from the binaries on the machine and removed after the process exits.
pub fn database_url() -> String {
    crate::throwaway::tests_database_url()
}

/// Adds `options=-csearch_path=<schema>` to a Postgres URL, keeping any query it has.
pub fn url_with_schema(base: &str, schema: &str) -> String {
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}options=-csearch_path%3D{schema}")
}

/// A schema of its own, dropped (with everything in it) when this value is dropped, even when
/// a test panics.
pub struct PgSchema {
    pub name: String,
    base: String,
    /// Cleared once [`PgSchema::remove`] has dropped the schema, so Drop does nothing more.
    armed: bool,
}

async fn connect(url: &str) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

/// Connects for a test (raw SQL around whatever is under test), panicking with how to start
/// Postgres when it is not there.
pub async fn connect_or_panic(url: &str) -> tokio_postgres::Client {
    connect(url)
        .await
        .unwrap_or_else(|error| panic_without_postgres(url, &error))
}

fn panic_without_postgres(url: &str, error: &tokio_postgres::Error) -> ! {
    panic!(
        "tests need Postgres at {url} (TEST_DATABASE_URL, or unset it to have the tests \
         start their own): {error}"
    )
}

impl PgSchema {
    /// A schema `cpd_test_...` in the `TEST_DATABASE_URL` database; panics when Postgres is
    /// unreachable, so a test needing it fails loudly instead of passing vacuously.
    pub async fn create() -> Self {
        let base = database_url();
        Self::create_in(&base, "cpd_test")
            .await
            .unwrap_or_else(|error| panic_without_postgres(&base, &error))
    }

    /// A schema `<prefix>_<pid>_<n>_<nanos>` in the database at `base`.
    pub async fn create_in(base: &str, prefix: &str) -> Result<Self, tokio_postgres::Error> {
        let name = unique_name(prefix, '_');
        connect(base)
            .await?
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .await?;
        Ok(Self {
            name,
            base: base.to_owned(),
            armed: true,
        })
    }

    /// The database URL whose search_path is this schema.
    pub fn url(&self) -> String {
        url_with_schema(&self.base, &self.name)
    }

    /// Runs statements inside the schema, bypassing whatever is under test.
    pub async fn execute(&self, sql: &str) {
        connect_or_panic(&self.url())
            .await
            .batch_execute(sql)
            .await
            .unwrap_or_else(|error| panic!("raw sql failed: {error}: {sql}"));
    }

    /// Drops the schema now, reporting a failure that Drop would have to swallow.
    pub async fn remove(mut self) -> Result<(), tokio_postgres::Error> {
        self.armed = false;
        connect(&self.base)
            .await?
            .batch_execute(&drop_statement(&self.name))
            .await
    }
}

/// Bounded by a lock timeout, so a connection still holding a lock can leak a schema but never
/// hang the test (or benchmark) that is ending.
fn drop_statement(name: &str) -> String {
    format!("SET lock_timeout = '10s'; DROP SCHEMA IF EXISTS {name} CASCADE")
}

/// Runs `statement` at `url` from a Drop, which cannot await: on a private runtime on a plain
/// thread, which works whether or not a runtime is running here. Failures are swallowed.
pub(crate) fn execute_detached(url: String, statement: String) {
    let _ = std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        runtime.block_on(async {
            if let Ok(client) = connect(&url).await {
                let _ = client.batch_execute(&statement).await;
            }
        });
    })
    .join();
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let base = self.base.clone();
        let statement = drop_statement(&self.name);
        // On a current-thread test runtime, connections the test left open are not polled
        // meanwhile, which is why the lock timeout above bounds the wait.
        execute_detached(base, statement);
    }
}

#[cfg(test)]
mod tests {
    use super::url_with_schema;

    #[test]
    fn schema_options_join_an_existing_query() {
        assert_eq!(
            url_with_schema("postgres://h/db", "s"),
            "postgres://h/db?options=-csearch_path%3Ds"
        );
        assert_eq!(
            url_with_schema("postgres://h/db?sslmode=disable", "s"),
            "postgres://h/db?sslmode=disable&options=-csearch_path%3Ds"
        );
    }
}
