//! `checkpointd runs list` and `runs head`: where runs stand, read with ListRuns and GetRun,
//! without loading a payload or fencing anyone.

use serde_json::{Value, json};

use super::client::{CliError, Client};
use super::output::{Table, print_fields, print_json, time_json, time_text};
use checkpointd::proto::{self, RunHead};

/// Largest page the server accepts.
const MAX_PAGE: u32 = 1000;

fn step_text(step: Option<i64>) -> String {
    step.map_or_else(|| "-".to_owned(), |step| step.to_string())
}

fn head_json(head: &RunHead) -> Value {
    json!({
        "run_id": head.run_id,
        "epoch": head.epoch,
        "latest_step": head.latest_step,
        "latest_valid_step": head.latest_valid_step,
        "message_count": head.message_count,
        "tool_count": head.tool_count,
        "checkpoint_count": head.checkpoint_count,
        "updated_at": time_json(head.updated_at.as_ref()),
    })
}

/// Every run of the tenant whose id starts with `prefix`, one page after another.
pub async fn list(client: &Client, prefix: &str, json: bool) -> Result<(), CliError> {
    let mut runs = Vec::new();
    let mut page_token = String::new();
    loop {
        let request = proto::ListRunsRequest {
            page_size: MAX_PAGE,
            page_token,
            run_id_prefix: prefix.to_owned(),
        };
        let page = client
            .checkpoints()
            .list_runs(request)
            .await
            .map_err(|status| client.status(status))?
            .into_inner();
        runs.extend(page.runs);
        if page.next_page_token.is_empty() {
            break;
        }
        page_token = page.next_page_token;
    }
    if json {
        print_json(&Value::Array(runs.iter().map(head_json).collect()));
        return Ok(());
    }
    let mut table = Table::new(vec![
        "RUN",
        "EPOCH",
        "LATEST",
        "VALID",
        "CHECKPOINTS",
        "MESSAGES",
        "TOOLS",
        "UPDATED",
    ]);
    for head in &runs {
        table.row(vec![
            head.run_id.clone(),
            head.epoch.to_string(),
            step_text(head.latest_step),
            step_text(head.latest_valid_step),
            head.checkpoint_count.to_string(),
            head.message_count.to_string(),
            head.tool_count.to_string(),
            time_text(head.updated_at.as_ref()),
        ]);
    }
    print!("{}", table.render());
    Ok(())
}

/// One run's head.
pub async fn head(client: &Client, run: &str, json: bool) -> Result<(), CliError> {
    let request = proto::GetRunRequest {
        run_id: run.to_owned(),
    };
    let head = client
        .checkpoints()
        .get_run(request)
        .await
        .map_err(|status| client.status(status))?
        .into_inner()
        .run
        .unwrap_or_default();
    if json {
        print_json(&head_json(&head));
        return Ok(());
    }
    print_fields(&[
        ("run", head.run_id.clone()),
        ("epoch", head.epoch.to_string()),
        ("latest step", step_text(head.latest_step)),
        ("latest valid step", step_text(head.latest_valid_step)),
        ("checkpoints", head.checkpoint_count.to_string()),
        ("messages", head.message_count.to_string()),
        ("tool journal", head.tool_count.to_string()),
        ("updated", time_text(head.updated_at.as_ref())),
    ]);
    Ok(())
}
