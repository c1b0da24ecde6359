//! What the gRPC server reads connections from: the guarded accept loop, with each connection
//! going through a TLS handshake first when TLS is configured.
//!
//! Handshakes run as tasks of their own, so a slow or silent client holds up only itself, never
//! the accept loop; one that does not finish within the header read timeout (or
//! [`DEFAULT_HANDSHAKE_TIMEOUT`] when that is off) is dropped.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::task::JoinSet;
use tokio_rustls::server::TlsStream;
use tokio_stream::Stream;
use tonic::transport::server::Connected;

use super::incoming::{GuardedIncoming, GuardedStream};
use super::tls::TlsReloader;
use crate::grpc::connection::ConnectionInfo;

/// Handshake limit when the header read timeout is `0s` (off).
const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepted connections, plain or after their TLS handshake.
pub struct ServedIncoming {
    accept: GuardedIncoming,
    tls: Option<Arc<TlsReloader>>,
    handshake_timeout: Duration,
    handshakes: JoinSet<Option<TlsStream<GuardedStream>>>,
}

impl ServedIncoming {
    pub fn new(
        accept: GuardedIncoming,
        tls: Option<Arc<TlsReloader>>,
        header_read_timeout: Duration,
    ) -> Self {
        Self {
            accept,
            tls,
            handshake_timeout: if header_read_timeout.is_zero() {
                DEFAULT_HANDSHAKE_TIMEOUT
            } else {
                header_read_timeout
            },
            handshakes: JoinSet::new(),
        }
    }
}

impl Stream for ServedIncoming {
    type Item = io::Result<ServedStream>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        // Accept everything waiting, starting a handshake for each when TLS is on.
        loop {
            match Pin::new(&mut this.accept).poll_next(cx) {
                Poll::Ready(Some(Ok(stream))) => match &this.tls {
                    None => return Poll::Ready(Some(Ok(ServedStream::Plain(stream)))),
                    Some(tls) => {
                        let acceptor = tls.acceptor();
                        let limit = this.handshake_timeout;
                        this.handshakes.spawn(async move {
                            let peer = stream.connect_info().tcp.remote_addr();
                            match tokio::time::timeout(limit, acceptor.accept(stream)).await {
                                Ok(Ok(tls)) => Some(tls),
                                Ok(Err(error)) => {
                                    tracing::debug!(?peer, %error, "TLS handshake failed");
                                    None
                                }
                                Err(_) => {
                                    tracing::debug!(?peer, "TLS handshake timed out");
                                    None
                                }
                            }
                        });
                    }
                },
                Poll::Ready(other) => {
                    return Poll::Ready(other.map(|r| r.map(ServedStream::Plain)));
                }
                Poll::Pending => break,
            }
        }
        // Then hand over any finished handshake.
        loop {
            match this.handshakes.poll_join_next(cx) {
                Poll::Ready(Some(Ok(Some(tls)))) => {
                    return Poll::Ready(Some(Ok(ServedStream::Tls(Box::new(tls)))));
                }
                // A failed handshake, or a task that could not finish: next one.
                Poll::Ready(Some(_)) => {}
                // None in flight: the accept loop's waker is registered above.
                Poll::Ready(None) | Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// One client connection, in plain text or TLS.
///
/// One of these lives per connection, so the plain variant's size is of no concern; the TLS
/// state is boxed only because it is much larger still.
#[expect(
    clippy::large_enum_variant,
    reason = "one value per open connection, never copied"
)]
pub enum ServedStream {
    Plain(GuardedStream),
    Tls(Box<TlsStream<GuardedStream>>),
}

impl Connected for ServedStream {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        match self {
            Self::Plain(stream) => stream.connect_info(),
            Self::Tls(stream) => stream.get_ref().0.connect_info(),
        }
    }
}

impl AsyncRead for ServedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            Self::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ServedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            Self::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
            Self::Tls(stream) => Pin::new(stream.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Plain(stream) => stream.is_write_vectored(),
            Self::Tls(stream) => stream.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(stream) => Pin::new(stream).poll_flush(cx),
            Self::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            Self::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}
