//! `checkpointd runs ...`: a run's checkpoints with their validity, and manual recovery.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::RunsCommand;
use super::client::{CliError, Client};
use super::listing::list_all;
use super::output::{
    Table, one_line, or_dash, print_fields, print_json, short_checksum, time_json, time_text,
};
use super::payload::{show_payload, tool_results_json};
use checkpointd::proto::{self, CheckpointSummary, CheckpointVerdict};

pub async fn run(client: &Client, command: RunsCommand, json: bool) -> Result<(), CliError> {
    match command {
        RunsCommand::List { prefix } => super::run_heads::list(client, &prefix, json).await,
        RunsCommand::Head { run } => super::run_heads::head(client, &run, json).await,
        RunsCommand::Show {
            run,
            step: Some(step),
            payload: true,
            ..
        } => show_payload(client, &run, step, json).await,
        RunsCommand::Show {
            run, verify, step, ..
        } => show(client, &run, verify, step, json).await,
        RunsCommand::Resume {
            run,
            enqueue,
            input,
        } => resume(client, &run, json, enqueue.then_some(input.as_str())).await,
        RunsCommand::Pin { run, step } => pin(client, &run, step, json).await,
        RunsCommand::Unpin {
            run,
            step,
            all_sources,
        } => unpin(client, &run, step, all_sources, json).await,
        RunsCommand::Retention { run, policy } => retention(client, &run, &policy, json).await,
        RunsCommand::Journal(args) => super::journal::run(client, args, json).await,
        RunsCommand::DropQuarantined { run } => {
            super::quarantine::drop_quarantined(client, &run, json).await
        }
    }
}

async fn pin(client: &Client, run: &str, step: i64, json: bool) -> Result<(), CliError> {
    let request = proto::PinCheckpointRequest {
        run_id: run.to_owned(),
        step,
    };
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
    let request = proto::UnpinCheckpointRequest {
        run_id: run.to_owned(),
        step,
        all_sources,
    };
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
    let request = proto::SetRetentionRequest {
        run_id: run.to_owned(),
        policy: policy.to_owned(),
    };
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

/// What is known of a checkpoint's integrity: `valid` and `corrupt` only after a verification,
/// `quarantined` once found corrupt (now or earlier), `unverified` otherwise.
fn status(summary: &CheckpointSummary, verdict: Option<&CheckpointVerdict>) -> String {
    let reason = |reason: &str| {
        if reason.is_empty() {
            String::new()
        } else {
            format!(": {}", one_line(reason, 80))
        }
    };
    match verdict {
        Some(verdict) if verdict.valid => "valid".to_owned(),
        Some(verdict) => format!("corrupt{}", reason(&verdict.reason)),
        None if !summary.valid => format!("quarantined{}", reason(&summary.quarantine_reason)),
        None => "unverified".to_owned(),
    }
}

/// The pins of a checkpoint as one cell: `operator`, `approval:TASK`, or `-`.
fn pins_text(summary: &CheckpointSummary) -> String {
    or_dash(&summary.pinned_by.join(","))
}

async fn show(
    client: &Client,
    run: &str,
    verify: bool,
    step: Option<i64>,
    json: bool,
) -> Result<(), CliError> {
    // Validate goes first: it quarantines what it finds corrupt, so the listing shows it.
    let verdicts = if verify {
        let request = proto::ValidateRequest {
            run_id: run.to_owned(),
            step: None,
        };
        let reply = client
            .checkpoints()
            .validate(request)
            .await
            .map_err(|status| client.status(status))?;
        Some(reply.into_inner().verdicts)
    } else {
        None
    };
    let mut checkpoints = list_all(client, run).await?;
    if let Some(step) = step {
        checkpoints.retain(|summary| summary.step == step);
        if checkpoints.is_empty() {
            return Err(CliError::Other(format!(
                "run {run} has no checkpoint at step {step}"
            )));
        }
    }
    let by_step: HashMap<i64, &CheckpointVerdict> = verdicts
        .iter()
        .flatten()
        .map(|verdict| (verdict.step, verdict))
        .collect();
    let verdict_of = |summary: &CheckpointSummary| by_step.get(&summary.step).copied();
    if json {
        let rows: Vec<Value> = checkpoints
            .iter()
            .map(|summary| summary_json(summary, &status(summary, verdict_of(summary))))
            .collect();
        let mut out = json!({ "run_id": run, "checkpoints": rows });
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
        "STEP",
        "SIZE",
        "MESSAGES",
        "EPOCH",
        "CREATED",
        "CHECKSUM",
        "PINNED_BY",
        "STATUS",
    ]);
    for summary in &checkpoints {
        table.row(vec![
            summary.step.to_string(),
            summary.size_bytes.to_string(),
            summary.message_count.to_string(),
            summary.epoch.to_string(),
            time_text(summary.created_at.as_ref()),
            short_checksum(&summary.checksum),
            pins_text(summary),
            status(summary, verdict_of(summary)),
        ]);
    }
    print!("{}", table.render());
    let unverified = checkpoints
        .iter()
        .any(|summary| status(summary, verdict_of(summary)) == "unverified");
    if unverified {
        println!("unverified: not checked since saved; --verify recomputes every checksum");
    }
    Ok(())
}

