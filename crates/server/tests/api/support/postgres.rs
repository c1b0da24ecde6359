//! A fresh Postgres schema per test, so tests never see each other's rows.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio_postgres::NoTls;

/// `TEST_DATABASE_URL`, or the local default.
pub fn database_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// A schema created for one test and dropped when it ends.
pub struct PgSchema {
    pub name: String,
    base: String,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap_or_else(|error| {
        panic!(
            "tests need Postgres at {url} (set TEST_DATABASE_URL): {error}. \
             Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
        )
    });
    tokio::spawn(connection);
    client
}

impl PgSchema {
    pub async fn create() -> Self {
        let base = database_url();
        let name = format!(
            "cpd_test_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        connect(&base)
            .await
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .await
            .expect("create test schema");
        Self { name, base }
    }

    /// The database URL whose search_path is this schema.
    pub fn url(&self) -> String {
        url_with_schema(&self.base, &self.name)
    }

    pub async fn execute(&self, sql: &str) {
        connect(&self.url())
            .await
            .batch_execute(sql)
            .await
            .unwrap_or_else(|error| panic!("raw sql failed: {error}: {sql}"));
    }
}

/// Adds `options=-csearch_path=<schema>` to a URL.
pub fn url_with_schema(base: &str, schema: &str) -> String {
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}options=-csearch_path%3D{schema}")
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let base = self.base.clone();
        let name = self.name.clone();
        // Drop runs outside async context guarantees; a private runtime on a plain thread works
        // wherever the test is.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                if let Ok((client, connection)) = tokio_postgres::connect(&base, NoTls).await {
                    tokio::spawn(connection);
                    let _ = client
                        .batch_execute(&format!(
                            "SET lock_timeout = '10s'; DROP SCHEMA IF EXISTS {name} CASCADE"
                        ))
                        .await;
                }
            });
        })
        .join();
    }
}
