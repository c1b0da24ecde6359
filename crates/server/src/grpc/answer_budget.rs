//! A server-wide budget of answer bytes, shared fairly as the request budget is: a load's answer
//! takes its size from its tenant's share (half the budget), its connection's share (a quarter)
//! and the server's budget before it is encoded, and gives it back once the response body has
//! been sent. Many large answers at once wait (and, after [`AnswerBudget::WAIT`], are refused as
//! an overload) instead of each holding its decoded, encoded and buffered copies at the same
//! time; a client that stops reading its answers holds at most its own tenant's share.
//!
//! The handler takes the share and leaves it in the response's extensions; [`AnswerShareLayer`]
//! moves it into the response body, which hyper drops only after the last byte is written. An
//! answer not sent within `--answer-send-timeout` is cut off and its share returned then.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body as HttpBody, Frame};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::http::{Request, Response};
use tonic::codegen::{Bytes, Service};

use super::request_budget::{BudgetSizes, Caller, ConnectionId, FairBudget, Held};
use checkpointd_core::error::{Error, Result};

/// Answer bytes all loads in flight may hold at once, shared fairly between tenants.
#[derive(Clone, Debug)]
pub struct AnswerBudget {
    fair: Arc<FairBudget<ConnectionId>>,
}

/// One answer's share of the budget, held until its response body is dropped.
#[derive(Clone, Debug)]
pub struct AnswerShare {
    _held: Arc<Vec<Held<ConnectionId>>>,
}

impl AnswerBudget {
    /// How long an answer waits for room before it is refused with OVERLOADED.
    pub const WAIT: Duration = Duration::from_secs(5);

    pub fn new(bytes: usize) -> Self {
        let bytes = bytes.max(1);
        Self {
            fair: Arc::new(FairBudget::new(BudgetSizes {
                server: bytes,
                tenant: (bytes / 2).max(1),
                connection: (bytes / 4).max(1),
            })),
        }
    }

    /// Reserves `bytes` for `caller` before its answer is read, so loads wait for room before
    /// they hold anything, not after (at most a share's size, so the largest answer is still
    /// served, alone). [`Reservation::settle`] then fits it to what was read.
    pub async fn reserve(&self, caller: Caller<ConnectionId>, bytes: usize) -> Result<Reservation> {
        let held = self.take(caller.clone(), bytes).await?;
        Ok(Reservation {
            budget: self.clone(),
            caller,
            held,
        })
    }

    async fn take(&self, caller: Caller<ConnectionId>, bytes: usize) -> Result<Held<ConnectionId>> {
        let deadline = Instant::now() + Self::WAIT;
        self.fair
            .take(caller, bytes.max(1), deadline)
            .await
            .map_err(|full| {
                Error::Overloaded(format!(
                    "the server is busy: answers in flight hold the {} part of its answer budget \
                     ({} bytes, --max-inflight-answer-bytes; a tenant may hold half, a \
                     connection a quarter); retry later",
                    full.label(),
                    self.fair.sizes().server
                ))
            })
    }

    /// The most one answer of `caller` holds: the smallest share it takes from.
    fn ceiling(&self, caller: &Caller<ConnectionId>) -> usize {
        let sizes = self.fair.sizes();
        let mut ceiling = sizes.server;
        if caller.connection.is_some() {
            ceiling = ceiling.min(sizes.connection);
        }
        if caller.tenant.is_some() {
            ceiling = ceiling.min(sizes.tenant);
        }
        ceiling
    }
}

/// Room reserved for an answer before it is read.
pub struct Reservation {
    budget: AnswerBudget,
    caller: Caller<ConnectionId>,
    held: Held<ConnectionId>,
}

impl Reservation {
    /// The share of an answer that turned out to hold `bytes`: the surplus goes back at once;
    /// a shortfall (a large state or journal beside a page) is taken too, waiting as a
    /// reservation does.
    pub async fn settle(mut self, bytes: usize) -> Result<AnswerShare> {
        let wanted = bytes.max(1).min(self.budget.ceiling(&self.caller));
        let held = self.held.bytes();
        let mut parts = Vec::with_capacity(2);
        if wanted <= held {
            self.held.shrink(wanted);
            parts.push(self.held);
        } else {
            let more = self.budget.take(self.caller, wanted - held).await?;
            parts.extend([self.held, more]);
        }
        Ok(AnswerShare {
            _held: Arc::new(parts),
        })
    }
}

/// Moves an [`AnswerShare`] from a response's extensions into its body, and cuts the answer
/// off when it is not sent within the send deadline.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnswerShareLayer {
    /// Zero for no deadline.
    send_timeout: Duration,
}

impl AnswerShareLayer {
    pub fn new(send_timeout: Duration) -> Self {
        Self { send_timeout }
    }
}

impl<S> tower_layer::Layer<S> for AnswerShareLayer {
    type Service = AnswerShareService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AnswerShareService {
            inner,
            send_timeout: self.send_timeout,
        }
    }
}

/// See [`AnswerShareLayer`].
#[derive(Clone, Debug)]
pub struct AnswerShareService<S> {
    inner: S,
    send_timeout: Duration,
}

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S, B> Service<Request<B>> for AnswerShareService<S>
where
    S: Service<Request<B>, Response = Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<std::result::Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let path = request.uri().path().to_owned();
        let send_timeout = self.send_timeout;
        let response = self.inner.call(request);
        Box::pin(async move {
            let mut response = response.await?;
            let Some(share) = response.extensions_mut().remove::<AnswerShare>() else {
                return Ok(response);
            };
            Ok(response.map(|inner| Body::new(HeldBody::new(inner, share, send_timeout, path))))
        })
    }
}

