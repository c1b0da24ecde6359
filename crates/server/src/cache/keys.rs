//! Redis key names: tenant-scoped, unambiguous, and in one cluster hash slot per run.

use checkpointd_core::domain::RunKey;

/// The three keys that hold one run's cached entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunKeys {
    /// The latest checkpoint's header: everything but its messages.
    pub checkpoint: String,
    /// The run's message log, one list element per message, index = seq.
    pub messages: String,
    /// The run's tool journal, one list element per result, index = seq - 1.
    pub tools: String,
}

impl RunKeys {
    /// `{prefix}:{<tenant length>:<tenant>:<run>}:<part>`. The tenant's length makes the split
    /// between tenant and run unambiguous whatever characters they hold, and the braces keep a
    /// run's keys in one slot, which the scripts need on Redis Cluster.
    pub fn new(prefix: &str, run: &RunKey) -> Self {
        let tenant = run.tenant.as_str();
        let base = format!(
            "{prefix}:{{{}:{tenant}:{}}}",
            tenant.len(),
            run.run_id.as_str()
        );
        Self {
            checkpoint: format!("{base}:checkpoint"),
            messages: format!("{base}:messages"),
            tools: format!("{base}:tools"),
        }
    }

    pub fn all(&self) -> [&str; 3] {
        [&self.checkpoint, &self.messages, &self.tools]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_core::domain::{RunId, Tenant};

    fn keys(tenant: &str, run: &str) -> RunKeys {
        let run = RunKey::new(Tenant::parse(tenant).unwrap(), RunId::parse(run).unwrap());
        RunKeys::new("cp", &run)
    }

    #[test]
    fn tenants_never_share_a_key_even_when_names_overlap() {
        assert_ne!(keys("a:b", "c").checkpoint, keys("a", "b:c").checkpoint);
        assert_eq!(
            keys("acme", "run-1").checkpoint,
            "cp:{4:acme:run-1}:checkpoint"
        );
    }
}
