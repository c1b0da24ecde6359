//! A run's checkpoint summaries across every page of ListCheckpoints, for the commands that
//! show or act on all of them.

use super::client::{CliError, Client};
use checkpointd::proto::{self, CheckpointSummary};

/// Largest page the server accepts.
const MAX_PAGE: u32 = 1000;

/// Every checkpoint of the run, ascending by step, across all pages.
pub async fn list_all(client: &Client, run: &str) -> Result<Vec<CheckpointSummary>, CliError> {
    let mut checkpoints = Vec::new();
    let mut page_token = String::new();
    loop {
        let request = proto::ListCheckpointsRequest {
            run_id: run.to_owned(),
            page_size: MAX_PAGE,
            page_token,
            ..Default::default()
        };
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
