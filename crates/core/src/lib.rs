//! checkpointd's core: what the service means, with no database, cache or transport in it.
//!
//! - [`domain`]: wire input parsed once into values that are valid by construction; checksum v1.
//! - [`error`]: the one error type, with a closed [`error::ErrorCode`]; the server maps it to
//!   gRPC statuses, the storage crates map their drivers' errors into it.
//! - [`plan`]: the rules of Save, RecordToolResult and journal repair as pure functions.
//! - [`retention`]: the rules of retention: which checkpoints a policy keeps, what pins protect.
//! - [`notify`]: notification events, webhook endpoints and deliveries, the retry rule.
//! - [`queue`]: task records and every queue transition as pure functions.
//! - [`secret`]: secrets in configuration and the one way a URL is shown.
//! - [`time`]: stored time, whole microseconds since the epoch, written once.
//! - `testing` (feature `testing`): builders of domain values for tests in any crate.

pub mod domain;
pub mod error;
pub mod notify;
pub mod plan;
pub mod queue;
pub mod retention;
pub mod secret;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time;
