//! Bounds the memory requests can hold: each request's declared size is taken from a
//! server-wide budget before its body is buffered, and a Save's messages and metadata entries are
//! counted on the raw bytes before anything is decoded.
//!
//! tonic reserves a buffer of the size a request's gRPC prefix declares as soon as it reads the
//! prefix, then prost decodes the whole message, repeated fields included, before any handler
//! can look at it. So the checks live here, in front of the decoder: a request over
//! `--max-request-bytes` is refused from its five-byte prefix alone, one that would take the
//! server over `--max-inflight-request-bytes` waits up to [`RequestLimits::budget_wait`] for
//! others to finish and is then refused with `UNAVAILABLE` (a retryable overload), and a Save
//! over `--max-messages-per-save` or `--max-metadata-entries` (or a RecordToolResults over
//! [`checkpointd_protocol::MAX_TOOL_RESULTS_PER_BATCH`] results) is cut off mid-body with
//! `RESOURCE_EXHAUSTED`. The permit is held until the handler has answered, since the decoded
//! request and the store's copies live that long.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body as HttpBody, Frame};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::Bytes;
use tonic::codegen::Service;
use tonic::codegen::http::{Request, Response};

use super::save_scan::{Exceeded, SaveCaps, SaveScan, scan_for};
use crate::error::Error;
use crate::heap;
use crate::telemetry::metrics;

/// The gRPC message prefix: a compression flag and a four-byte big-endian length.
const PREFIX_BYTES: usize = 5;

/// What one request and all requests together may hold; each is a `serve` flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestLimits {
    /// Messages one Save may append.
    pub max_messages_per_save: usize,
    /// Metadata entries one Save may carry.
    pub max_metadata_entries: usize,
    /// Request bytes all calls in flight may hold at once; `None`: four of the largest
    /// requests (see [`RequestLimits::inflight_budget`]).
    pub max_inflight_request_bytes: Option<usize>,
    /// How long a request waits for room in that budget before it is refused.
    pub budget_wait: Duration,
}

impl Default for RequestLimits {
    fn default() -> Self {
        Self {
            max_messages_per_save: 10_000,
            max_metadata_entries: 1_000,
            max_inflight_request_bytes: None,
            budget_wait: Duration::from_secs(5),
        }
    }
}

impl RequestLimits {
    /// How many of the largest requests the default budget admits at once. Each takes a small
    /// multiple of its size while it is decoded and stored (BENCHMARKS.md measures it), so four
    /// 16 MiB requests stay well inside the chart's 512 MiB limit.
    pub const DEFAULT_LARGEST_REQUESTS_IN_FLIGHT: usize = 4;

    /// The budget in bytes: the configured one, or four of the largest requests; never less
    /// than one largest request, which would otherwise wait forever.
    pub fn inflight_budget(&self, max_request_bytes: usize) -> usize {
        self.max_inflight_request_bytes
            .unwrap_or_else(|| {
                max_request_bytes.saturating_mul(Self::DEFAULT_LARGEST_REQUESTS_IN_FLIGHT)
            })
            .max(max_request_bytes)
            .min(Semaphore::MAX_PERMITS)
    }
}

/// See the module documentation. One layer, so one budget, per server.
#[derive(Clone, Debug)]
pub struct RequestLimitsLayer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    max_request_bytes: usize,
    caps: SaveCaps,
    budget: Arc<Semaphore>,
    budget_bytes: usize,
    wait: Duration,
}

impl RequestLimitsLayer {
    pub fn new(limits: RequestLimits, max_request_bytes: usize) -> Self {
        let budget_bytes = limits.inflight_budget(max_request_bytes);
        Self {
            shared: Arc::new(Shared {
                max_request_bytes,
                caps: SaveCaps {
                    max_messages: limits.max_messages_per_save,
                    max_metadata_entries: limits.max_metadata_entries,
                },
                budget: Arc::new(Semaphore::new(budget_bytes)),
                budget_bytes,
                wait: limits.budget_wait,
            }),
        }
    }
}

impl<S> tower_layer::Layer<S> for RequestLimitsLayer {
    type Service = RequestLimitsService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestLimitsService {
            inner,
            shared: self.shared.clone(),
        }
    }
}

/// See [`RequestLimitsLayer`].
#[derive(Clone, Debug)]
pub struct RequestLimitsService<S> {
    inner: S,
    shared: Arc<Shared>,
}

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S, R> Service<Request<Body>> for RequestLimitsService<S>
where
    S: Service<Request<Body>, Response = Response<R>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    R: Default + Send + 'static,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        // The clone that was polled ready serves this call; the fresh one waits for the next.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let shared = self.shared.clone();
        Box::pin(async move {
            let (parts, mut body) = request.into_parts();
            let head = match read_prefix(&mut body).await {
                Ok(head) => head,
                Err(status) => return Ok(status.into_http()),
            };
            let declared = declared_length(&head);
            let mut permit = None;
            if let Some(length) = declared {
                if length > shared.max_request_bytes {
                    let refusal = Error::TooLarge(format!(
                        "request is {length} bytes; the limit is {} (--max-request-bytes)",
                        shared.max_request_bytes
                    ));
                    return Ok(Status::from(refusal).into_http());
                }
                let bytes = u32::try_from(length.min(shared.budget_bytes)).unwrap_or(u32::MAX);
                let acquire = shared.budget.clone().acquire_many_owned(bytes);
                match tokio::time::timeout(shared.wait, acquire).await {
                    Ok(Ok(acquired)) => permit = Some(BudgetShare::new(acquired)),
                    // The semaphore is never closed; were it, the call goes on unbudgeted.
                    Ok(Err(_closed)) => {}
                    Err(_elapsed) => {
                        tracing::debug!(length, "request budget exhausted; refusing a call");
                        let refusal = Error::Overloaded(format!(
                            "the server is busy: requests in flight hold its whole request \
                             budget ({} bytes, --max-inflight-request-bytes); retry later",
                            shared.budget_bytes
                        ));
                        return Ok(Status::from(refusal).into_http());
                    }
                }
            }
            let scan = scan_for(parts.uri.path(), shared.caps);
            let body = Body::new(LimitedBody {
                head,
                inner: body,
                scan,
                failed: false,
            });
            let response = inner.call(Request::from_parts(parts, body)).await;
            // Unary handlers have answered by now, so their decoded request is gone.
            drop(permit);
            response
        })
    }
}

