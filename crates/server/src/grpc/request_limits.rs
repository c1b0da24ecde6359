//! Bounds the memory requests can hold: each request's declared size is taken from a
//! server-wide budget, shared fairly between tenants and connections
//! ([`super::request_budget`]), before its body is buffered; the body must then arrive within
//! `--request-body-timeout`; and a Save's messages and metadata entries are counted on the raw
//! bytes before anything is decoded. Health checks and reflection take no budget (they are
//! capped to [`EXEMPT_MAX_REQUEST_BYTES`] instead), so probes never wait behind it.
//!
//! tonic reserves a buffer of the size a request's gRPC prefix declares as soon as it reads the
//! prefix, then prost decodes the whole message, repeated fields included, before any handler
//! can look at it. So the checks live here, in front of the decoder: a request over
//! `--max-request-bytes` is refused from its five-byte prefix alone, one that would take the
//! server over `--max-inflight-request-bytes` (or its tenant over `--max-tenant-request-bytes`,
//! or its connection over `--max-connection-request-bytes`) waits up to
//! [`RequestLimits::budget_wait`] for others to finish and is then refused with `UNAVAILABLE`
//! (a retryable overload), a body that stops arriving is cut off with `DEADLINE_EXCEEDED` /
//! `BODY_TIMEOUT` and its bytes given back, and a Save
//! over `--max-messages-per-save` or `--max-metadata-entries` (or a RecordToolResults over
//! [`checkpointd_protocol::MAX_TOOL_RESULTS_PER_BATCH`] results) is cut off mid-body with
//! `RESOURCE_EXHAUSTED`. The permit is held until the handler has answered, since the decoded
//! request and the store's copies live that long.
//!
//! A request is budgeted for what it costs once decoded, not for its wire bytes alone: an empty
//! message is two bytes on the wire and hundreds in memory. It is admitted for the most its
//! declared length can decode to under the caps ([`SaveScan::worst_cost`]) and, once its body
//! has been scanned, keeps only its length plus what its counted elements cost
//! ([`SaveScan::decoded_cost`]); the rest goes back before the decoder runs.

use crate::config::RequestLimits;
use crate::grpc::status::to_status;
use std::collections::HashMap;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body as HttpBody, Frame};
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::Bytes;
use tonic::codegen::Service;
use tonic::codegen::http::{Request, Response};

use super::request_budget::{BudgetSizes, Caller, ConnectionId, FairBudget, Full, Held};
use super::save_scan::{SaveCaps, SaveScan, largest_cost, scan_for};
use checkpointd_core::error::Error;

use super::status::status_with_reason;
use crate::heap;
use crate::telemetry::metrics;

/// The gRPC message prefix: a compression flag and a four-byte big-endian length.
const PREFIX_BYTES: usize = 5;

/// The largest request a health check or reflection call may send: theirs are a service or
/// symbol name, and they take no budget, so they must stay small.
pub const EXEMPT_MAX_REQUEST_BYTES: usize = 64 * 1024;

/// Whether a method takes no share of the budget: health checks, so probes (the Helm chart's,
/// a load balancer's) never wait behind requests, and reflection, for `grpcurl list`.
fn exempt_from_budget(path: &str) -> bool {
    path.starts_with("/grpc.health.v1.Health/")
        || path.starts_with("/grpc.reflection.v1.ServerReflection/")
        || path.starts_with("/grpc.reflection.v1alpha.ServerReflection/")
}

impl RequestLimits {
    /// How many of the largest requests the default budget admits at once. Each takes a small
    /// multiple of its size while it is decoded and stored (BENCHMARKS.md measures it), so four
    /// 16 MiB requests stay well inside the chart's 512 MiB limit.
    pub const DEFAULT_LARGEST_REQUESTS_IN_FLIGHT: usize = 4;

    /// What the costliest request these caps admit costs the budget once decoded: its
    /// `max_request_bytes` and the most elements the caps let it carry.
    pub fn largest_request_cost(&self, max_request_bytes: usize) -> usize {
        largest_cost(self.save_caps(), max_request_bytes)
    }

    /// The caps the request scan enforces.
    pub(crate) fn save_caps(&self) -> SaveCaps {
        SaveCaps {
            max_messages: self.max_messages_per_save,
            max_metadata_entries: self.max_metadata_entries,
        }
    }

