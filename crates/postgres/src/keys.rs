//! API keys in the Postgres database, on the store's pool. Creating or revoking one notifies
//! every listening server process in the same statement (see `key_listener`).

use std::time::SystemTime;

use async_trait::async_trait;
use tokio_postgres::Row;

use crate::PostgresStore;
use crate::error::db;
use crate::key_listener::CHANNEL;
use checkpointd_core::domain::ApiKey;
use checkpointd_core::error::{Error, Result};
use checkpointd_core::time::whole_micros;
use checkpointd_storage::keys::{ApiKeyStore, KeyChange, KeyWatch, decode_binding, scope_text};

const COLUMNS: &str = "id, secret_hash, tenant, role, name, created_at, revoked_at";

#[async_trait]
impl ApiKeyStore for PostgresStore {
    async fn create_key(&self, key: &ApiKey) -> Result<()> {
        let client = self.client().await?;
        // One statement: the notification goes out if and only if the insert commits.
        let inserted = self
            .statements
            .query(
                &client,
                &format!(
                    "WITH created AS (INSERT INTO api_keys (id, secret_hash, tenant, role, name, \
                     created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                     ON CONFLICT (id) DO NOTHING RETURNING id) \
                     SELECT pg_notify('{CHANNEL}', id) FROM created"
                ),
                &[
                    &key.id,
                    &key.secret_hash,
                    &scope_text(&key.tenant),
                    &key.role.as_str(),
                    &key.name,
                    &whole_micros(key.created_at),
                    &key.revoked_at.map(whole_micros),
                ],
            )
            .await
            .map_err(db)?;
        if inserted.is_empty() {
            return Err(Error::Conflict(format!("api key {} exists", key.id)));
        }
        self.key_feed.publish(KeyChange::Key(key.id.clone()));
        Ok(())
    }

    async fn find_key(&self, id: &str) -> Result<Option<ApiKey>> {
        let client = self.client().await?;
        let row = self
            .statements
            .query_opt(
                &client,
                &format!("SELECT {COLUMNS} FROM api_keys WHERE id = $1"),
                &[&id],
            )
            .await
            .map_err(db)?;
        row.as_ref().map(decode).transpose()
    }

    async fn list_keys(&self) -> Result<Vec<ApiKey>> {
        let client = self.client().await?;
        let rows = self
            .statements
            .query(
                &client,
                &format!("SELECT {COLUMNS} FROM api_keys ORDER BY created_at, id"),
                &[],
            )
            .await
            .map_err(db)?;
        rows.iter().map(decode).collect()
    }

    async fn revoke_key(&self, id: &str, at: SystemTime) -> Result<bool> {
        let client = self.client().await?;
        // One statement: every listening server hears of the revocation when it commits.
        let found = self
            .statements
            .query(
                &client,
                &format!(
                    "WITH revoked AS (UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) \
                     WHERE id = $1 RETURNING id) SELECT pg_notify('{CHANNEL}', id) FROM revoked"
                ),
                &[&id, &whole_micros(at)],
            )
            .await
            .map_err(db)?;
        if found.is_empty() {
            return Ok(false);
        }
        self.key_feed.publish(KeyChange::Key(id.to_owned()));
        Ok(true)
    }

    fn watch_keys(&self) -> KeyWatch {
        self.key_feed.subscribe()
    }
}

fn decode(row: &Row) -> Result<ApiKey> {
    let column = |error: tokio_postgres::Error| Error::internal_from("api key row", error);
    let tenant: Option<String> = row.try_get("tenant").map_err(column)?;
    let role: String = row.try_get("role").map_err(column)?;
    let (tenant, role) = decode_binding(tenant, &role)?;
    Ok(ApiKey {
        id: row.try_get("id").map_err(column)?,
        secret_hash: row.try_get("secret_hash").map_err(column)?,
        tenant,
        role,
        name: row.try_get("name").map_err(column)?,
        created_at: row.try_get("created_at").map_err(column)?,
        revoked_at: row.try_get("revoked_at").map_err(column)?,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use checkpointd_storage::keys::ApiKeyStore;

    use crate::testing::TestSchema;

    checkpointd_storage::key_behaviours!(postgres, async {
        let schema = TestSchema::create().await;
        let store = schema.store().await;
        (Arc::new(store) as Arc<dyn ApiKeyStore>, schema)
    });
    checkpointd_storage::key_behaviours!(postgres_behind_a_transaction_pooler, async {
        let schema = TestSchema::behind_transaction_pooler().await;
        let store = schema.store().await;
        (Arc::new(store) as Arc<dyn ApiKeyStore>, schema)
    });
}
