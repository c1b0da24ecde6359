//! Which role each RPC needs: one table, a match over the full method path, that denies any
//! method it does not name.

use checkpointd_core::domain::Role;

/// What a call to one method path requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// No credential: health checks and reflection, so probes and `grpcurl list` work.
    Open,
    /// A credential of this role or a higher one.
    AtLeast(Role),
    /// A method this table does not know: refused whoever calls.
    Unknown,
}

/// The one table. What only an admin may do is act in every tenant (an all-tenants
/// credential), manage keys (the `keys` command) and manage webhook endpoints. A new RPC stays unreachable until it is added here; the API tests walk
/// every method of the descriptor set through it, so a forgotten one fails them.
pub fn access(path: &str) -> Access {
    use Role::{Admin, Agent, Operator};
    if path.starts_with("/grpc.health.v1.Health/")
        || path.starts_with("/grpc.reflection.v1.ServerReflection/")
        || path.starts_with("/grpc.reflection.v1alpha.ServerReflection/")
    {
        return Access::Open;
    }
    let role = match path {
        // Checkpoints and the tool journal: an agent's own work.
        "/checkpoint.v1.CheckpointService/Save"
        | "/checkpoint.v1.CheckpointService/LoadLatest"
        | "/checkpoint.v1.CheckpointService/LoadAtStep"
        | "/checkpoint.v1.CheckpointService/Validate"
        | "/checkpoint.v1.CheckpointService/Resume"
        | "/checkpoint.v1.CheckpointService/RecordToolResult"
        | "/checkpoint.v1.CheckpointService/RecordToolResults"
        | "/checkpoint.v1.CheckpointService/RecordToolIntent"
        | "/checkpoint.v1.CheckpointService/GetJournal"
        | "/checkpoint.v1.CheckpointService/ListCheckpoints"
        | "/checkpoint.v1.CheckpointService/GetRun"
        | "/checkpoint.v1.CheckpointService/ListRuns"
        // An agent's too, unlike DeleteRun: it reaches one run of its own tenant, never a
        // pinned checkpoint, and never the message log or the tool journal, so what an
        // operator relies on (pins, the record of side effects) stays whatever it deletes.
        | "/checkpoint.v1.CheckpointService/DeleteCheckpoints" => Agent,
        // Lifecycle and repair of stored data: an operator's.
        "/checkpoint.v1.CheckpointService/RepairJournal"
        | "/checkpoint.v1.CheckpointService/DeleteRun"
        | "/checkpoint.v1.CheckpointService/SetRetention"
        | "/checkpoint.v1.CheckpointService/PinCheckpoint"
        | "/checkpoint.v1.CheckpointService/UnpinCheckpoint"
        | "/checkpoint.v1.CheckpointService/ValidateTenant" => Operator,
        // Working tasks, and reading its tenant's tasks: an agent's.
        "/checkpoint.v1.TaskService/Enqueue"
        | "/checkpoint.v1.TaskService/Claim"
        | "/checkpoint.v1.TaskService/Heartbeat"
        | "/checkpoint.v1.TaskService/Complete"
        | "/checkpoint.v1.TaskService/Fail"
        | "/checkpoint.v1.TaskService/Release"
        | "/checkpoint.v1.TaskService/RequestApproval"
        | "/checkpoint.v1.TaskService/Get"
        | "/checkpoint.v1.TaskService/List" => Agent,
        // Human decisions and steering: an operator's.
        "/checkpoint.v1.TaskService/Approve"
        | "/checkpoint.v1.TaskService/Reject"
        | "/checkpoint.v1.TaskService/ResumeTask"
        | "/checkpoint.v1.TaskService/Cancel"
        | "/checkpoint.v1.TaskService/Requeue" => Operator,
        // Learning of changes as they happen: what an agent may read anyway.
        "/checkpoint.v1.NotificationService/WatchTasks"
        | "/checkpoint.v1.NotificationService/WatchRun" => Agent,
        // Where a tenant's events are sent, with what secret: an admin's.
        "/checkpoint.v1.NotificationService/CreateWebhookEndpoint"
        | "/checkpoint.v1.NotificationService/ListWebhookEndpoints"
        | "/checkpoint.v1.NotificationService/DeleteWebhookEndpoint"
        | "/checkpoint.v1.NotificationService/ListWebhookDeliveries" => Admin,
        _ => return Access::Unknown,
    };
    Access::AtLeast(role)
}

/// Whether `role` may make a call that needs `access`.
pub fn allows(access: Access, role: Role) -> bool {
    match access {
        Access::Open => true,
        Access::AtLeast(needed) => role >= needed,
        Access::Unknown => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_methods_are_denied_to_every_role() {
        for role in [Role::Agent, Role::Operator, Role::Admin] {
            assert!(!allows(
                access("/checkpoint.v1.CheckpointService/Nope"),
                role
            ));
            assert!(!allows(access("/other.Service/Save"), role));
        }
    }

    #[test]
    fn probes_are_open_and_decisions_need_an_operator() {
        assert_eq!(access("/grpc.health.v1.Health/Check"), Access::Open);
        let approve = access("/checkpoint.v1.TaskService/Approve");
        assert!(!allows(approve, Role::Agent));
        assert!(allows(approve, Role::Operator));
        assert!(allows(approve, Role::Admin));
    }
}
