//! `checkpointd runs journal RUN`: a run's tool journal for an operator, and its repairs.

use clap::Args;
use serde_json::{Value, json};

use super::client::{CliError, Client};
use super::output::{
    Table, bytes_json, bytes_text, one_line, or_dash, print_json, time_json, time_text,
};
use checkpointd::proto::{
    self, JournalAction, JournalEntry, JournalEntryKind, repair_journal_request,
};

/// Flags of `checkpointd runs journal`.
#[derive(Debug, Args)]
pub struct JournalArgs {
    /// The run id.
    pub run: String,
    /// Mark this in-doubt or corrupt call done with `--output`, as if the tool had returned it.
    #[arg(
        long,
        value_name = "CALL_ID",
        requires = "output",
        conflicts_with = "drop"
    )]
    pub mark_done: Option<String>,
    /// The output to journal for `--mark-done`.
    #[arg(long, requires = "mark_done")]
    pub output: Option<String>,
    /// Drop this call's corrupt journal entry; the call runs again when the agent reaches it.
    #[arg(long, value_name = "CALL_ID")]
    pub drop: Option<String>,
    /// Who makes the repair, recorded with it [default: $USER].
    #[arg(long)]
    pub by: Option<String>,
}

pub async fn run(client: &Client, args: JournalArgs, json: bool) -> Result<(), CliError> {
    let repair = match (&args.mark_done, &args.drop) {
        (Some(call_id), _) => Some((
            call_id.clone(),
            repair_journal_request::Repair::MarkDoneOutput(
                args.output.clone().unwrap_or_default().into_bytes(),
            ),
        )),
        (None, Some(call_id)) => {
            Some((call_id.clone(), repair_journal_request::Repair::Drop(true)))
        }
        (None, None) => None,
    };
    if let Some((call_id, repair)) = repair {
        let actor = args
            .by
            .clone()
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| "operator".to_owned());
        let request = proto::RepairJournalRequest {
            run_id: args.run.clone(),
            call_id,
            actor,
            repair: Some(repair),
        };
        let reply = client
            .checkpoints()
            .repair_journal(request)
            .await
            .map_err(|status| client.status(status))?
            .into_inner();
        let action = reply.action.unwrap_or_default();
        if json {
            print_json(&json!({
                "run_id": args.run,
                "action": action_json(&action),
                "quarantined_steps": reply.quarantined_steps,
            }));
            return Ok(());
        }
        println!(
            "{} {} of run {} by {}",
            action.action, action.call_id, args.run, action.actor
        );
        if !reply.quarantined_steps.is_empty() {
            println!(
                "quarantined steps {:?}: they covered the journal as it was",
                reply.quarantined_steps
            );
        }
        return Ok(());
    }
    show(client, &args.run, json).await
}

async fn show(client: &Client, run: &str, json: bool) -> Result<(), CliError> {
    let request = proto::GetJournalRequest {
        run_id: run.to_owned(),
    };
    let reply = client
        .checkpoints()
        .get_journal(request)
        .await
        .map_err(|status| client.status(status))?
        .into_inner();
    let in_doubt: Vec<&str> = reply
        .in_doubt
        .iter()
        .map(|call| call.call_id.as_str())
        .collect();
    if json {
        print_json(&json!({
            "run_id": run,
            "entries": reply.entries.iter().map(|e| entry_json(e, &in_doubt)).collect::<Vec<_>>(),
            "in_doubt": reply.in_doubt.iter().map(|call| json!({
                "call_id": call.call_id,
                "tool_name": call.tool_name,
                "step": call.step,
                "idempotency_key": call.idempotency_key,
                "corrupt": call.corrupt,
            })).collect::<Vec<_>>(),
            "corrupt_call_ids": reply.corrupt_call_ids,
            "actions": reply.actions.iter().map(action_json).collect::<Vec<_>>(),
        }));
        return Ok(());
    }
    let mut table = Table::new(vec![
        "SEQ", "KIND", "CALL", "TOOL", "STEP", "STATE", "OUTPUT",
    ]);
    for entry in &reply.entries {
        table.row(vec![
            entry.seq.to_string(),
            kind(entry).to_owned(),
            entry.call_id.clone(),
            or_dash(&entry.tool_name),
            entry.step.to_string(),
            state(entry, &in_doubt).to_owned(),
            or_dash(&one_line(&bytes_text(&entry.output), 48)),
        ]);
    }
    print!("{}", table.render());
    for call in &reply.in_doubt {
        println!(
            "in doubt: {} ({}, step {}){} key {}",
            call.call_id,
            or_dash(&call.tool_name),
            call.step,
            if call.corrupt { ", corrupt entry" } else { "" },
            call.idempotency_key
        );
    }
    for action in &reply.actions {
        println!(
            "repair: {} {} by {} at {}: {}",
            action.action,
            action.call_id,
            action.actor,
            time_text(action.acted_at.as_ref()),
            action.detail
        );
    }
    Ok(())
}

fn kind(entry: &JournalEntry) -> &'static str {
    match JournalEntryKind::try_from(entry.kind) {
        Ok(JournalEntryKind::Intent) => "intent",
        Ok(JournalEntryKind::Result) => "result",
        _ => "unknown",
    }
}

/// `corrupt`, `in doubt` (an intent without result), or `ok`.
fn state(entry: &JournalEntry, in_doubt: &[&str]) -> &'static str {
    if entry.corrupt {
        "corrupt"
    } else if entry.kind == JournalEntryKind::Intent as i32
        && in_doubt.contains(&entry.call_id.as_str())
    {
        "in doubt"
    } else {
        "ok"
    }
}

fn entry_json(entry: &JournalEntry, in_doubt: &[&str]) -> Value {
    json!({
        "seq": entry.seq,
        "kind": kind(entry),
        "call_id": entry.call_id,
        "tool_name": entry.tool_name,
        "step": entry.step,
        "output": bytes_json(&entry.output),
        "is_error": entry.is_error,
        "recorded_at": time_json(entry.recorded_at.as_ref()),
        "state": state(entry, in_doubt),
    })
}

fn action_json(action: &JournalAction) -> Value {
    json!({
        "call_id": action.call_id,
        "action": action.action,
        "actor": action.actor,
        "acted_at": time_json(action.acted_at.as_ref()),
        "detail": action.detail,
    })
}
