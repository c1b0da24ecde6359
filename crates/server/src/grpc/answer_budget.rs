//! A server-wide budget of answer bytes, shared fairly as the request budget is: a load's answer
//! takes its size from its tenant's share (half the budget), its connection's share (a quarter)
//! and the server's budget before it is encoded, and gives it back once the response body has
//! been sent. Many large answers at once wait (and, after [`AnswerBudget::WAIT`], are refused as
//! an overload) instead of each holding its decoded, encoded and buffered copies at the same
//! time; a client that stops reading its answers holds at most its own tenant's share.
//!
//! The handler takes the share and leaves it in the response's extensions; [`AnswerShareLayer`]
//! moves it into the response body, which hyper drops only after the last byte is written.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body as HttpBody, Frame};
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

/// Moves an [`AnswerShare`] from a response's extensions into its body.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnswerShareLayer;

impl<S> tower_layer::Layer<S> for AnswerShareLayer {
    type Service = AnswerShareService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AnswerShareService { inner }
    }
}

/// See [`AnswerShareLayer`].
#[derive(Clone, Debug)]
pub struct AnswerShareService<S> {
    inner: S,
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
        let response = self.inner.call(request);
        Box::pin(async move {
            let mut response = response.await?;
            let Some(share) = response.extensions_mut().remove::<AnswerShare>() else {
                return Ok(response);
            };
            Ok(response.map(|inner| {
                Body::new(HeldBody {
                    inner,
                    pending: Bytes::new(),
                    _share: share,
                })
            }))
        })
    }
}

/// The most bytes of an answer handed to HTTP/2 at once. The encoded answer arrives as one
/// buffer, and HTTP/2 takes a frame whatever the peer's window, so handing it over whole would
/// end the body (and give the share back) while the connection still buffers the answer for a
/// client that does not read. In pieces, the server waits for window before each next one.
const PIECE_BYTES: usize = 64 * 1024;

/// A response body that holds its answer's share until it is dropped.
struct HeldBody {
    inner: Body,
    /// What is left of the data frame being handed over in pieces.
    pending: Bytes,
    _share: AnswerShare,
}

impl HttpBody for HeldBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Self::Data>, Self::Error>>> {
        if self.pending.is_empty() {
            match std::task::ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
                Some(Ok(frame)) if frame.is_data() => {
                    self.pending = frame.into_data().unwrap_or_default();
                }
                other => return Poll::Ready(other),
            }
        }
        let take = self.pending.len().min(PIECE_BYTES);
        let piece = self.pending.split_to(take);
        Poll::Ready(Some(Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_empty() && self.inner.is_end_stream()
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
