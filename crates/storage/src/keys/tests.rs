//! The `ApiKeyStore` behaviour suite, written once and run against memory, SQLite and Postgres.

use std::time::{Duration, UNIX_EPOCH};

use super::{ApiKeyStore, KeyChange};
use checkpointd_core::domain::{ApiKey, NewApiKey, Role, Tenant, TenantScope};
use checkpointd_core::error::Error;

/// Expands to a module `$backend` with one test per behaviour, each on a fresh store made by
/// `$create`: a future of the store and a guard (a test schema, say) dropped after it. Each
/// backend's crate calls it from its own tests.
#[macro_export]
macro_rules! key_behaviours {
    ($backend:ident, $create:expr) => {
        mod $backend {
            #[allow(unused_imports)]
            use super::*;

            $crate::key_behaviours!(@tests $create;
                a_created_key_is_found_by_id_with_its_binding,
                a_taken_id_is_a_conflict_and_changes_nothing,
                keys_are_listed_oldest_first,
                a_revocation_is_kept_once_and_unknown_ids_are_reported,
                creations_and_revocations_are_told_to_watchers_at_once,
            );
        }
    };
    (@tests $create:expr; $($behaviour:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() {
                let (store, guard) = $create.await;
                $crate::keys::tests::$behaviour(store.as_ref()).await;
                // The pool goes before its schema is dropped (a guard may be `()`).
                drop(store);
                #[allow(dropping_copy_types)]
                drop(guard);
            }
        )*
    };
}

#[cfg(test)]
key_behaviours!(memory, async {
    (
        std::sync::Arc::new(crate::keys::MemoryKeys::new()) as std::sync::Arc<dyn ApiKeyStore>,
        (),
    )
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

pub async fn a_created_key_is_found_by_id_with_its_binding(store: &dyn ApiKeyStore) {
    let agent = key(Some("acme"), Role::Agent, 10);
    let admin = key(None, Role::Admin, 11);
    store.create_key(&agent).await.unwrap();
    store.create_key(&admin).await.unwrap();
    assert_eq!(store.find_key(&agent.id).await.unwrap(), Some(agent));
    assert_eq!(store.find_key(&admin.id).await.unwrap(), Some(admin));
    assert_eq!(store.find_key("0000000000000000").await.unwrap(), None);
}

pub async fn a_taken_id_is_a_conflict_and_changes_nothing(store: &dyn ApiKeyStore) {
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

pub async fn keys_are_listed_oldest_first(store: &dyn ApiKeyStore) {
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

pub async fn a_revocation_is_kept_once_and_unknown_ids_are_reported(store: &dyn ApiKeyStore) {
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

pub async fn creations_and_revocations_are_told_to_watchers_at_once(store: &dyn ApiKeyStore) {
    let mut watch = store.watch_keys();
    let mut heard = || {
        // A backend that listens to its database may add a resync (its listener connecting)
        // and, later, its own change echoed back; only the change made here counts.
        std::iter::from_fn(|| watch.next_change())
            .filter(|change| *change != KeyChange::Resync)
            .collect::<Vec<_>>()
    };
    let agent = key(Some("acme"), Role::Agent, 10);
    store.create_key(&agent).await.unwrap();
    assert!(heard().contains(&KeyChange::Key(agent.id.clone())));
    assert!(store.revoke_key(&agent.id, UNIX_EPOCH).await.unwrap());
    assert!(heard().contains(&KeyChange::Key(agent.id.clone())));
    assert!(
        !store
            .revoke_key("ffffffffffffffff", UNIX_EPOCH)
            .await
            .unwrap()
    );
    assert!(!heard().contains(&KeyChange::Key("ffffffffffffffff".into())));
}
