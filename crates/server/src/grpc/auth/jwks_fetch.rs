//! Fetches a JWKS document over http:// or https:// with the server's outbound client
//! ([`crate::outbound`]): one GET, a timeout, a size cap.

use std::time::Duration;

use crate::config::check_url;
use crate::outbound::{self, OutboundHttp};

/// The whole exchange, connect to last byte, must fit in this.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// A JWKS is a few kilobytes; anything much larger is not one.
const MAX_JWKS_BYTES: usize = 1 << 20;

/// The body of `GET url`, which must answer 200.
pub async fn get(http: &OutboundHttp, url: &str) -> Result<Vec<u8>, String> {
    check_url(url)?;
    outbound::get(http, url, FETCH_TIMEOUT, MAX_JWKS_BYTES)
        .await
        .map_err(|error| format!("cannot fetch the JWKS from {url}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_testkit::{HttpsServer, TestCa};

    const JWKS: &str = r#"{"keys":[]}"#;

    /// GETs `path` from an HTTPS JWKS server whose certificate a test CA signed, trusting
    /// that CA or not; with the requests the server saw.
    async fn fetch(trust_the_ca: bool, path: &str) -> (Result<Vec<u8>, String>, usize) {
        let ca = TestCa::new("outbound test CA");
        let server = HttpsServer::start(&ca.server_cert("idp", &["127.0.0.1"])).await;
        server.set("/jwks.json", 200, JWKS);
        let ca_file = ca.ca_cert();
        let http = outbound::client(trust_the_ca.then_some(ca_file.as_path())).unwrap();
        let fetched = get(&http, &format!("{}{path}", server.base_url())).await;
        (fetched, server.requests().len())
    }

    #[tokio::test]
    async fn an_https_jwks_is_fetched_when_its_ca_is_in_the_outbound_ca_file() {
        let (fetched, _) = fetch(true, "/jwks.json").await;
        assert_eq!(fetched.unwrap(), JWKS.as_bytes());
    }

    #[tokio::test]
    async fn an_https_jwks_signed_by_an_untrusted_ca_is_refused() {
        let (fetched, requests) = fetch(false, "/jwks.json").await;
        let error = fetched.unwrap_err();
        assert!(error.contains("certificate"), "{error}");
        assert_eq!(requests, 0, "no request got through");
    }

    #[tokio::test]
    async fn a_jwks_answer_that_is_not_2xx_is_an_error() {
        let (fetched, _) = fetch(true, "/missing").await;
        let error = fetched.unwrap_err();
        assert!(error.contains("404"), "{error}");
    }

    #[test]
    fn an_outbound_ca_file_without_a_certificate_stops_startup() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate").unwrap();
        assert!(outbound::client(Some(&empty)).is_err());
        assert!(outbound::client(Some(&dir.path().join("absent.pem"))).is_err());
    }
}
