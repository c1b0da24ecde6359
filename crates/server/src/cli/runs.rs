//! `checkpointd runs ...`: a run's checkpoints with their validity, and manual recovery.

use serde_json::{Value, json};

use super::RunsCommand;
use super::client::{CliError, Client};
use super::output::{
    Table, one_line, print_fields, print_json, short_checksum, time_json, time_text,
};
use crate::proto::{self, CheckpointSummary, CheckpointVerdict};

/// Largest page the server accepts.
const MAX_PAGE: u32 = 1000;

pub async fn run(client: &Client, command: RunsCommand, json: bool) -> Result<(), CliError> {
    match command {
        RunsCommand::Show { run, verify } => show(client, &run, verify, json).await,
        RunsCommand::Resume { run } => resume(client, &run, json).await,
        RunsCommand::Pin { run, step } => pin(client, &run, step, json).await,
        RunsCommand::Unpin {
            run,
            step,
            all_sources,
        } => unpin(client, &run, step, all_sources, json).await,
        RunsCommand::Retention { run, policy } => retention(client, &run, &policy, json).await,
        RunsCommand::Journal(args) => super::journal::run(client, args, json).await,
    }
}

async fn pin(client: &Client, run: &str, step: i64, json: bool) -> Result<(), CliError> {
    let request = client.request(proto::PinCheckpointRequest {
        run_id: run.to_owned(),
        step,
    });
    client
        .checkpoints()
        .pin_checkpoint(request)
        .await
        .map_err(|status| client.status(status))?;
    if json {
        print_json(&json!({ "run_id": run, "step": step, "pinned": true }));
    } else {
        println!("pinned step {step} of run {run}");
    }
    Ok(())
}

async fn unpin(
    client: &Client,
    run: &str,
    step: i64,
    all_sources: bool,
    json: bool,
) -> Result<(), CliError> {
    let request = client.request(proto::UnpinCheckpointRequest {
        run_id: run.to_owned(),
        step,
        all_sources,
    });
    let reply = client
        .checkpoints()
        .unpin_checkpoint(request)
        .await
        .map_err(|status| client.status(status))?
        .into_inner();
    if json {
        print_json(&json!({ "run_id": run, "step": step, "unpinned": reply.unpinned }));
    } else if reply.unpinned {
        println!("unpinned step {step} of run {run}");
    } else {
        println!("step {step} of run {run} carried no pin to remove");
    }
    Ok(())
}

async fn retention(client: &Client, run: &str, policy: &str, json: bool) -> Result<(), CliError> {
    let policy = if policy == "default" { "" } else { policy };
    let request = client.request(proto::SetRetentionRequest {
        run_id: run.to_owned(),
        policy: policy.to_owned(),
    });
    let reply = client
        .checkpoints()
        .set_retention(request)
        .await
        .map_err(|status| client.status(status))?
        .into_inner();
    let shown = if reply.policy.is_empty() {
        "the server default"
    } else {
        reply.policy.as_str()
    };
    if json {
        print_json(&json!({ "run_id": run, "policy": reply.policy }));
    } else {
        println!("run {run} now keeps checkpoints by {shown}");
    }
    Ok(())
}

async fn show(client: &Client, run: &str, verify: bool, json: bool) -> Result<(), CliError> {
    // Validate goes first: it quarantines what it finds corrupt, so the listing shows it.
    let verdicts = if verify {
        let request = client.request(proto::ValidateRequest {
            run_id: run.to_owned(),
            step: None,
        });
        let reply = client
            .checkpoints()
            .validate(request)
            .await
            .map_err(|status| client.status(status))?;
        Some(reply.into_inner().verdicts)
    } else {
        None
    };
    let checkpoints = list_all(client, run).await?;
    if json {
        let mut out = json!({
            "run_id": run,
            "checkpoints": checkpoints.iter().map(summary_json).collect::<Vec<_>>(),
        });
        if let Some(verdicts) = &verdicts {
            out["verdicts"] = verdicts.iter().map(verdict_json).collect();
        }
        print_json(&out);
        return Ok(());
    }
    if let Some(verdicts) = &verdicts {
        let corrupt: Vec<&CheckpointVerdict> = verdicts.iter().filter(|v| !v.valid).collect();
        println!(
            "verified {} checkpoints: {} valid, {} corrupt",
            verdicts.len(),
            verdicts.len() - corrupt.len(),
            corrupt.len()
        );
        for verdict in corrupt {
            println!("  step {}: {}", verdict.step, verdict.reason);
        }
    }
    if checkpoints.is_empty() {
        println!("run {run} has no checkpoints");
        return Ok(());
    }
    let mut table = Table::new(vec![
        "STEP", "SIZE", "MESSAGES", "EPOCH", "CREATED", "CHECKSUM", "STATUS",
    ]);
    for summary in &checkpoints {
        let status = if summary.valid {
            "valid".to_owned()
        } else if summary.quarantine_reason.is_empty() {
            "quarantined".to_owned()
        } else {
            format!("quarantined: {}", one_line(&summary.quarantine_reason, 80))
        };
        table.row(vec![
            summary.step.to_string(),
            summary.size_bytes.to_string(),
            summary.message_count.to_string(),
            summary.epoch.to_string(),
            time_text(summary.created_at.as_ref()),
            short_checksum(&summary.checksum),
            status,
        ]);
    }
    print!("{}", table.render());
    Ok(())
}

