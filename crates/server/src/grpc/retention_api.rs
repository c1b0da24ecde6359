//! The retention and scrub RPCs of `CheckpointService`: parse, call, convert.

use std::pin::Pin;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;
use tonic::{Request, Status};

use super::convert::verdict_to_wire;
use super::tenant::{run_key, tenant_of};
use crate::domain::Step;
use crate::engine::{DEFAULT_PAGE_SIZE, Engine, MAX_PAGE_SIZE};
use crate::error::{Error, Result};
use crate::maintenance::{ScrubItem, scrub};
use crate::proto;
use crate::store::retention::{OPERATOR_PIN, RetentionPolicy};

/// The server-streaming answer of ValidateTenant.
pub type VerdictStream =
    Pin<Box<dyn Stream<Item = std::result::Result<proto::ValidateTenantResponse, Status>> + Send>>;

/// Verdicts buffered between the scrub and a slow reader; the scrub waits beyond this.
const STREAM_BUFFER: usize = 16;

pub async fn set_retention(
    engine: &Engine,
    request: Request<proto::SetRetentionRequest>,
) -> Result<proto::SetRetentionResponse> {
    let run = run_key(request.metadata(), &request.get_ref().run_id)?;
    let policy = match request.get_ref().policy.as_str() {
        "" => None,
        raw => Some(raw.parse::<RetentionPolicy>()?.to_string()),
    };
    engine
        .store()
        .set_retention(&run, policy.as_deref())
        .await?;
    Ok(proto::SetRetentionResponse {
        policy: policy.unwrap_or_default(),
    })
}

pub async fn pin(
    engine: &Engine,
    request: Request<proto::PinCheckpointRequest>,
) -> Result<proto::PinCheckpointResponse> {
    let run = run_key(request.metadata(), &request.get_ref().run_id)?;
    let step = Step::parse(request.get_ref().step)?;
    let pinned = engine.store().pin(&run, Some(step), OPERATOR_PIN).await?;
    let pinned = pinned.ok_or_else(|| Error::Internal("pinning a step answered no step".into()))?;
    Ok(proto::PinCheckpointResponse {
        step: pinned.as_i64(),
    })
}

pub async fn unpin(
    engine: &Engine,
    request: Request<proto::UnpinCheckpointRequest>,
) -> Result<proto::UnpinCheckpointResponse> {
    let run = run_key(request.metadata(), &request.get_ref().run_id)?;
    let step = Step::parse(request.get_ref().step)?;
    // An operator's own pin, or with `all_sources` every pin (a stale approval pin, say).
    let source = (!request.get_ref().all_sources).then_some(OPERATOR_PIN);
    let removed = engine.store().unpin(&run, Some(step), source).await?;
    Ok(proto::UnpinCheckpointResponse {
        unpinned: removed > 0,
    })
}

pub fn validate_tenant(
    engine: &Engine,
    request: Request<proto::ValidateTenantRequest>,
) -> Result<VerdictStream> {
    let tenant = tenant_of(request.metadata())?;
    let page_size = match request.get_ref().page_size as usize {
        0 => DEFAULT_PAGE_SIZE,
        n if n > MAX_PAGE_SIZE => {
            return Err(Error::InvalidArgument(format!(
                "page_size {n} is above the limit of {MAX_PAGE_SIZE}"
            )));
        }
        n => n,
    };
    let (sender, receiver) = mpsc::channel::<Result<ScrubItem>>(STREAM_BUFFER);
    let engine = engine.clone();
    tokio::spawn(async move {
        // The scrub stops by itself when the client goes away: its next send fails.
        let stop = CancellationToken::new();
        let outcome = scrub(&engine, Some(&tenant), page_size, &sender, &stop).await;
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
    let stream = ReceiverStream::new(receiver).map(|item| {
        item.map(|item| proto::ValidateTenantResponse {
            run_id: item.run.run_id.to_string(),
            verdict: Some(verdict_to_wire(item.verdict)),
        })
        .map_err(Status::from)
    });
    Ok(Box::pin(stream))
}
