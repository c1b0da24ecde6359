//! Retention and scrub primitives: run policies, pins, fenced prunes and the store-wide keyset
//! listings. Kept apart from the core behaviours because they form a contract of their own.

use super::{TestBackend, checkpoint, load_latest, run, steps};
use crate::store::{CheckpointRef, CheckpointStore, RetentionStore};
use checkpointd_core::domain::{Epoch, ListQuery, RunKey, Step, Tenant};
use checkpointd_core::error::{Error, Missing};

/// Saves `numbers` as the run's steps, with no messages.
async fn save_steps(store: &dyn CheckpointStore, key: &RunKey, numbers: &[u64]) {
    for step in numbers {
        store.save(&checkpoint(key, *step, 0, &[])).await.unwrap();
    }
}

/// Which of the run's steps retention sees as pinned.
async fn pinned(retention: &dyn RetentionStore, key: &RunKey) -> Vec<Step> {
    let facts = retention.retention_facts(key).await.unwrap().unwrap();
    facts
        .checkpoints
        .iter()
        .filter(|facts| facts.pinned())
        .map(|facts| facts.step)
        .collect()
}

pub async fn set_retention_is_read_back_in_the_retention_facts(backend: &impl TestBackend) {
    let store = backend.store();
    let retention = backend.retention();
    let key = run("default", "run-1");
    assert!(retention.retention_facts(&key).await.unwrap().is_none());
    // Setting a policy creates the run.
    retention
        .set_retention(&key, Some("keep_last:2"))
        .await
        .unwrap();
    assert!(store.run_exists(&key).await.unwrap());
    let facts = retention.retention_facts(&key).await.unwrap().unwrap();
    assert_eq!(facts.policy.as_deref(), Some("keep_last:2"));
    assert_eq!(facts.epoch.get(), 0);
    assert!(facts.checkpoints.is_empty());

    save_steps(&*store, &key, &[1, 2, 3]).await;
    store
        .quarantine(&key, Step::new(2), "damaged")
        .await
        .unwrap();
    assert_eq!(store.begin_resume(&key).await.unwrap(), Epoch::new(1));
    let facts = retention.retention_facts(&key).await.unwrap().unwrap();
    assert_eq!(facts.epoch.get(), 1);
    let seen: Vec<_> = facts
        .checkpoints
        .iter()
        .map(|facts| (facts.step.get(), facts.quarantined, facts.pinned()))
        .collect();
    assert_eq!(
        seen,
        [(1, false, false), (2, true, false), (3, false, false)]
    );
    let listed = store
        .list(&key, &ListQuery::ascending(None, 10))
        .await
        .unwrap();
    let created: Vec<_> = listed.iter().map(|summary| summary.created_at).collect();
    let facts_created: Vec<_> = facts.checkpoints.iter().map(|f| f.created_at).collect();
    assert_eq!(facts_created, created);

    retention.set_retention(&key, None).await.unwrap();
    let facts = retention.retention_facts(&key).await.unwrap().unwrap();
    assert_eq!(facts.policy, None);
    assert_eq!(facts.checkpoints.len(), 3);
}

pub async fn pins_are_per_source_and_default_to_the_latest_valid_step(backend: &impl TestBackend) {
    let store = backend.store();
    let retention = backend.retention();
    let key = run("default", "run-1");
    // Nothing to pin, in a run that does not exist or has no checkpoint.
    assert_eq!(retention.pin(&key, None, "operator").await.unwrap(), None);
    store.begin_resume(&key).await.unwrap();
    assert_eq!(retention.pin(&key, None, "operator").await.unwrap(), None);
    let error = retention
        .pin(&run("default", "ghost"), Some(Step::new(1)), "operator")
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::NotFound(Missing::CheckpointAt { .. })),
        "{error:?}"
    );

    let mut request = checkpoint(&key, 1, 0, &[]);
    for step in [1, 2, 3] {
        request.step = Step::new(step);
        request.epoch = Epoch::new(1);
        store.save(&request).await.unwrap();
    }
    store
        .quarantine(&key, Step::new(3), "damaged")
        .await
        .unwrap();
    // No step given: the highest step that is not quarantined.
    assert_eq!(
        retention.pin(&key, None, "operator").await.unwrap(),
        Some(Step::new(2))
    );
    let error = retention
        .pin(&key, Some(Step::new(7)), "operator")
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::NotFound(Missing::CheckpointAt { .. })),
        "{error:?}"
    );
    // Pinning twice is harmless; a quarantined step may be pinned too.
    for _ in 0..2 {
        assert_eq!(
            retention
                .pin(&key, Some(Step::new(1)), "approval:t1")
                .await
                .unwrap(),
            Some(Step::new(1))
        );
    }
    retention
        .pin(&key, Some(Step::new(3)), "operator")
        .await
        .unwrap();
    assert_eq!(pinned(&*retention, &key).await, steps(&[1, 2, 3]));
}

