//! Behaviours of the reads client authors asked for: labels, listing in both directions with
//! bounds, run heads and the run listing.

use std::time::SystemTime;

use super::{TestBackend, checkpoint, load_at, run, steps, tool};
use checkpointd_core::domain::{Epoch, ListQuery, NewCheckpoint, RunId, RunKey, Step, Tenant};
use checkpointd_core::error::Error;

fn labelled(key: &RunKey, step: u64, offset: u64, texts: &[&str], label: &str) -> NewCheckpoint {
    NewCheckpoint {
        label: Some(label.to_owned()),
        ..checkpoint(key, step, offset, texts)
    }
}

pub async fn a_label_names_one_checkpoint_of_its_run(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "labels");
    store
        .save(&labelled(&key, 1, 0, &["a"], "lg-1"))
        .await
        .unwrap();
    store.save(&checkpoint(&key, 2, 1, &["b"])).await.unwrap();
    assert_eq!(
        store.label_step(&key, "lg-1").await.unwrap(),
        Some(Step::new(1))
    );
    assert_eq!(store.label_step(&key, "lg-2").await.unwrap(), None);
    assert_eq!(
        load_at(&*store, &key, 1).await.checkpoint.label.as_deref(),
        Some("lg-1")
    );
    assert_eq!(load_at(&*store, &key, 2).await.checkpoint.label, None);

    // An identical retry is fine; the same label at another step is refused, changing nothing.
    let retry = store
        .save(&labelled(&key, 1, 0, &["a"], "lg-1"))
        .await
        .unwrap();
    assert!(retry.already_existed);
    let taken = store
        .save(&labelled(&key, 3, 2, &["c"], "lg-1"))
        .await
        .unwrap_err();
    assert!(matches!(taken, Error::LabelTaken(_)), "{taken:?}");
    assert_eq!(store.steps(&key).await.unwrap(), steps(&[1, 2]));
    // The same content at the same step under another label is not the same checkpoint.
    let relabelled = store
        .save(&labelled(&key, 1, 0, &["a"], "lg-other"))
        .await
        .unwrap_err();
    assert!(
        matches!(relabelled, Error::StepConflict(_)),
        "{relabelled:?}"
    );

    // Labels are per run and per tenant.
    for other in [run("default", "labels-2"), run("other", "labels")] {
        assert_eq!(store.label_step(&other, "lg-1").await.unwrap(), None);
        store
            .save(&labelled(&other, 7, 0, &[], "lg-1"))
            .await
            .unwrap();
        assert_eq!(
            store.label_step(&other, "lg-1").await.unwrap(),
            Some(Step::new(7))
        );
    }
    let listed = store
        .list(&key, &ListQuery::ascending(None, 10))
        .await
        .unwrap();
    let labels: Vec<_> = listed.iter().map(|s| s.label.as_deref()).collect();
    assert_eq!(labels, [Some("lg-1"), None]);
}

pub async fn list_runs_either_way_within_bounds_with_metadata(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "listing");
    for (offset, step) in [1, 3, 4, 6, 9].into_iter().enumerate() {
        store
            .save(&checkpoint(&key, step, offset as u64, &["m"]))
            .await
            .unwrap();
    }
    let page = |above: Option<u64>, below: Option<u64>, descending: bool, limit: usize| {
        let store = store.clone();
        let key = key.clone();
        async move {
            let query = ListQuery {
                above: above.map(Step::new),
                below: below.map(Step::new),
                descending,
                limit,
                metadata: Default::default(),
            };
            let page = store.list(&key, &query).await.unwrap();
            page.iter().map(|s| s.step.get()).collect::<Vec<_>>()
        }
    };
    assert_eq!(page(None, None, true, 2).await, [9, 6]);
    assert_eq!(page(None, Some(6), true, 2).await, [4, 3]);
    assert_eq!(page(None, Some(3), true, 2).await, [1]);
    assert_eq!(page(Some(1), Some(9), false, 10).await, [3, 4, 6]);
    assert_eq!(page(Some(3), Some(6), true, 10).await, [4]);
    assert!(page(Some(6), Some(4), false, 10).await.is_empty());
    let summaries = store
        .list(&key, &ListQuery::ascending(Some(Step::new(8)), 1))
        .await
        .unwrap();
    assert_eq!(
        summaries[0].metadata.get("note").map(String::as_str),
        Some("step 9")
    );
    assert_eq!(summaries[0].metadata.len(), 2);
}

pub async fn a_run_head_tells_where_the_run_stands(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "head");
    assert_eq!(store.run_info(&key).await.unwrap(), None);
    let before = SystemTime::now() - std::time::Duration::from_secs(1);
    store
        .save(&checkpoint(&key, 1, 0, &["a", "b"]))
        .await
        .unwrap();
    store
        .record_tool_result(&tool(&key, "c1", "x"))
        .await
        .unwrap();
    store.save(&checkpoint(&key, 2, 2, &["c"])).await.unwrap();
    store
        .quarantine(&key, Step::new(2), "damaged")
        .await
        .unwrap();
    let head = store.run_info(&key).await.unwrap().unwrap();
    assert_eq!(head.run_id.as_str(), "head");
    assert_eq!(
        (head.epoch.get(), head.message_count, head.tool_count),
        (0, 3, 1)
    );
    assert_eq!(head.latest_step, Some(Step::new(2)));
    assert_eq!(head.latest_valid_step, Some(Step::new(1)));
    assert_eq!(head.checkpoint_count, 2);
    assert!(head.updated_at >= before, "{head:?}");

    // Resume moves the epoch and the time on; a run with no checkpoint has no steps.
    assert_eq!(store.begin_resume(&key).await.unwrap(), Epoch::new(1));
    let resumed = store.run_info(&key).await.unwrap().unwrap();
    assert_eq!(resumed.epoch.get(), 1);
    assert!(resumed.updated_at >= head.updated_at);
    let fresh = run("default", "fresh");
    store.begin_resume(&fresh).await.unwrap();
    let fresh = store.run_info(&fresh).await.unwrap().unwrap();
    assert_eq!(
        (
            fresh.latest_step,
            fresh.latest_valid_step,
            fresh.checkpoint_count
        ),
        (None, None, 0)
    );
    // Another tenant's run of the same id is not this one.
    assert_eq!(store.run_info(&run("other", "head")).await.unwrap(), None);
}

