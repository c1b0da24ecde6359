//! Reads the tenant of a request from its metadata.

use tonic::metadata::MetadataMap;

use crate::domain::{RunId, RunKey, Tenant};
use crate::error::{Error, Result};

pub use checkpointd_protocol::TENANT_HEADER;

/// The request's tenant: the `x-tenant-id` header, or `default` when absent.
pub fn tenant_of(metadata: &MetadataMap) -> Result<Tenant> {
    match metadata.get(TENANT_HEADER) {
        None => Ok(Tenant::default_tenant()),
        Some(value) => {
            let text = value.to_str().map_err(|_| {
                Error::InvalidArgument(format!("{TENANT_HEADER} must be printable ASCII"))
            })?;
            Tenant::parse(text)
        }
    }
}

/// The tenant-scoped key of the run a request names.
pub fn run_key(metadata: &MetadataMap, run_id: &str) -> Result<RunKey> {
    Ok(RunKey::new(tenant_of(metadata)?, RunId::parse(run_id)?))
}