pub async fn retention_facts_name_every_source_pinning_a_step_in_one_tenant(
    backend: &impl TestBackend,
) {
    let store = backend.store();
    let retention = backend.retention();
    let key = run("default", "run-1");
    let other_tenant = run("acme", "run-1");
    save_steps(&*store, &key, &[1, 2, 3]).await;
    save_steps(&*store, &other_tenant, &[1, 2, 3]).await;
    for (step, source) in [(1, "operator"), (1, "approval:t1"), (3, "approval:t2")] {
        retention
            .pin(&key, Some(Step::new(step)), source)
            .await
            .unwrap();
    }
    retention
        .pin(&other_tenant, Some(Step::new(2)), "operator")
        .await
        .unwrap();
    let sources = |facts: crate::store::RetentionFacts| -> Vec<(u64, Vec<String>)> {
        facts
            .checkpoints
            .into_iter()
            .map(|facts| (facts.step.get(), facts.pinned_by))
            .collect()
    };
    let facts = retention.retention_facts(&key).await.unwrap().unwrap();
    assert_eq!(
        sources(facts),
        [
            (1, vec!["approval:t1".to_owned(), "operator".to_owned()]),
            (2, vec![]),
            (3, vec!["approval:t2".to_owned()]),
        ]
    );
    let facts = retention
        .retention_facts(&other_tenant)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        sources(facts),
        [(1, vec![]), (2, vec!["operator".to_owned()]), (3, vec![])]
    );
}

pub async fn unpin_removes_one_source_or_every_source(backend: &impl TestBackend) {
    let store = backend.store();
    let retention = backend.retention();
    let key = run("default", "run-1");
    assert_eq!(retention.unpin(&key, None, None).await.unwrap(), 0);
    save_steps(&*store, &key, &[1, 2, 3]).await;
    for (step, source) in [(1, "operator"), (1, "approval:t1"), (2, "operator")] {
        retention
            .pin(&key, Some(Step::new(step)), source)
            .await
            .unwrap();
    }
    // One source's pin on one step: the other source's pin on it stays.
    assert_eq!(
        retention
            .unpin(&key, Some(Step::new(1)), Some("operator"))
            .await
            .unwrap(),
        1
    );
    assert_eq!(pinned(&*retention, &key).await, steps(&[1, 2]));
    assert_eq!(
        retention
            .unpin(&key, Some(Step::new(3)), Some("operator"))
            .await
            .unwrap(),
        0
    );
    // One source everywhere.
    assert_eq!(
        retention.unpin(&key, None, Some("operator")).await.unwrap(),
        1
    );
    assert_eq!(pinned(&*retention, &key).await, steps(&[1]));
    retention
        .pin(&key, Some(Step::new(2)), "operator")
        .await
        .unwrap();
    // Every source, everywhere.
    assert_eq!(retention.unpin(&key, None, None).await.unwrap(), 2);
    assert!(pinned(&*retention, &key).await.is_empty());
}

pub async fn prune_deletes_only_unpinned_steps_below_the_latest_valid(backend: &impl TestBackend) {
    let store = backend.store();
    let retention = backend.retention();
    let key = run("default", "run-1");
    save_steps(&*store, &key, &[1, 2, 3, 4, 5, 6]).await;
    store
        .quarantine(&key, Step::new(6), "damaged")
        .await
        .unwrap();
    retention
        .pin(&key, Some(Step::new(2)), "operator")
        .await
        .unwrap();
    let epoch = retention
        .retention_facts(&key)
        .await
        .unwrap()
        .unwrap()
        .epoch;
    // Asked for everything: the pinned step 2, the latest valid step 5 and step 6 above it stay.
    let deleted = retention
        .prune(&key, epoch, &steps(&[1, 2, 3, 4, 5, 6, 9]))
        .await
        .unwrap();
    assert_eq!(deleted, 3);
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[2, 5, 6]));
    assert_eq!(
        retention.prune(&key, epoch, &steps(&[1, 3])).await.unwrap(),
        0
    );
    // Unpinned, step 2 may go.
    retention.unpin(&key, None, None).await.unwrap();
    assert_eq!(retention.prune(&key, epoch, &steps(&[2])).await.unwrap(), 1);
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[5, 6]));
    let latest = load_latest(&*store, &key).await;
    assert_eq!(latest.checkpoint.step, Step::new(5));
    latest.checkpoint.verify(&latest.tools).unwrap();
}