/// Every checkpoint of the run, ascending by step, across all pages.
async fn list_all(client: &Client, run: &str) -> Result<Vec<CheckpointSummary>, CliError> {
    let mut checkpoints = Vec::new();
    let mut page_token = String::new();
    loop {
        let request = client.request(proto::ListCheckpointsRequest {
            run_id: run.to_owned(),
            page_size: MAX_PAGE,
            page_token,
        });
        let page = client
            .checkpoints()
            .list_checkpoints(request)
            .await
            .map_err(|status| client.status(status))?
            .into_inner();
        checkpoints.extend(page.checkpoints);
        if page.next_page_token.is_empty() {
            return Ok(checkpoints);
        }
        page_token = page.next_page_token;
    }
}

fn summary_json(summary: &CheckpointSummary) -> Value {
    json!({
        "step": summary.step,
        "size_bytes": summary.size_bytes,
        "valid": summary.valid,
        "quarantine_reason": if summary.quarantine_reason.is_empty() {
            Value::Null
        } else {
            Value::String(summary.quarantine_reason.clone())
        },
        "created_at": time_json(summary.created_at.as_ref()),
        "checksum": summary.checksum,
        "epoch": summary.epoch,
        "message_count": summary.message_count,
    })
}

fn verdict_json(verdict: &CheckpointVerdict) -> Value {
    json!({
        "step": verdict.step,
        "valid": verdict.valid,
        "reason": if verdict.reason.is_empty() {
            Value::Null
        } else {
            Value::String(verdict.reason.clone())
        },
        "stored_checksum": verdict.stored_checksum,
        "quarantined": verdict.quarantined,
    })
}

fn steps_text(steps: &[i64]) -> String {
    if steps.is_empty() {
        return "none".to_owned();
    }
    let steps: Vec<String> = steps.iter().map(i64::to_string).collect();
    format!("{} (corrupt, quarantined)", steps.join(", "))
}

async fn resume(client: &Client, run: &str, json: bool) -> Result<(), CliError> {
    let request = client.request(proto::ResumeRequest {
        run_id: run.to_owned(),
    });
    let reply = client
        .checkpoints()
        .resume(request)
        .await
        .map_err(|status| client.status(status))?
        .into_inner();
    if json {
        let checkpoint = reply.checkpoint.as_ref().map_or(Value::Null, |c| {
            json!({
                "step": c.step,
                "epoch": c.epoch,
                "checksum": c.checksum,
                "size_bytes": c.state.len(),
                "message_count": c.message_count,
                "tool_count": c.tool_count,
                "created_at": time_json(c.created_at.as_ref()),
            })
        });
        print_json(&json!({
            "run_id": run,
            "epoch": reply.epoch,
            "recovered_from_step": reply.recovered_from_step,
            "restarted_from_scratch": reply.restarted_from_scratch,
            "skipped_steps": reply.skipped_steps,
            "tool_results": reply.tool_results.len(),
            "checkpoint": checkpoint,
        }));
        return Ok(());
    }
    let recovered = if reply.restarted_from_scratch {
        "restarted from scratch at step 0 (no valid checkpoint)".to_owned()
    } else {
        format!("from step {}", reply.recovered_from_step)
    };
    let mut fields = vec![
        ("run", run.to_owned()),
        ("recovered", recovered),
        ("skipped steps", steps_text(&reply.skipped_steps)),
        (
            "epoch",
            format!(
                "{} (writers holding an older epoch are now fenced)",
                reply.epoch
            ),
        ),
        ("tool results", reply.tool_results.len().to_string()),
    ];
    if let Some(checkpoint) = &reply.checkpoint {
        fields.push(("messages", checkpoint.message_count.to_string()));
        fields.push(("checksum", checkpoint.checksum.clone()));
        fields.push(("saved", time_text(checkpoint.created_at.as_ref())));
    }
    print_fields(&fields);
    Ok(())
}
