//! The server's notification key and the per-endpoint signing keys derived from it: no
//! endpoint secret is ever stored (see docs/notifications.md, "Secrets are derived").

use std::path::Path;

use base64::Engine;

use checkpointd_core::domain::Tenant;

/// Fewest bytes of a notification key file: a 256-bit key.
const MIN_KEY_BYTES: usize = 32;
/// What the derivation is for, so the key can serve nothing else by accident.
const PURPOSE: &[u8] = b"checkpointd webhook v1";
/// Standard Webhooks' secret prefix.
const SECRET_PREFIX: &str = "whsec_";

/// The key every endpoint's signing key is derived from, as read from `--webhook-key-file`.
pub struct NotificationKey(Vec<u8>);

impl std::fmt::Debug for NotificationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NotificationKey(..)")
    }
}

impl NotificationKey {
    /// Reads the key file: at least 32 bytes, used as they are (trailing whitespace aside,
    /// so a key written by `openssl rand -base64 48 > FILE` works too).
    pub fn load(path: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(path).map_err(|error| {
            format!("cannot read --webhook-key-file {}: {error}", path.display())
        })?;
        let trimmed = bytes.trim_ascii_end().to_vec();
        if trimmed.len() < MIN_KEY_BYTES {
            return Err(format!(
                "--webhook-key-file {} holds {} bytes; at least {MIN_KEY_BYTES} random bytes are \
                 needed (head -c 32 /dev/urandom > FILE)",
                path.display(),
                trimmed.len()
            ));
        }
        Ok(Self(trimmed))
    }

    /// A key from bytes, for tests.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The signing key of one endpoint: HMAC-SHA256 over the purpose, tenant, endpoint id and
    /// salt, each length-prefixed so no two inputs frame alike.
    pub fn signing_key(&self, tenant: &Tenant, endpoint_id: &str, salt: &[u8]) -> [u8; 32] {
        let mut framed = Vec::with_capacity(64 + endpoint_id.len() + salt.len());
        for part in [
            PURPOSE,
            tenant.as_str().as_bytes(),
            endpoint_id.as_bytes(),
            salt,
        ] {
            framed.extend_from_slice(&(part.len() as u64).to_be_bytes());
            framed.extend_from_slice(part);
        }
        hmac_sha256::HMAC::mac(&framed, &self.0)
    }
}

/// A signing key as the receiver configures it: `whsec_` + base64.
pub fn secret_text(signing_key: &[u8; 32]) -> String {
    format!(
        "{SECRET_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(signing_key)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_endpoint_gets_its_own_stable_key_and_a_secret_standard_webhooks_reads() {
        let key = NotificationKey::from_bytes(vec![1; 32]);
        let acme = Tenant::parse("acme").unwrap();
        let other = Tenant::parse("other").unwrap();
        let first = key.signing_key(&acme, "e1", b"salt");
        assert_eq!(first, key.signing_key(&acme, "e1", b"salt"));
        assert_ne!(first, key.signing_key(&other, "e1", b"salt"));
        assert_ne!(first, key.signing_key(&acme, "e1", b"salt2"));
        assert_ne!(
            first,
            NotificationKey::from_bytes(vec![2; 32]).signing_key(&acme, "e1", b"salt")
        );
        let secret = secret_text(&first);
        let verifier = standardwebhooks::Webhook::new(&secret).unwrap();
        let signer = standardwebhooks::Webhook::from_bytes(first.to_vec()).unwrap();
        let signature = signer.sign("msg", 1, b"{}").unwrap();
        assert_eq!(verifier.sign("msg", 1, b"{}").unwrap(), signature);
    }

    #[test]
    fn a_short_key_file_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, b"short\n").unwrap();
        let refused = NotificationKey::load(&path).unwrap_err();
        assert!(refused.contains("at least 32"), "{refused}");
        std::fs::write(&path, [7u8; 40]).unwrap();
        assert!(NotificationKey::load(&path).is_ok());
    }
}
