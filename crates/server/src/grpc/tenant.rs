//! The tenant and the caller of a request, as the auth layer ([`crate::grpc::auth`])
//! established them: the one place every RPC learns in which tenant it runs.

use tonic::Extensions;

use crate::grpc::auth::CallContext;
use checkpointd_core::domain::{Identity, RunId, RunKey, Tenant};
use checkpointd_core::error::{Error, Result};

pub use checkpointd_protocol::TENANT_HEADER;

fn context(extensions: &Extensions) -> Result<&CallContext> {
    // Every service sits behind the auth layer; a call without its context must not run in
    // some default tenant.
    extensions
        .get::<CallContext>()
        .ok_or_else(|| Error::internal("a call reached a service without its auth context"))
}

/// The tenant the request runs in: the credential's (an all-tenants credential's, or with
/// auth `none`: `x-tenant-id`, or `default` when absent).
pub fn tenant_of(extensions: &Extensions) -> Result<Tenant> {
    Ok(context(extensions)?.tenant.clone())
}

/// The verified caller of the request.
pub fn identity_of(extensions: &Extensions) -> Result<&Identity> {
    Ok(&context(extensions)?.identity)
}

/// The tenant-scoped key of the run a request names.
pub fn run_key(extensions: &Extensions, run_id: &str) -> Result<RunKey> {
    Ok(RunKey::new(tenant_of(extensions)?, RunId::parse(run_id)?))
}
