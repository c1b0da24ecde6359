//! The Postgres schemas a bench run works in, `bench_<pid>_<n>`, and URLs that point into them.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::BoxError;

static NEXT_SCHEMA: AtomicU64 = AtomicU64::new(0);

/// The schemas this run creates, `bench_<pid>_<n>`; every one is dropped at the end, whatever
/// happened.
pub struct Schemas<'a> {
    pub admin: &'a tokio_postgres::Client,
    pub base: &'a str,
    created: Mutex<Vec<String>>,
}

impl<'a> Schemas<'a> {
    pub fn new(admin: &'a tokio_postgres::Client, base: &'a str) -> Self {
        Self {
            admin,
            base,
            created: Mutex::new(Vec::new()),
        }
    }

    /// Creates a schema and returns its name.
    pub async fn create(&self) -> Result<String, BoxError> {
        let name = format!(
            "bench_{}_{}",
            std::process::id(),
            NEXT_SCHEMA.fetch_add(1, Ordering::Relaxed)
        );
        self.created
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(name.clone());
        self.admin
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
            ))
            .await?;
        Ok(name)
    }

    /// Creates a schema and returns the Postgres URL that works in it.
    pub async fn create_url(&self) -> Result<String, BoxError> {
        Ok(url_with_schema(self.base, &self.create().await?))
    }

    pub async fn drop_all(&self) {
        let names = std::mem::take(
            &mut *self
                .created
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        for schema in names {
            if let Err(error) = self
                .admin
                .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                .await
            {
                eprintln!("bench: could not drop schema {schema}: {error}");
            }
        }
    }
}

/// Adds `options=-csearch_path=<schema>` to a Postgres URL.
pub fn url_with_schema(base: &str, schema: &str) -> String {
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}options=-csearch_path%3D{schema}")
}
