//! API keys in the SQLite database, on the store's connections. Changes made through this
//! handle are told to its watchers; SQLite cannot tell of changes another process makes to the
//! file (`checkpointd keys revoke`), which a cache learns of when its entry expires.

use std::time::SystemTime;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, Row, params};

use crate::SqliteStore;
use crate::codec::{from_micros, to_micros};
use crate::error::DbResultExt;
use checkpointd_core::domain::ApiKey;
use checkpointd_core::error::{Error, Result};
use checkpointd_storage::keys::{ApiKeyStore, KeyChange, KeyWatch, decode_binding, scope_text};

const COLUMNS: &str = "id, secret_hash, tenant, role, name, created_at, revoked_at";

#[async_trait]
impl ApiKeyStore for SqliteStore {
    async fn create_key(&self, key: &ApiKey) -> Result<()> {
        let id = key.id.clone();
        let key = key.clone();
        self.write(move |conn| {
            let inserted = conn
                .execute(
                    "INSERT INTO api_keys (id, secret_hash, tenant, role, name, created_at, \
                     revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING",
                    params![
                        key.id,
                        key.secret_hash,
                        scope_text(&key.tenant),
                        key.role.as_str(),
                        key.name,
                        to_micros(key.created_at),
                        key.revoked_at.map(to_micros),
                    ],
                )
                .db()?;
            if inserted == 0 {
                return Err(Error::Conflict(format!("api key {} exists", key.id)));
            }
            Ok(())
        })
        .await?;
        self.key_changes.publish(KeyChange::Key(id));
        Ok(())
    }

    async fn find_key(&self, id: &str) -> Result<Option<ApiKey>> {
        let id = id.to_owned();
        self.read(move |conn| {
            conn.query_row(
                &format!("SELECT {COLUMNS} FROM api_keys WHERE id = ?1"),
                [id],
                raw,
            )
            .optional()
            .db()?
            .map(decode)
            .transpose()
        })
        .await
    }

    async fn list_keys(&self) -> Result<Vec<ApiKey>> {
        self.read(|conn| {
            let mut statement = conn
                .prepare(&format!(
                    "SELECT {COLUMNS} FROM api_keys ORDER BY created_at, id"
                ))
                .db()?;
            let rows = statement
                .query_map([], raw)
                .db()?
                .collect::<rusqlite::Result<Vec<_>>>()
                .db()?;
            rows.into_iter().map(decode).collect()
        })
        .await
    }

    async fn revoke_key(&self, id: &str, at: SystemTime) -> Result<bool> {
        let owned = id.to_owned();
        let found = self
            .write(move |conn| {
                let found = conn
                    .execute(
                        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                        params![owned, to_micros(at)],
                    )
                    .db()?;
                Ok(found > 0)
            })
            .await?;
        if found {
            self.key_changes.publish(KeyChange::Key(id.to_owned()));
        }
        Ok(found)
    }

    fn watch_keys(&self) -> KeyWatch {
        self.key_changes.subscribe()
    }
}

/// A row's columns, before the checks that need the crate's error type.
type RawKey = (
    String,
    Vec<u8>,
    Option<String>,
    String,
    String,
    i64,
    Option<i64>,
);

fn raw(row: &Row<'_>) -> rusqlite::Result<RawKey> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
    ))
}

fn decode((id, secret_hash, tenant, role, name, created_at, revoked_at): RawKey) -> Result<ApiKey> {
    let (tenant, role) = decode_binding(tenant, &role)?;
    Ok(ApiKey {
        id,
        secret_hash,
        tenant,
        role,
        name,
        created_at: from_micros(created_at),
        revoked_at: revoked_at.map(from_micros),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use checkpointd_storage::keys::ApiKeyStore;

    use crate::SqliteStore;

    checkpointd_storage::key_behaviours!(sqlite, async {
        let store = SqliteStore::open(":memory:").await.unwrap();
        (Arc::new(store) as Arc<dyn ApiKeyStore>, ())
    });
}
