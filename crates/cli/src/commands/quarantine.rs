//! `checkpointd runs drop-quarantined RUN`: the operator's repair of a run whose newest
//! checkpoints were quarantined as corrupt. Until they go (or a newer valid checkpoint is saved
//! above them) every load and Resume reports them as passed over.

use serde_json::json;

use super::client::{CliError, Client};
use super::listing::list_all;
use super::output::print_json;
use checkpointd::proto;

/// Most steps one DeleteCheckpoints takes.
const MAX_DELETE: usize = 1000;

pub async fn drop_quarantined(client: &Client, run: &str, json: bool) -> Result<(), CliError> {
    let mut steps: Vec<i64> = list_all(client, run)
        .await?
        .into_iter()
        .filter(|summary| !summary.valid)
        .map(|summary| summary.step)
        .collect();
    steps.reverse();
    let mut deleted = 0;
    let mut pinned = Vec::new();
    for chunk in steps.chunks(MAX_DELETE) {
        let request = proto::DeleteCheckpointsRequest {
            run_id: run.to_owned(),
            steps: chunk.to_vec(),
            // Unfenced: an operator holds no epoch, and a quarantined checkpoint is nothing a
            // current owner could rely on.
            epoch: None,
        };
        let reply = client
            .checkpoints()
            .delete_checkpoints(request)
            .await
            .map_err(|status| client.status(status))?
            .into_inner();
        deleted += reply.deleted_checkpoints;
        pinned.extend(reply.pinned_steps);
    }
    pinned.sort_unstable_by(|a, b| b.cmp(a));
    let dropped: Vec<i64> = steps
        .iter()
        .copied()
        .filter(|step| !pinned.contains(step))
        .collect();
    if json {
        print_json(&json!({
            "run_id": run,
            "dropped": deleted,
            "dropped_steps": dropped,
            "pinned_steps": pinned,
        }));
        return Ok(());
    }
    if steps.is_empty() {
        println!("no quarantined checkpoints");
        return Ok(());
    }
    let noun = if deleted == 1 {
        "checkpoint"
    } else {
        "checkpoints"
    };
    println!(
        "dropped {deleted} quarantined {noun} (steps {})",
        joined(&dropped)
    );
    if !pinned.is_empty() {
        println!(
            "kept pinned steps {} (unpin them first: checkpointd runs unpin {run} STEP --all-sources)",
            joined(&pinned)
        );
    }
    Ok(())
}

fn joined(steps: &[i64]) -> String {
    let steps: Vec<String> = steps.iter().map(i64::to_string).collect();
    steps.join(", ")
}
