//! The console's accept loop: HTTP/1.1, over TLS when the server has a certificate (the same
//! one as the gRPC port, reloaded with it), each connection its own task. A connection that
//! sends no complete request head within [`HEADER_READ_TIMEOUT`] is closed, and a TLS
//! handshake gets as long, so a silent client holds nothing but its own socket.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::transport::TlsReloader;

/// How long a client may take to send a request head, or to finish its TLS handshake.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until `stop` is cancelled; open connections end with it too.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    tls: Option<Arc<TlsReloader>>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors and the like: wait a moment instead of spinning.
                tracing::warn!(%error, "console accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let router = router.clone();
        let stop = stop.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let Some(tls) = tls else {
                return connection(stream, router, stop).await;
            };
            let acceptor = tls.http1_acceptor();
            match tokio::time::timeout(HEADER_READ_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => connection(stream, router, stop).await,
                Ok(Err(error)) => tracing::debug!(%peer, %error, "console TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "console TLS handshake timed out"),
            }
        });
    }
}

/// Serves one connection's requests until it closes or `stop` is cancelled.
async fn connection<S>(stream: S, router: Router, stop: CancellationToken)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(router));
    tokio::select! {
        outcome = served => {
            if let Err(error) = outcome {
                tracing::debug!(%error, "console connection ended with an error");
            }
        }
        () = stop.cancelled() => {}
    }
}
