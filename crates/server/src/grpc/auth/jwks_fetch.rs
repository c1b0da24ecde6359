//! Fetches a JWKS document over plain HTTP/1.1 with the hyper client already in the tree: one
//! GET, a timeout, a size cap.

use std::time::Duration;

use http_body::Body as _;
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tonic::codegen::http::Uri;

use crate::config::check_url;

/// The whole exchange, connect to last byte, must fit in this.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// A JWKS is a few kilobytes; anything much larger is not one.
const MAX_JWKS_BYTES: usize = 1 << 20;

/// The body of `GET url`, which must answer 200.
pub async fn get(url: &str) -> Result<Vec<u8>, String> {
    tokio::time::timeout(FETCH_TIMEOUT, fetch(url))
        .await
        .map_err(|_| format!("fetching the JWKS from {url} took over {FETCH_TIMEOUT:?}"))?
}

async fn fetch(url: &str) -> Result<Vec<u8>, String> {
    check_url(url)?;
    let uri: Uri = url.parse().map_err(|error| format!("{error}"))?;
    let host = uri.host().unwrap_or_default().to_owned();
    let port = uri.port_u16().unwrap_or(80);
    let failed =
        |error: &dyn std::fmt::Display| format!("cannot fetch the JWKS from {url}: {error}");
    let stream = TcpStream::connect((host.trim_matches(['[', ']']), port))
        .await
        .map_err(|error| failed(&error))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|error| failed(&error))?;
    // The connection future drives the socket; it ends with the exchange.
    tokio::spawn(connection);
    let authority = uri.authority().map(|a| a.to_string()).unwrap_or(host);
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let request = Request::get(path)
        .header("host", authority)
        .header("accept", "application/json")
        .body(String::new())
        .map_err(|error| failed(&error))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|error| failed(&error))?;
    if !response.status().is_success() {
        return Err(failed(&format!("HTTP {}", response.status())));
    }
    read_capped(response.into_body())
        .await
        .map_err(|error| failed(&error))
}

async fn read_capped(mut body: Incoming) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    while let Some(frame) =
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
    {
        let frame = frame.map_err(|error| error.to_string())?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_JWKS_BYTES {
                return Err(format!("the JWKS is over {MAX_JWKS_BYTES} bytes"));
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}
