//! The `ApiKeyStore` behaviour suite, written once and run against memory, SQLite and Postgres.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use super::{ApiKeyStore, MemoryKeys};
use crate::domain::{ApiKey, NewApiKey, Role, Tenant, TenantScope};
use crate::error::Error;
use crate::store::SqliteStore;
use crate::store::tests::TestSchema;

/// Expands to one test per behaviour for a function that makes a fresh store.
macro_rules! key_behaviours {
    ($backend:ident, $create:expr) => {
        mod $backend {
            use super::*;

            key_behaviours!(@tests $create;
                a_created_key_is_found_by_id_with_its_binding,
                a_taken_id_is_a_conflict_and_changes_nothing,
                keys_are_listed_oldest_first,
                a_revocation_is_kept_once_and_unknown_ids_are_reported,
            );
        }
    };
    (@tests $create:expr; $($behaviour:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() {
                let (store, schema) = $create.await;
                super::$behaviour(store.as_ref()).await;
                // The pool goes before its schema is dropped.
                drop(store);
                drop(schema);
            }
        )*
    };
}

key_behaviours!(memory, async {
    (
        Arc::new(MemoryKeys::new()) as Arc<dyn ApiKeyStore>,
        None::<TestSchema>,
    )
});
key_behaviours!(sqlite, async {
    let store = SqliteStore::open(":memory:").await.unwrap();
    (Arc::new(store) as Arc<dyn ApiKeyStore>, None::<TestSchema>)
});
key_behaviours!(postgres, async {
    let schema = TestSchema::create().await;
    let store = schema.store().await;
    (Arc::new(store) as Arc<dyn ApiKeyStore>, Some(schema))
});

fn key(tenant: Option<&str>, role: Role, created_secs: u64) -> ApiKey {
    let fresh = NewApiKey::generate().unwrap();
    ApiKey {
        id: fresh.id,
        secret_hash: fresh.secret_hash,
        tenant: match tenant {
            Some(name) => TenantScope::One(Tenant::parse(name).unwrap()),
            None => TenantScope::All,
        },
        role,
        name: format!("key made at {created_secs}"),
        created_at: UNIX_EPOCH + Duration::from_micros(created_secs * 1_000_000 + 7),
        revoked_at: None,
    }
}

async fn a_created_key_is_found_by_id_with_its_binding(store: &dyn ApiKeyStore) {
    let agent = key(Some("acme"), Role::Agent, 10);
    let admin = key(None, Role::Admin, 11);
    store.create_key(&agent).await.unwrap();
    store.create_key(&admin).await.unwrap();
    assert_eq!(store.find_key(&agent.id).await.unwrap(), Some(agent));
    assert_eq!(store.find_key(&admin.id).await.unwrap(), Some(admin));
    assert_eq!(store.find_key("0000000000000000").await.unwrap(), None);
}

async fn a_taken_id_is_a_conflict_and_changes_nothing(store: &dyn ApiKeyStore) {
    let first = key(Some("acme"), Role::Agent, 10);
    store.create_key(&first).await.unwrap();
    let again = ApiKey {
        role: Role::Admin,
        tenant: TenantScope::All,
        ..first.clone()
    };
    let error = store.create_key(&again).await.unwrap_err();
    assert!(matches!(error, Error::Conflict(_)), "{error:?}");
    assert_eq!(store.find_key(&first.id).await.unwrap(), Some(first));
}

async fn keys_are_listed_oldest_first(store: &dyn ApiKeyStore) {
    let newer = key(Some("b"), Role::Operator, 20);
    let older = key(Some("a"), Role::Agent, 10);
    store.create_key(&newer).await.unwrap();
    store.create_key(&older).await.unwrap();
    let ids: Vec<String> = store
        .list_keys()
        .await
        .unwrap()
        .into_iter()
        .map(|key| key.id)
        .collect();
    assert_eq!(ids, [older.id, newer.id]);
}

async fn a_revocation_is_kept_once_and_unknown_ids_are_reported(store: &dyn ApiKeyStore) {
    let agent = key(Some("acme"), Role::Agent, 10);
    store.create_key(&agent).await.unwrap();
    let first = UNIX_EPOCH + Duration::from_secs(100);
    assert!(store.revoke_key(&agent.id, first).await.unwrap());
    let later = first + Duration::from_secs(50);
    assert!(store.revoke_key(&agent.id, later).await.unwrap());
    let stored = store.find_key(&agent.id).await.unwrap().unwrap();
    assert_eq!(stored.revoked_at, Some(first));
    assert!(!store.revoke_key("ffffffffffffffff", first).await.unwrap());
}
