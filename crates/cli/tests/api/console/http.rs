//! A minimal HTTP/1.1 client for the console tests: one request per connection
//! (`Connection: close`), the answer read to its end. Enough for server-rendered pages,
//! forms and cookies, with nothing between the test and the bytes on the wire.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// One answer: status, headers (lower-case names; the last value of each), body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// The session cookie (`name=value`) the answer sets, if any.
    pub fn session_cookie(&self) -> Option<String> {
        let set = self.header("set-cookie")?;
        let pair = set.split(';').next()?.trim();
        (!pair.ends_with('=')).then(|| pair.to_owned())
    }

    /// The value of the first hidden `csrf` field on the page.
    pub fn csrf(&self) -> String {
        let marker = r#"name="csrf" value=""#;
        let start = self.body.find(marker).expect("a csrf field on the page") + marker.len();
        let end = self.body[start..].find('"').unwrap();
        self.body[start..start + end].to_owned()
    }
}

/// `GET path` with `cookie`.
pub async fn get(addr: SocketAddr, path: &str, cookie: Option<&str>) -> Reply {
    send(addr, "GET", path, cookie, None).await
}

/// `GET path` with `cookie` and the extra `headers` (name, value).
pub async fn get_with(
    addr: SocketAddr,
    path: &str,
    cookie: Option<&str>,
    headers: &[(&str, &str)],
) -> Reply {
    let stream = TcpStream::connect(addr)
        .await
        .expect("connect to the console");
    let mut raw = request(addr, "GET", path, cookie, None);
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    // Before the blank line that ends the head.
    raw.truncate(raw.len() - 2);
    raw.extend_from_slice(extra.as_bytes());
    raw.extend_from_slice(b"\r\n");
    exchange(stream, &raw).await
}

/// `POST path` of the form `fields` with `cookie`.
pub async fn post(
    addr: SocketAddr,
    path: &str,
    cookie: Option<&str>,
    fields: &[(&str, &str)],
) -> Reply {
    send(addr, "POST", path, cookie, Some(form_body(fields))).await
}

async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    cookie: Option<&str>,
    body: Option<String>,
) -> Reply {
    let stream = TcpStream::connect(addr)
        .await
        .expect("connect to the console");
    exchange(stream, &request(addr, method, path, cookie, body)).await
}

/// `POST path` of the form `fields` over TLS, trusting only the CA in the PEM file `ca`, as
/// `localhost`.
pub async fn post_tls(addr: SocketAddr, ca: &Path, path: &str, fields: &[(&str, &str)]) -> Reply {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let tcp = TcpStream::connect(addr).await.unwrap();
    let stream = TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .expect("a TLS handshake with the test CA");
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let body = Some(form_body(fields));
    exchange(stream, &request(addr, "POST", path, None, body)).await
}

fn form_body(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    cookie: Option<&str>,
    body: Option<String>,
) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(cookie) = cookie {
        head.push_str(&format!("Cookie: {cookie}\r\n"));
    }
    let body = body.unwrap_or_default();
    if method == "POST" {
        head.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    head.push_str(&body);
    head.into_bytes()
}

async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, request: &[u8]) -> Reply {
    stream.write_all(request).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read the answer");
    parse(&String::from_utf8(raw).expect("a UTF-8 answer"))
}

fn parse(raw: &str) -> Reply {
    let (head, body) = raw.split_once("\r\n\r\n").expect("a complete answer");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let headers: HashMap<String, String> = headers;
    let body = if headers
        .get("transfer-encoding")
        .is_some_and(|te| te == "chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (byte as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}