    /// The budget in bytes: the configured one, or four of the largest requests; never less
    /// than one largest request (by its wire bytes), which would otherwise wait forever.
    pub fn inflight_budget(&self, max_request_bytes: usize) -> usize {
        self.max_inflight_request_bytes
            .unwrap_or_else(|| {
                self.largest_request_cost(max_request_bytes)
                    .saturating_mul(Self::DEFAULT_LARGEST_REQUESTS_IN_FLIGHT)
            })
            .max(max_request_bytes)
            .min(Semaphore::MAX_PERMITS)
    }

    /// The budget and its shares. A tenant's share defaults to half the budget, so one tenant
    /// can never hold it all; a connection's to one largest request, so one client cannot take
    /// its whole tenant's share over a single connection (its requests share one TCP stream,
    /// so holding several large bodies at once would not finish them sooner), nor, with auth
    /// off, step around the tenant's share by naming many tenants. No share is below one
    /// largest request, which would otherwise wait forever, nor above the budget.
    pub(crate) fn budget_sizes(&self, max_request_bytes: usize) -> BudgetSizes {
        let server = self.inflight_budget(max_request_bytes);
        let share = |configured: Option<usize>, default: usize| {
            configured
                .unwrap_or(default)
                .max(max_request_bytes)
                .min(server)
        };
        BudgetSizes {
            server,
            tenant: share(self.max_tenant_request_bytes, server / 2),
            connection: share(
                self.max_connection_request_bytes,
                self.largest_request_cost(max_request_bytes),
            ),
        }
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
    budget: FairBudget<ConnectionId>,
    wait: Duration,
    body_timeout: Duration,
}

impl RequestLimitsLayer {
    pub fn new(limits: RequestLimits, max_request_bytes: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                max_request_bytes,
                caps: limits.save_caps(),
                budget: FairBudget::new(limits.budget_sizes(max_request_bytes)),
                wait: limits.budget_wait,
                body_timeout: limits.body_timeout,
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
            let path = parts.uri.path();
            let exempt = exempt_from_budget(path);
            let prefix_by = Instant::now() + shared.body_timeout;
            let head = match tokio::time::timeout_at(prefix_by, read_prefix(&mut body)).await {
                Ok(Ok(head)) => head,
                Ok(Err(status)) => return Ok(status.into_http()),
                Err(_elapsed) => return Ok(body_timeout(shared.body_timeout).into_http()),
            };
            let declared = declared_length(&head);
            let scan = scan_for(path, shared.caps);
            let mut held = None;
            if let Some(length) = declared {
                let (limit, flag) = if exempt {
                    (EXEMPT_MAX_REQUEST_BYTES, "for health checks and reflection")
                } else {
                    (shared.max_request_bytes, "(--max-request-bytes)")
                };
                if length > limit {
                    let refusal = Error::TooLarge(format!(
                        "request is {length} bytes; the limit is {limit} {flag}"
                    ));
                    return Ok(to_status(refusal).into_http());
                }
                if !exempt {
                    let caller = Caller::of(&parts.extensions);
                    let wait_until = Instant::now() + shared.wait;
                    let cost = scan.as_ref().map_or(length, |scan| scan.worst_cost(length));
                    match shared.budget.take(caller, cost, wait_until).await {
                        Ok(taken) => held = Some(Arc::new(Mutex::new(BudgetShare::new(taken)))),
                        Err(full) => {
                            tracing::debug!(length, ?full, "request budget exhausted; refusing");
                            metrics::refuse_request_budget(full.label());
                            return Ok(overloaded(full, &shared).into_http());
                        }
                    }
                }
            }
            let body = Body::new(LimitedBody {
                head,
                inner: body,
                scan,
                share: held.clone().zip(declared),
                failed: false,
                deadline: Box::pin(tokio::time::sleep(shared.body_timeout)),
                timeout: shared.body_timeout,
            });
            let response = inner.call(Request::from_parts(parts, body)).await;
            // Unary handlers have answered by now, so their decoded request is gone.
            drop(held);
            response
        })
    }
}