/// The most bytes of an answer handed to HTTP/2 at once. The encoded answer arrives as one
/// buffer, and HTTP/2 takes a frame whatever the peer's window, so handing it over whole would
/// end the body (and give the share back) while the connection still buffers the answer for a
/// client that does not read. In pieces, the server waits for window before each next one.
const PIECE_BYTES: usize = 64 * 1024;

/// What an answer holds until it is sent or cut off: the rest of its encoded bytes and its
/// share of the budget.
struct Holding {
    inner: Body,
    /// What is left of the data frame being handed over in pieces.
    pending: Bytes,
    _share: AnswerShare,
}

/// A response body that holds its answer's share until it is dropped or its send deadline
/// passes.
///
/// The deadline is a task of its own, not a timer polled with the body: hyper does not poll a
/// body while its stream has no send window (exactly when a client does not read), so only a
/// task can let go in time. At the deadline it drops what the answer holds (the encoded bytes
/// and the share) at once; the stream is reset with an error the next time hyper polls the
/// body, which is when the client opens its window or the connection closes. What HTTP/2
/// already took (at most one piece) stays with the connection until then.
struct HeldBody {
    holding: Arc<Mutex<Option<Holding>>>,
    /// The deadline's task, stopped when the body goes first.
    deadline: Option<AbortHandle>,
}

impl HeldBody {
    fn new(inner: Body, share: AnswerShare, send_timeout: Duration, path: String) -> Self {
        let holding = Arc::new(Mutex::new(Some(Holding {
            inner,
            pending: Bytes::new(),
            _share: share,
        })));
        let deadline = (!send_timeout.is_zero()).then(|| {
            let watched = Arc::downgrade(&holding);
            tokio::spawn(async move {
                tokio::time::sleep(send_timeout).await;
                let Some(holding) = watched.upgrade() else {
                    return;
                };
                let cut = lock(&holding).take();
                if cut.is_some() {
                    crate::telemetry::metrics::record_answer_cut_off();
                    tracing::warn!(
                        rpc = %path,
                        timeout_ms = send_timeout.as_millis() as u64,
                        "answer not read within the send deadline; cut off"
                    );
                }
            })
            .abort_handle()
        });
        Self { holding, deadline }
    }
}

impl Drop for HeldBody {
    fn drop(&mut self) {
        if let Some(deadline) = &self.deadline {
            deadline.abort();
        }
    }
}

fn lock(holding: &Mutex<Option<Holding>>) -> std::sync::MutexGuard<'_, Option<Holding>> {
    // Nothing panics while holding it; a poisoned lock still guards a consistent Option.
    holding
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl HttpBody for HeldBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Self::Data>, Self::Error>>> {
        let mut guard = lock(&self.holding);
        let Some(holding) = guard.as_mut() else {
            return Poll::Ready(Some(Err(Status::deadline_exceeded(
                "the answer was not read within --answer-send-timeout and was cut off",
            ))));
        };
        if holding.pending.is_empty() {
            match std::task::ready!(Pin::new(&mut holding.inner).poll_frame(cx)) {
                Some(Ok(frame)) if frame.is_data() => {
                    holding.pending = frame.into_data().unwrap_or_default();
                }
                other => return Poll::Ready(other),
            }
        }
        let take = holding.pending.len().min(PIECE_BYTES);
        let piece = holding.pending.split_to(take);
        Poll::Ready(Some(Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        lock(&self.holding)
            .as_ref()
            .is_some_and(|holding| holding.pending.is_empty() && holding.inner.is_end_stream())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(name: &str) -> Caller<ConnectionId> {
        Caller {
            tenant: Some(checkpointd_core::domain::Tenant::parse(name).unwrap()),
            connection: None,
        }
    }

    #[tokio::test]
    async fn an_answer_waits_for_room_in_its_tenants_share_only() {
        let budget = AnswerBudget::new(100);
        let big = budget.reserve(tenant("a"), 1_000).await.unwrap();
        let big = big.settle(1_000).await.unwrap();
        tokio::time::pause();
        let refused = budget.reserve(tenant("a"), 1).await.err().unwrap();
        assert_eq!(refused.reason(), "OVERLOADED");
        assert!(refused.to_string().contains("tenant"), "{refused}");
        let _other = budget.reserve(tenant("b"), 50).await.unwrap();
        drop(big);
        let _again = budget.reserve(tenant("a"), 10).await.unwrap();
    }

    #[tokio::test]
    async fn a_reservation_keeps_only_what_the_answer_holds_and_takes_a_shortfall() {
        let budget = AnswerBudget::new(100);
        let small = budget.reserve(tenant("a"), 40).await.unwrap();
        let small = small.settle(5).await.unwrap();
        // 45 of tenant a's 50 are free again: a second reservation of 40 fits at once.
        tokio::time::pause();
        let second = budget.reserve(tenant("a"), 40).await.unwrap();
        let grown = second.settle(45).await.unwrap();
        // Now a holds 5 + 45 = its whole share.
        assert!(budget.reserve(tenant("a"), 1).await.is_err());
        drop((small, grown));
        assert!(budget.reserve(tenant("a"), 50).await.is_ok());
    }
}