pub async fn runs_list_by_id_in_byte_order_with_a_prefix_range(backend: &impl TestBackend) {
    let store = backend.store();
    // Wildcards of LIKE, a character past U+FFFF and one just below it: byte order puts
    // "a\u{FF61}" before "a\u{1F600}", UTF-16 order the other way round.
    let ids = [
        "a%",
        "a_b",
        "ab",
        "a\u{FF61}",
        "a\u{1F600}",
        "b",
        "a",
        "A",
        "a\u{10FFFF}x",
    ];
    for id in ids {
        store.begin_resume(&run("default", id)).await.unwrap();
    }
    store.begin_resume(&run("other", "ab")).await.unwrap();
    let tenant = Tenant::parse("default").unwrap();
    let list = |prefix: &'static str, after: Option<&'static str>, limit: usize| {
        let (store, tenant) = (store.clone(), tenant.clone());
        async move {
            let after = after.map(|after| RunId::parse(after).unwrap());
            store
                .list_runs(&tenant, prefix, after.as_ref(), limit)
                .await
                .unwrap()
                .into_iter()
                .map(|info| info.run_id.as_str().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let mut sorted: Vec<&str> = ids.to_vec();
    sorted.sort();
    assert_eq!(list("", None, 100).await, sorted);
    assert_eq!(
        list("a", None, 100).await,
        [
            "a",
            "a%",
            "a_b",
            "ab",
            "a\u{FF61}",
            "a\u{1F600}",
            "a\u{10FFFF}x"
        ]
    );
    assert_eq!(list("a%", None, 100).await, ["a%"]);
    assert_eq!(list("a_", None, 100).await, ["a_b"]);
    assert_eq!(list("a\u{10FFFF}", None, 100).await, ["a\u{10FFFF}x"]);
    assert!(list("c", None, 100).await.is_empty());
    // Keyset pages: each starts after the last id of the one before.
    assert_eq!(list("a", None, 2).await, ["a", "a%"]);
    assert_eq!(list("a", Some("a%"), 2).await, ["a_b", "ab"]);
    assert_eq!(list("a", Some("ab"), 2).await, ["a\u{FF61}", "a\u{1F600}"]);
    assert_eq!(list("a", Some("a\u{1F600}"), 2).await, ["a\u{10FFFF}x"]);
    let heads = store.list_runs(&tenant, "ab", None, 10).await.unwrap();
    assert_eq!(heads.len(), 1);
    assert_eq!(heads[0].epoch.get(), 1);
}

/// A metadata filter is applied by the store as it scans: a page of a filter that matches one
/// checkpoint in fifty is full in one call, in either direction, within the bounds, and a pair
/// matches only with its own value.
pub async fn a_rare_metadata_filter_fills_a_page_in_one_listing(backend: &impl TestBackend) {
    let store = backend.store();
    let key = run("default", "rare");
    for step in 1..=200u64 {
        let mut saved = checkpoint(&key, step, step - 1, &["m"]);
        if step % 50 == 0 {
            saved.metadata.insert("kind".into(), "milestone".into());
        }
        store.save(&saved).await.unwrap();
    }
    let query =
        |above: Option<u64>, below: Option<u64>, descending: bool, filter: &[(&str, &str)]| {
            ListQuery {
                above: above.map(Step::new),
                below: below.map(Step::new),
                descending,
                limit: 3,
                metadata: filter
                    .iter()
                    .map(|(key, value)| (key.to_string(), value.to_string()))
                    .collect(),
            }
        };
    let listed = |query: ListQuery| {
        let store = store.clone();
        let key = key.clone();
        async move {
            let page = store.list(&key, &query).await.unwrap();
            page.iter().map(|s| s.step.get()).collect::<Vec<_>>()
        }
    };
    let milestone = [("kind", "milestone")];
    assert_eq!(
        listed(query(None, None, false, &milestone)).await,
        [50, 100, 150]
    );
    assert_eq!(
        listed(query(None, None, true, &milestone)).await,
        [200, 150, 100]
    );
    assert_eq!(
        listed(query(Some(50), Some(200), false, &milestone)).await,
        [100, 150]
    );
    let both = [("kind", "milestone"), ("agent", "planner")];
    assert_eq!(listed(query(Some(150), None, false, &both)).await, [200]);
    assert!(
        listed(query(None, None, false, &[("kind", "planner")]))
            .await
            .is_empty()
    );
    assert!(
        listed(query(None, None, false, &[("agent", "milestone")]))
            .await
            .is_empty()
    );
    let page = store
        .list(&key, &query(None, Some(60), true, &milestone))
        .await
        .unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(
        page[0].metadata.get("kind").map(String::as_str),
        Some("milestone")
    );
}