/// The refusal of a call that found part of the budget full for [`RequestLimits::budget_wait`].
fn overloaded(full: Full, shared: &Shared) -> Status {
    let sizes = shared.budget.sizes();
    let message = match full {
        Full::Tenant => format!(
            "this tenant's requests in flight hold its whole share of the request budget \
             ({} bytes, --max-tenant-request-bytes); retry when some have finished",
            sizes.tenant
        ),
        Full::Connection => format!(
            "the requests in flight on this connection hold its whole share of the request \
             budget ({} bytes, --max-connection-request-bytes); retry when some have finished",
            sizes.connection
        ),
        Full::Server => format!(
            "the server is busy: requests in flight hold its whole request budget ({} bytes, \
             --max-inflight-request-bytes); retry later",
            sizes.server
        ),
    };
    to_status(Error::Overloaded(message))
}

/// The refusal of a call whose body did not arrive in time.
fn body_timeout(timeout: Duration) -> Status {
    metrics::refuse_request_budget("body_timeout");
    status_with_reason(
        tonic::Code::DeadlineExceeded,
        format!(
            "the request body did not arrive within {timeout:?} (--request-body-timeout); \
             its bytes were given back"
        ),
        "BODY_TIMEOUT",
        HashMap::new(),
    )
}

/// A call's share of the request budget, shown on the `checkpointd.request_budget.used` gauge
/// while it is held.
struct BudgetShare(Held<ConnectionId>);

impl BudgetShare {
    fn new(held: Held<ConnectionId>) -> Self {
        metrics::take_request_budget(held.bytes() as u64);
        Self(held)
    }

    /// Keeps `bytes` at most, giving the rest back at once.
    fn shrink(&mut self, bytes: usize) {
        let before = self.0.bytes();
        self.0.shrink(bytes);
        metrics::return_request_budget((before - self.0.bytes()) as u64);
    }
}

/// The share a call holds, reached from its body (which shrinks it) and its future (which
/// drops it once the handler has answered).
type SharedShare = Arc<Mutex<BudgetShare>>;

impl Drop for BudgetShare {
    fn drop(&mut self) {
        let bytes = self.0.bytes();
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
/// frame scanned (for a Save) before it reaches the decoder's buffer, all of it by `deadline`.
struct LimitedBody {
    head: VecDeque<Frame<Bytes>>,
    inner: Body,
    scan: Option<SaveScan>,
    /// The call's share and its declared length, until the scan has found what the request
    /// costs decoded and the share has been shrunk to that.
    share: Option<(SharedShare, usize)>,
    failed: bool,
    deadline: Pin<Box<Sleep>>,
    timeout: Duration,
}

impl LimitedBody {
    fn check(&mut self, frame: &Frame<Bytes>) -> Result<(), Status> {
        let (Some(scan), Some(data)) = (self.scan.as_mut(), frame.data_ref()) else {
            return Ok(());
        };
        // The refusal names the field, its cap and the flag that sets it (see save_scan).
        scan.feed(data)
            .map_err(|exceeded| to_status(Error::TooLarge(exceeded.to_string())))?;
        if scan.finished()
            && let Some((share, length)) = self.share.take()
        {
            let cost = length.saturating_add(scan.decoded_cost());
            share
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .shrink(cost);
        }
        Ok(())
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
        // Checked before the body, so a body that trickles in forever is cut off as well.
        if self.deadline.as_mut().poll(cx).is_ready() && !self.inner.is_end_stream() {
            self.failed = true;
            return Poll::Ready(Some(Err(body_timeout(self.timeout))));
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
        // The largest Save: 16 MiB holding the most messages and metadata entries the caps
        // allow, each costing 128 bytes decoded beyond its wire bytes.
        let largest = (16 << 20) + (10_000 + 1_000) * 128;
        assert_eq!(limits.largest_request_cost(16 << 20), largest);
        assert_eq!(limits.inflight_budget(16 << 20), 4 * largest);
        assert_eq!(limits.budget_sizes(16 << 20).connection, largest);
        // Raised caps raise what one request can cost, up to what its length can carry.
        let raised = RequestLimits {
            max_messages_per_save: 100_000_000,
            ..limits
        };
        assert_eq!(
            raised.largest_request_cost(1 << 20),
            (1 << 20) + (1 << 19) * 128
        );
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
