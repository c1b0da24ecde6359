//! Scrub: a tenant-wide Validate over gRPC and `checkpointd scrub` over the whole store find and
//! quarantine every corrupt checkpoint, one bounded page at a time.

use std::collections::BTreeSet;
use std::sync::Arc;

use checkpointd::database;
use checkpointd::proto::{ListCheckpointsRequest, ValidateTenantRequest};
use checkpointd_core::domain::{Epoch, NewCheckpoint, RunId, RunKey, Step, Tenant};
use checkpointd_storage::store::{CheckpointStore, StoreOptions};
use serde_json::Value;

use crate::retention_durable::checkpointd;
use crate::support::requests::save;
use crate::support::{Backend, PgSchema, TestApp, for_tenant, spawn_app};

/// (tenant, run, steps): run ids are distinct across tenants so `corrupt_state` hits one row.
const LAYOUT: &[(&str, &str, i64)] = &[
    ("acme", "acme-1", 5),
    ("acme", "acme-2", 3),
    ("other", "other-1", 3),
];
const CORRUPT: &[(&str, i64)] = &[("acme-1", 2), ("acme-2", 3), ("other-1", 1)];

async fn seeded(backend: Backend) -> TestApp {
    let app = spawn_app(backend).await;
    let mut client = app.client().await;
    for (tenant, run, last) in LAYOUT {
        for step in 1..=*last {
            let request = save(run, step, format!("{{\"step\":{step}}}").as_bytes());
            client.save(for_tenant(tenant, request)).await.unwrap();
        }
    }
    for (run, step) in CORRUPT {
        app.corrupt_state(run, *step).await;
    }
    app
}

async fn quarantined(app: &TestApp, tenant: &str, run: &str) -> Vec<i64> {
    let request = ListCheckpointsRequest {
        run_id: run.into(),
        ..ListCheckpointsRequest::default()
    };
    let mut client = app.client().await;
    let page = client.list_checkpoints(for_tenant(tenant, request)).await;
    page.unwrap()
        .into_inner()
        .checkpoints
        .iter()
        .filter(|summary| !summary.quarantine_reason.is_empty())
        .map(|summary| summary.step)
        .collect()
}

async fn validate_tenant_streams_every_verdict_of_one_tenant_only(backend: Backend) {
    let app = seeded(backend).await;
    let mut client = app.client().await;
    // Pages of two: the keyset crosses page and run boundaries several times.
    let request = for_tenant("acme", ValidateTenantRequest { page_size: 2 });
    let mut stream = client.validate_tenant(request).await.unwrap().into_inner();
    let mut seen = Vec::new();
    while let Some(item) = stream.message().await.unwrap() {
        let verdict = item.verdict.unwrap();
        seen.push((item.run_id, verdict.step, verdict.valid));
    }
    let expected: Vec<(String, i64, bool)> = [("acme-1", 5), ("acme-2", 3)]
        .iter()
        .flat_map(|(run, last)| {
            (1..=*last).map(move |step| {
                let corrupt = CORRUPT.contains(&(run, step));
                (run.to_string(), step, !corrupt)
            })
        })
        .collect();
    assert_eq!(seen, expected);

    assert_eq!(quarantined(&app, "acme", "acme-1").await, vec![2]);
    assert_eq!(quarantined(&app, "acme", "acme-2").await, vec![3]);
    // Another tenant's corruption is neither reported nor touched.
    assert!(quarantined(&app, "other", "other-1").await.is_empty());
}

fn corrupt_reported(lines: &[Value]) -> BTreeSet<(String, i64)> {
    lines
        .iter()
        .filter(|line| line.get("summary").is_none())
        .map(|line| {
            (
                line["run_id"].as_str().unwrap().to_owned(),
                line["step"].as_i64().unwrap(),
            )
        })
        .collect()
}

async fn scrub_command_covers_the_whole_store_or_one_tenant(backend: Backend) {
    let app = seeded(backend).await;
    let one = checkpointd(&[
        "scrub",
        "--database",
        &app.url,
        "--tenant",
        "other",
        "--json",
    ])
    .await;
    let expected: BTreeSet<_> = [("other-1".to_owned(), 1)].into();
    assert_eq!(corrupt_reported(&one), expected);
    assert_eq!(one.last().unwrap()["checked"], 3);

    let all = checkpointd(&[
        "scrub",
        "--database",
        &app.url,
        "--page-size",
        "3",
        "--json",
    ])
    .await;
    let expected: BTreeSet<_> = CORRUPT
        .iter()
        .map(|(run, step)| (run.to_string(), *step))
        .collect();
    assert_eq!(corrupt_reported(&all), expected);
    let summary = all.last().unwrap();
    assert_eq!(summary["checked"], 11);
    assert_eq!(summary["corrupt"], 3);
    assert_eq!(quarantined(&app, "acme", "acme-1").await, vec![2]);
}

