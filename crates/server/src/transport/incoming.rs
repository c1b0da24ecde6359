//! The gRPC listener's accept loop: a cap on open connections, a back-off on accept errors,
//! and per-connection timeouts for clients that connect and then say nothing.
//!
//! tonic's own `TcpIncoming` retries a failed accept at once; with the open-file limit reached
//! (EMFILE) the listener stays readable, so that loop spun a whole core and starved every other
//! task, health included. Here a resource error waits, doubling up to [`MAX_ACCEPT_BACKOFF`], so
//! a starved server idles and answers again as soon as descriptors free up.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tokio_stream::Stream;
use tonic::transport::server::Connected;

use crate::config::ConnectionSettings;
use crate::grpc::connection::{ConnectionActivity, ConnectionInfo};

/// First and longest wait after an accept error that is not the peer's doing.
const MIN_ACCEPT_BACKOFF: Duration = Duration::from_millis(5);
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_millis(250);
/// Warnings about refused connections or accept errors are logged at most this often.
const WARNING_INTERVAL: Duration = Duration::from_secs(30);
/// The HTTP/2 client preface: the 24-byte magic and the header of its SETTINGS frame.
const PREFACE_BYTES: usize = 24 + 9;

/// Accepted connections of `listener`, within `settings`' cap and timeouts.
pub struct GuardedIncoming {
    listener: TcpListener,
    settings: ConnectionSettings,
    slots: Arc<Semaphore>,
    backoff: Option<Pin<Box<Sleep>>>,
    next_backoff: Duration,
    last_warning: Option<Instant>,
}

impl GuardedIncoming {
    pub fn new(listener: TcpListener, settings: ConnectionSettings) -> Self {
        Self {
            listener,
            settings,
            slots: Arc::new(Semaphore::new(settings.max_connections)),
            backoff: None,
            next_backoff: MIN_ACCEPT_BACKOFF,
            last_warning: None,
        }
    }

    fn warn(&mut self, now: Instant, log: impl FnOnce()) {
        if self
            .last_warning
            .is_none_or(|at| now.duration_since(at) >= WARNING_INTERVAL)
        {
            self.last_warning = Some(now);
            log();
        }
    }

    fn admit(&mut self, stream: TcpStream, peer: SocketAddr) -> Option<GuardedStream> {
        self.next_backoff = MIN_ACCEPT_BACKOFF;
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            let limit = self.settings.max_connections;
            self.warn(Instant::now(), || {
                tracing::warn!(%peer, limit, "connection limit reached; closing new connections");
            });
            return None;
        };
        // Nagle's algorithm would hold multi-segment replies for the client's delayed ACK
        // (~40 ms).
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
        Some(GuardedStream::new(
            stream,
            self.settings,
            slot,
            Instant::now(),
        ))
    }
}

impl Stream for GuardedIncoming {
    type Item = io::Result<GuardedStream>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(backoff) = self.backoff.as_mut() {
                ready!(backoff.as_mut().poll(cx));
                self.backoff = None;
            }
            match ready!(self.listener.poll_accept(cx)) {
                Ok((stream, peer)) => {
                    if let Some(guarded) = self.admit(stream, peer) {
                        return Poll::Ready(Some(Ok(guarded)));
                    }
                }
                // The peer gave up before we accepted; the next one may be fine.
                Err(error) if is_peer_error(&error) => {}
                Err(error) => {
                    let wait = self.next_backoff;
                    self.warn(Instant::now(), || {
                        tracing::warn!(%error, ?wait, "cannot accept connections; backing off");
                    });
                    self.next_backoff = (wait * 2).min(MAX_ACCEPT_BACKOFF);
                    self.backoff = Some(Box::pin(tokio::time::sleep(wait)));
                }
            }
        }
    }
}

fn is_peer_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
    )
}

/// One client connection: closed when it overstays a timeout; frees its slot when dropped.
pub struct GuardedStream {
    stream: TcpStream,
    info: ConnectionInfo,
    settings: ConnectionSettings,
    accepted_at: Instant,
    bytes_read: usize,
    timer: Pin<Box<Sleep>>,
    _slot: OwnedSemaphorePermit,
}

impl GuardedStream {
    fn new(
        stream: TcpStream,
        settings: ConnectionSettings,
        slot: OwnedSemaphorePermit,
        now: Instant,
    ) -> Self {
        let info = ConnectionInfo {
            tcp: stream.connect_info(),
            activity: Arc::new(ConnectionActivity::new(now)),
        };
        Self {
            stream,
            info,
            settings,
            accepted_at: now,
            bytes_read: 0,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            _slot: slot,
        }
    }

    /// When the connection must be closed unless something changes before: the preface is
    /// due by the header-read timeout, then the idle timeout runs whenever no call is in
    /// flight. `None`: no deadline now. While a call is in flight the answer is a time to look
    /// again, which is why an idle close may come up to one idle timeout late.
    fn deadline(&self, now: Instant) -> Option<(Instant, bool)> {
        let ConnectionSettings {
            header_read_timeout,
            idle_timeout,
            ..
        } = self.settings;
        if self.bytes_read < PREFACE_BYTES && !header_read_timeout.is_zero() {
            return Some((self.accepted_at + header_read_timeout, true));
        }
        if idle_timeout.is_zero() {
            return None;
        }
        Some(match self.info.activity.idle_since() {
            Some(idle_since) => (idle_since + idle_timeout, true),
            None => (now + idle_timeout, false),
        })
    }

    /// Ready with an error once the connection has overstayed; otherwise the timer is armed.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        loop {
            let now = Instant::now();
            let Some((at, closes)) = self.deadline(now) else {
                return Poll::Pending;
            };
            if closes && at <= now {
                let reason = if self.bytes_read < PREFACE_BYTES {
                    "no HTTP/2 preface within the header read timeout"
                } else {
                    "idle longer than the idle timeout"
                };
                tracing::debug!(peer = ?self.info.tcp.remote_addr(), reason, "closing connection");
                return Poll::Ready(io::Error::new(io::ErrorKind::TimedOut, reason));
            }
            self.timer.as_mut().reset(at.into());
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
    }
}

impl Connected for GuardedStream {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.info.clone()
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // Checked before reading too, so a client dribbling bytes cannot outlast the deadline.
        if let Poll::Ready(error) = self.poll_deadline(cx) {
            return Poll::Ready(Err(error));
        }
        let before = buf.filled().len();
        let read = ready!(Pin::new(&mut self.stream).poll_read(cx, buf));
        let this = &mut *self;
        this.bytes_read = this.bytes_read.saturating_add(buf.filled().len() - before);
        Poll::Ready(read)
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