/// A call's share of the request budget, shown on the `checkpointd.request_budget.used` gauge
/// while it is held.
struct BudgetShare(OwnedSemaphorePermit);

impl BudgetShare {
    fn new(permit: OwnedSemaphorePermit) -> Self {
        metrics::take_request_budget(permit.num_permits() as u64);
        Self(permit)
    }
}

impl Drop for BudgetShare {
    fn drop(&mut self) {
        let bytes = self.0.num_permits();
        metrics::return_request_budget(bytes as u64);
        if bytes >= heap::LARGE_REQUEST_BYTES {
            heap::after_large_request();
        }
    }
}

/// Reads data frames until the gRPC prefix (five bytes) has arrived, or the body ends.
async fn read_prefix(body: &mut Body) -> Result<VecDeque<Frame<Bytes>>, Status> {
    let mut head = VecDeque::new();
    let mut data_bytes = 0;
    while data_bytes < PREFIX_BYTES {
        let frame = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await;
        match frame {
            None => break,
            Some(Err(status)) => return Err(status),
            Some(Ok(frame)) => {
                let is_data = frame.is_data();
                data_bytes += frame.data_ref().map_or(0, Bytes::len);
                head.push_back(frame);
                if !is_data {
                    break;
                }
            }
        }
    }
    Ok(head)
}

/// The message length the gRPC prefix in `head` declares, when the prefix is complete.
fn declared_length(head: &VecDeque<Frame<Bytes>>) -> Option<usize> {
    let mut prefix = [0_u8; PREFIX_BYTES];
    let mut filled = 0;
    for data in head.iter().filter_map(Frame::data_ref) {
        let take = (PREFIX_BYTES - filled).min(data.len());
        prefix[filled..filled + take].copy_from_slice(&data[..take]);
        filled += take;
        if filled == PREFIX_BYTES {
            let length = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]);
            return usize::try_from(length).ok();
        }
    }
    None
}

/// The request body as tonic reads it: the frames read ahead first, then the rest, each data
/// frame scanned (for a Save) before it reaches the decoder's buffer.
struct LimitedBody {
    head: VecDeque<Frame<Bytes>>,
    inner: Body,
    scan: Option<SaveScan>,
    failed: bool,
}

impl LimitedBody {
    fn check(&mut self, frame: &Frame<Bytes>) -> Result<(), Status> {
        let (Some(scan), Some(data)) = (self.scan.as_mut(), frame.data_ref()) else {
            return Ok(());
        };
        scan.feed(data).map_err(|exceeded| {
            let message = match exceeded {
                Exceeded::Messages(cap) => format!(
                    "a Save may append at most {cap} messages (--max-messages-per-save); \
                     save more often or in several steps"
                ),
                Exceeded::MetadataEntries(cap) => format!(
                    "a Save may carry at most {cap} metadata entries (--max-metadata-entries)"
                ),
                Exceeded::ToolResults(cap) => format!(
                    "a RecordToolResults may carry at most {cap} results; send several batches"
                ),
            };
            Status::from(Error::TooLarge(message))
        })
    }
}

impl HttpBody for LimitedBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        if self.failed {
            return Poll::Ready(None);
        }
        let next = match self.head.pop_front() {
            Some(frame) => Some(Ok(frame)),
            None => std::task::ready!(Pin::new(&mut self.inner).poll_frame(cx)),
        };
        Poll::Ready(next.map(|frame| {
            let frame = frame?;
            if let Err(status) = self.check(&frame) {
                self.failed = true;
                return Err(status);
            }
            Ok(frame)
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.failed || (self.head.is_empty() && self.inner.is_end_stream())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_budget_is_four_largest_requests_and_never_below_one() {
        let limits = RequestLimits::default();
        assert_eq!(limits.inflight_budget(16 << 20), 64 << 20);
        let small = RequestLimits {
            max_inflight_request_bytes: Some(1 << 20),
            ..limits
        };
        assert_eq!(small.inflight_budget(16 << 20), 16 << 20);
    }

    #[test]
    fn the_prefix_may_arrive_split_over_frames() {
        let head: VecDeque<_> = [vec![0, 0], vec![1], vec![2, 3, 9, 9]]
            .into_iter()
            .map(|bytes| Frame::data(Bytes::from(bytes)))
            .collect();
        assert_eq!(declared_length(&head), Some(0x0001_0203));
        let short: VecDeque<_> = [Frame::data(Bytes::from_static(&[0, 0, 1]))].into();
        assert_eq!(declared_length(&short), None);
    }
}