crate::for_each_durable_backend!(
    validate_tenant_streams_every_verdict_of_one_tenant_only,
    scrub_command_covers_the_whole_store_or_one_tenant,
);

/// Fills a fresh schema with `runs * steps` checkpoints of 8 KB each, saved concurrently.
async fn fill(schema: &PgSchema, runs: u64, steps: u64) {
    let store = database::open(
        &schema.url(),
        &StoreOptions {
            pool_size: 8,
            ..Default::default()
        },
    )
    .await
    .unwrap()
    .store;
    let mut writers = tokio::task::JoinSet::new();
    for run in 0..runs {
        let store: Arc<dyn CheckpointStore> = store.clone();
        writers.spawn(async move {
            let key = RunKey::new(
                Tenant::parse(if run % 2 == 0 { "even" } else { "odd" }).unwrap(),
                RunId::parse(&format!("run-{run:04}")).unwrap(),
            );
            for step in 1..=steps {
                let checkpoint = NewCheckpoint {
                    run: key.clone(),
                    step: Step::new(step),
                    content_type: "application/octet-stream".into(),
                    state: vec![(run + step) as u8; 8 * 1024],
                    messages: Vec::new(),
                    message_offset: 0,
                    metadata: Default::default(),
                    epoch: Epoch::new(0),
                    client_checksum: None,
                    tool_count: None,
                    label: None,
                };
                store.save(&checkpoint).await.unwrap();
            }
        });
    }
    while let Some(done) = writers.join_next().await {
        done.unwrap();
    }
}

/// Flips one state byte of each listed checkpoint.
async fn corrupt(schema: &PgSchema, targets: &BTreeSet<(String, i64)>) {
    for (run, step) in targets {
        schema
            .execute(&format!(
                "UPDATE checkpoints SET state = set_byte(state, 0, (get_byte(state, 0) + 1) % 256) \
                 WHERE run_id = '{run}' AND step = {step}"
            ))
            .await;
    }
}

async fn scrub(schema: &PgSchema) -> Vec<Value> {
    checkpointd(&[
        "scrub",
        "--database",
        &schema.url(),
        "--page-size",
        "100",
        "--json",
    ])
    .await
}

#[tokio::test]
async fn scrub_finds_every_corrupt_checkpoint_among_ten_thousand_in_flat_memory() {
    let (small, large) = (PgSchema::create().await, PgSchema::create().await);
    fill(&small, 10, 100).await;
    fill(&large, 100, 100).await;
    // Spread over both tenants, first and last steps included.
    let targets: BTreeSet<(String, i64)> = (0..25)
        .map(|i| (format!("run-{:04}", i * 4 + i % 3), [1, 37, 100][i % 3]))
        .collect();
    corrupt(&large, &targets).await;

    let report = scrub(&large).await;
    assert_eq!(corrupt_reported(&report), targets);
    let summary = report.last().unwrap();
    assert_eq!(summary["checked"], 10_000);
    assert_eq!(summary["corrupt"], 25);
    // The store was asked for pages of 100, never more: 100 full pages and one empty one.
    assert_eq!(summary["largest_page"], 100);
    assert_eq!(summary["pages"], 101);

    let baseline = scrub(&small).await;
    assert_eq!(baseline.last().unwrap()["checked"], 1_000);
    let peak = |lines: &[Value]| lines.last().unwrap()["peak_rss_kib"].as_u64().unwrap();
    let (peak_small, peak_large) = (peak(&baseline), peak(&report));
    eprintln!(
        "scrub peak RSS: {peak_small} KiB for 1,000 checkpoints, {peak_large} KiB for 10,000"
    );
    // Ten times the checkpoints hold 80 MB more state; a scrub that kept them (or even their
    // verdicts) would show it. Generous: allocator noise stays far below this bound.
    assert!(
        peak_large < peak_small + 24 * 1024,
        "peak RSS grew from {peak_small} KiB (1,000 checkpoints) to {peak_large} KiB (10,000)"
    );
}
