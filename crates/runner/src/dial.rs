//! How a client reaches checkpointd (the server URL, TLS, the bearer token): the
//! `checkpointd-client` crate's, under the runner's name so its users keep their paths.

pub use checkpointd_client::dial::{AUTHORIZATION_HEADER, Dial, DialArgs};