pub async fn prune_is_fenced_by_epoch(backend: &impl TestBackend) {
    let store = backend.store();
    let retention = backend.retention();
    let key = run("default", "run-1");
    let error = retention
        .prune(&key, Epoch::new(0), &steps(&[1]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::StaleEpoch(_)), "{error:?}");
    save_steps(&*store, &key, &[1, 2, 3]).await;
    let epoch = retention
        .retention_facts(&key)
        .await
        .unwrap()
        .unwrap()
        .epoch;
    // A Resume began since the facts were read.
    store.begin_resume(&key).await.unwrap();
    let error = retention
        .prune(&key, epoch, &steps(&[1, 2]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::StaleEpoch(_)), "{error:?}");
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[1, 2, 3]));
    assert_eq!(
        retention
            .prune(&key, epoch.next(), &steps(&[1, 2]))
            .await
            .unwrap(),
        2
    );
}

pub async fn runs_after_pages_across_tenants_and_filters_by_policy(backend: &impl TestBackend) {
    let store = backend.store();
    let retention = backend.retention();
    assert!(
        retention
            .runs_after(None, 10, false)
            .await
            .unwrap()
            .is_empty()
    );
    let keys = [
        run("alpha", "r1"),
        run("alpha", "r2"),
        run("beta", "r1"),
        run("beta", "r3"),
    ];
    // Created out of order, in every way a run comes to be.
    store.begin_resume(&keys[3]).await.unwrap();
    retention
        .set_retention(&keys[1], Some("all"))
        .await
        .unwrap();
    save_steps(&*store, &keys[0], &[1]).await;
    store
        .record_tool_result(&super::tool(&keys[2], "c1", "x"))
        .await
        .unwrap();
    retention
        .set_retention(&keys[3], Some("latest_only"))
        .await
        .unwrap();

    assert_eq!(retention.runs_after(None, 10, false).await.unwrap(), keys);
    let first = retention.runs_after(None, 3, false).await.unwrap();
    assert_eq!(first, keys[..3]);
    let rest = retention.runs_after(first.last(), 3, false).await.unwrap();
    assert_eq!(rest, keys[3..]);
    assert!(
        retention
            .runs_after(Some(&keys[3]), 3, false)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        retention.runs_after(None, 10, true).await.unwrap(),
        [keys[1].clone(), keys[3].clone()]
    );
    assert_eq!(
        retention
            .runs_after(Some(&keys[1]), 10, true)
            .await
            .unwrap(),
        [keys[3].clone()]
    );
}

pub async fn checkpoints_after_pages_in_one_tenant_or_across_all(backend: &impl TestBackend) {
    let store = backend.store();
    let retention = backend.retention();
    let (a1, a2, b1) = (run("alpha", "r1"), run("alpha", "r2"), run("beta", "r1"));
    save_steps(&*store, &b1, &[1]).await;
    save_steps(&*store, &a2, &[1, 3]).await;
    save_steps(&*store, &a1, &[2, 4]).await;
    let at = |key: &RunKey, step: u64| CheckpointRef {
        run: key.clone(),
        step: Step::new(step),
    };
    let everything = [at(&a1, 2), at(&a1, 4), at(&a2, 1), at(&a2, 3), at(&b1, 1)];

    assert_eq!(
        retention.checkpoints_after(None, None, 10).await.unwrap(),
        everything
    );
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page = retention
            .checkpoints_after(None, after.as_ref(), 2)
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        after = page.last().cloned();
        paged.extend(page);
    }
    assert_eq!(paged, everything);

    let alpha = Tenant::parse("alpha").unwrap();
    assert_eq!(
        retention
            .checkpoints_after(Some(&alpha), None, 10)
            .await
            .unwrap(),
        everything[..4]
    );
    assert_eq!(
        retention
            .checkpoints_after(Some(&alpha), Some(&at(&a1, 4)), 10)
            .await
            .unwrap(),
        everything[2..4]
    );
    let beta = Tenant::parse("beta").unwrap();
    assert_eq!(
        retention
            .checkpoints_after(Some(&beta), None, 1)
            .await
            .unwrap(),
        everything[4..]
    );
    let nobody = Tenant::parse("nobody").unwrap();
    assert!(
        retention
            .checkpoints_after(Some(&nobody), None, 10)
            .await
            .unwrap()
            .is_empty()
    );
}
