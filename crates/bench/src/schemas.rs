//! The Postgres schemas a bench run works in, `bench_<pid>_...`, and URLs that point into them.

use std::sync::Mutex;

use checkpointd_testkit::PgSchema;

use super::BoxError;

/// The schemas this run creates; every one is dropped at the end, whatever happened (by
/// [`Schemas::drop_all`], or failing that when the schemas themselves are dropped).
pub struct Schemas<'a> {
    pub admin: &'a tokio_postgres::Client,
    pub base: &'a str,
    created: Mutex<Vec<PgSchema>>,
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
        Ok(self.create_schema().await?.0)
    }

    /// Creates a schema and returns the Postgres URL that works in it.
    pub async fn create_url(&self) -> Result<String, BoxError> {
        Ok(self.create_schema().await?.1)
    }

    /// A new schema's name and URL; the schema itself is kept until [`Schemas::drop_all`].
    async fn create_schema(&self) -> Result<(String, String), BoxError> {
        let schema = PgSchema::create_in(self.base, "bench").await?;
        let created = (schema.name.clone(), schema.url());
        self.created
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(schema);
        Ok(created)
    }

    pub async fn drop_all(&self) {
        let schemas = std::mem::take(
            &mut *self
                .created
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        for schema in schemas {
            let name = schema.name.clone();
            if let Err(error) = schema.remove().await {
                eprintln!("bench: could not drop schema {name}: {error}");
            }
        }
    }
}