fn summary_json(summary: &CheckpointSummary, status: &str) -> Value {
    json!({
        "step": summary.step,
        "size_bytes": summary.size_bytes,
        "status": status.split(':').next().unwrap_or(status),
        "valid": summary.valid,
        "pinned_by": summary.pinned_by,
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

/// `--enqueue`: a task that drives the resumed run on; its id.
async fn enqueue(client: &Client, run: &str, input: &str) -> Result<String, CliError> {
    let request = proto::EnqueueRequest {
        run_id: run.to_owned(),
        input: input.as_bytes().to_vec(),
        ..proto::EnqueueRequest::default()
    };
    let reply = client
        .tasks()
        .enqueue(request)
        .await
        .map_err(|status| client.status(status))?
        .into_inner();
    let task = reply
        .task
        .ok_or_else(|| CliError::Other("the server enqueued no task".to_owned()))?;
    Ok(task.task_id)
}

async fn resume(
    client: &Client,
    run: &str,
    json: bool,
    enqueue_input: Option<&str>,
) -> Result<(), CliError> {
    // Declared because the answer below shows the calls in doubt to the operator.
    let request = proto::ResumeRequest {
        run_id: run.to_owned(),
        capabilities: vec![proto::ClientCapability::InDoubtCalls as i32],
        ..Default::default()
    };
    let reply = checkpointd_runner::pages::resume(&client.checkpoints(), request)
        .await
        .map_err(|status| client.status(status))?;
    let task_id = match enqueue_input {
        Some(input) => Some(enqueue(client, run, input).await?),
        None => None,
    };
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
            "passed_over": reply.passed_over.iter().map(|c| json!({
                "step": c.step,
                "checkpoint_id": c.checkpoint_id,
                "label": c.label,
                "reason": c.reason,
                "quarantined_at": time_json(c.quarantined_at.as_ref()),
            })).collect::<Vec<_>>(),
            "tool_results": tool_results_json(&reply.tool_results),
            "in_doubt": reply.in_doubt.iter().map(|call| json!({
                "call_id": call.call_id,
                "tool_name": call.tool_name,
                "step": call.step,
                "corrupt": call.corrupt,
            })).collect::<Vec<_>>(),
            "corrupt_call_ids": reply.corrupt_call_ids,
            "checkpoint": checkpoint,
            "enqueued_task_id": task_id,
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
    if !reply.passed_over.is_empty() {
        let steps: Vec<String> = reply
            .passed_over
            .iter()
            .map(|c| c.step.to_string())
            .collect();
        fields.push((
            "passed over",
            format!(
                "{} (quarantined; checkpointd runs drop-quarantined {run} removes them)",
                steps.join(", ")
            ),
        ));
    }
    if !reply.in_doubt.is_empty() {
        let calls: Vec<&str> = reply.in_doubt.iter().map(|c| c.call_id.as_str()).collect();
        fields.push((
            "calls in doubt",
            format!(
                "{} (never re-run silently; see checkpointd runs journal {run})",
                calls.join(", ")
            ),
        ));
    }
    if let Some(checkpoint) = &reply.checkpoint {
        fields.push(("messages", checkpoint.message_count.to_string()));
        fields.push(("checksum", checkpoint.checksum.clone()));
        fields.push(("saved", time_text(checkpoint.created_at.as_ref())));
    }
    fields.push((
        "task",
        match &task_id {
            Some(task_id) => format!("enqueued {task_id}; a worker drives the run on"),
            None => format!(
                "none enqueued: a worker drives the run only once a task names it (--enqueue, or checkpointd tasks enqueue --run {run})"
            ),
        },
    ));
    print_fields(&fields);
    Ok(())
}
