//! A tiny HTTPS server with canned answers, for tests of the server's own outbound calls: a
//! JWKS, an OpenID provider's discovery document and token endpoint. Answers are set by path
//! (the query ignored) and may change while it runs; every request is recorded.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::pki::CertFiles;

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    /// The request target, query included.
    pub target: String,
    /// The header fields in order, names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

#[derive(Default)]
struct Shared {
    answers: HashMap<String, (u16, String)>,
    requests: Vec<RecordedRequest>,
}

/// See the module documentation. Stops when dropped.
pub struct HttpsServer {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpsServer {
    /// Serves on a loopback port with `cert` (which should name `127.0.0.1`); unknown paths
    /// answer 404.
    pub async fn start(cert: &CertFiles) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert.cert)
            .expect("read certificate")
            .collect::<Result<_, _>>()
            .expect("parse certificate");
        let key = PrivateKeyDer::from_pem_file(&cert.key).expect("read key");
        let mut config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("server TLS config");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Mutex::new(Shared::default()));
        let serving = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (acceptor, shared) = (acceptor.clone(), serving.clone());
                tokio::spawn(async move {
                    // A client that refuses the certificate ends the handshake; nothing to do.
                    if let Ok(tls) = acceptor.accept(stream).await {
                        answer(tls, &shared).await;
                    }
                });
            }
        });
        Self { addr, shared, task }
    }

    /// `https://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("https://127.0.0.1:{}", self.addr.port())
    }

    /// Answers `path` with `status` and the JSON `body` from now on.
    pub fn set(&self, path: &str, status: u16, body: impl Into<String>) {
        let mut shared = self.shared.lock().unwrap();
        shared
            .answers
            .insert(path.to_owned(), (status, body.into()));
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().unwrap().requests.clone()
    }
}

impl Drop for HttpsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request (head, then a `content-length` body) and writes the canned answer.
async fn answer<S>(mut stream: S, shared: &Mutex<Shared>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = find(&received, b"\r\n\r\n") {
            break at + 4;
        }
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => received.extend_from_slice(&buffer[..read]),
        }
    };
    let head = String::from_utf8_lossy(&received[..head_end]).into_owned();
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    while received.len() < head_end + length {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => received.extend_from_slice(&buffer[..read]),
        }
    }
    let mut words = head.split_whitespace();
    let method = words.next().unwrap_or_default().to_owned();
    let target = words.next().unwrap_or_default().to_owned();
    let body = String::from_utf8_lossy(&received[head_end..head_end + length]).into_owned();
    let path = target.split('?').next().unwrap_or_default().to_owned();
    let (status, reply) = {
        let mut shared = shared.lock().unwrap();
        shared.requests.push(RecordedRequest {
            method,
            target,
            headers,
            body,
        });
        shared
            .answers
            .get(&path)
            .cloned()
            .unwrap_or((404, "{}".to_owned()))
    };
    let response = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{reply}",
        reply.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
