//! A TCP proxy a test can cut and restore, to make a database unreachable without stopping it.

use std::net::SocketAddr;

use tokio::io::copy_bidirectional;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

pub struct TcpProxy {
    pub addr: SocketAddr,
    upstream: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl TcpProxy {
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        Self {
            addr,
            upstream,
            task: Some(tokio::spawn(forward(listener, upstream))),
        }
    }

    /// Closes the listener and every open connection.
    pub async fn cut(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }

    /// Listens again on the same address.
    pub async fn restore(&mut self) {
        let listener = TcpListener::bind(self.addr).await.unwrap();
        self.task = Some(tokio::spawn(forward(listener, self.upstream)));
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn forward(listener: TcpListener, upstream: SocketAddr) {
    // Connections live in the set, so aborting this task drops and closes all of them.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((mut inbound, _)) = accepted else { continue };
                connections.spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                        let _ = copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}
