//! Settings of the HTTPS calls the server makes itself (an identity provider's JWKS and OpenID
//! discovery, webhook deliveries): which certificate authorities it trusts besides the system's.

use std::path::PathBuf;

use super::declare::settings;

settings! {
    /// Outbound HTTP flags of `checkpointd serve`.
    pub struct OutboundArgs => OutboundValues {
        /// PEM bundle of extra CA certificates trusted for the server's own https:// calls
        /// (--jwt-jwks-url, the console's OpenID provider, webhook receivers), besides the
        /// system's roots.
        #[arg(long, env = "CHECKPOINTD_OUTBOUND_CA_FILE")]
        pub outbound_ca_file: PathBuf = unset;
    }
}
