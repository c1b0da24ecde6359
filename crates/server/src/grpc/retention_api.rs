//! The retention and scrub RPCs of `CheckpointService`: parse, call, convert.

use crate::grpc::status::to_status;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;
use tonic::{Request, Status};

use super::convert::verdict_to_wire;
use super::tenant::{run_key, tenant_of};
use crate::maintenance::{ScrubItem, scrub};
use crate::proto;
use crate::service::{Engine, RetentionService};
use checkpointd_core::domain::{PageSize, Step};
use checkpointd_core::error::Result;
use checkpointd_core::retention::RetentionPolicy;
use checkpointd_storage::store::RetentionStore;

/// The server-streaming answer of ValidateTenant.
pub type VerdictStream =
    Pin<Box<dyn Stream<Item = std::result::Result<proto::ValidateTenantResponse, Status>> + Send>>;

/// Verdicts buffered between the scrub and a slow reader; the scrub waits beyond this.
const STREAM_BUFFER: usize = 16;

pub async fn set_retention(
    retention: &RetentionService,
    request: Request<proto::SetRetentionRequest>,
) -> Result<proto::SetRetentionResponse> {
    let run = run_key(request.extensions(), &request.get_ref().run_id)?;
    let policy = match request.get_ref().policy.as_str() {
        "" => None,
        raw => Some(raw.parse::<RetentionPolicy>()?),
    };
    retention.set_policy(&run, policy).await?;
    Ok(proto::SetRetentionResponse {
        policy: policy.map(|policy| policy.to_string()).unwrap_or_default(),
    })
}

pub async fn pin(
    retention: &RetentionService,
    request: Request<proto::PinCheckpointRequest>,
) -> Result<proto::PinCheckpointResponse> {
    let run = run_key(request.extensions(), &request.get_ref().run_id)?;
    let step = Step::parse(request.get_ref().step)?;
    let pinned = retention.pin(&run, step).await?;
    Ok(proto::PinCheckpointResponse {
        step: pinned.as_i64(),
    })
}

pub async fn unpin(
    retention: &RetentionService,
    request: Request<proto::UnpinCheckpointRequest>,
) -> Result<proto::UnpinCheckpointResponse> {
    let run = run_key(request.extensions(), &request.get_ref().run_id)?;
    let step = Step::parse(request.get_ref().step)?;
    let unpinned = retention
        .unpin(&run, step, request.get_ref().all_sources)
        .await?;
    Ok(proto::UnpinCheckpointResponse { unpinned })
}

pub fn validate_tenant(
    engine: &Engine,
    listing: &Arc<dyn RetentionStore>,
    request: Request<proto::ValidateTenantRequest>,
) -> Result<VerdictStream> {
    let tenant = tenant_of(request.extensions())?;
    let page_size = PageSize::parse(request.get_ref().page_size)?;
    let (sender, receiver) = mpsc::channel::<Result<ScrubItem>>(STREAM_BUFFER);
    let (engine, listing) = (engine.clone(), listing.clone());
    tokio::spawn(async move {
        // The scrub stops by itself when the client goes away: its next send fails.
        let stop = CancellationToken::new();
        let outcome = scrub(&engine, &*listing, Some(&tenant), page_size, &sender, &stop).await;
        match outcome {
            Ok(stats) => tracing::info!(
                tenant = %tenant,
                checked = stats.checked,
                corrupt = stats.corrupt,
                "tenant validated"
            ),
            Err(error) => {
                let _ = sender.send(Err(error)).await;
            }
        }
    });
    // A corrupt checkpoint the scrub finds is told by its quarantine, in the store (once).
    let stream = ReceiverStream::new(receiver).map(move |item| {
        item.map(|item| proto::ValidateTenantResponse {
            run_id: item.run.run_id.to_string(),
            verdict: Some(verdict_to_wire(item.verdict)),
        })
        .map_err(to_status)
    });
    Ok(Box::pin(stream))
}
