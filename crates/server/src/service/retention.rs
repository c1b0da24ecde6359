//! An operator's retention controls: a run's policy and the operator's own pins, on top of any
//! [`RetentionStore`].

use std::sync::Arc;

use checkpointd_core::domain::{RunKey, Step};
use checkpointd_core::error::{Error, Result};
use checkpointd_core::retention::{OPERATOR_PIN, RetentionPolicy};
use checkpointd_storage::store::RetentionStore;

/// SetRetention, PinCheckpoint and UnpinCheckpoint, independent of gRPC.
#[derive(Clone)]
pub struct RetentionService {
    store: Arc<dyn RetentionStore>,
}

impl RetentionService {
    pub fn new(store: Arc<dyn RetentionStore>) -> Self {
        Self { store }
    }

    /// The retention contract underneath, for the scrub's listing of a tenant's checkpoints.
    pub fn store(&self) -> &Arc<dyn RetentionStore> {
        &self.store
    }

    /// Sets the run's policy (`None`: back to the server default), stored in its canonical
    /// text form so every reader parses it the same way.
    pub async fn set_policy(&self, run: &RunKey, policy: Option<RetentionPolicy>) -> Result<()> {
        let stored = policy.map(|policy| policy.to_string());
        self.store.set_retention(run, stored.as_deref()).await
    }

    /// Pins one checkpoint for the operator; pins by other sources are separate.
    pub async fn pin(&self, run: &RunKey, step: Step) -> Result<Step> {
        self.store
            .pin(run, Some(step), OPERATOR_PIN)
            .await?
            .ok_or_else(|| Error::internal("pinning a step answered no step"))
    }

    /// Removes the operator's pin from one checkpoint or, with `every_source`, every pin on
    /// it (a stale approval pin, say); whether any pin went.
    pub async fn unpin(&self, run: &RunKey, step: Step, every_source: bool) -> Result<bool> {
        let source = (!every_source).then_some(OPERATOR_PIN);
        Ok(self.store.unpin(run, Some(step), source).await? > 0)
    }
}
