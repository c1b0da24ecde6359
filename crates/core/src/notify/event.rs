//! Events: what happened, decided from a task's state before and after a transition, and the
//! Standard Webhooks JSON payload that tells it.

use std::time::SystemTime;

use serde_json::{Map, Value, json};

use crate::domain::{RunId, RunKey, Step, Tenant};
use crate::error::{Error, Result};
use crate::queue::{Task, TaskState};

/// The action prefix the runner gives an approval that parks a call in doubt.
const IN_DOUBT_PREFIX: &str = "in_doubt ";

/// What an event tells of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A task parked for a person: an approval was requested, or a call is in doubt.
    TaskInputRequired,
    TaskApproved,
    TaskRejected,
    /// A task parked after its decision runs again.
    TaskResumed,
    /// A task whose retries are used up.
    TaskDead,
    /// A checkpoint or journal entry found corrupt.
    IntegrityCorrupt,
}

impl EventKind {
    pub const ALL: [EventKind; 6] = [
        Self::TaskInputRequired,
        Self::TaskApproved,
        Self::TaskRejected,
        Self::TaskResumed,
        Self::TaskDead,
        Self::IntegrityCorrupt,
    ];

    /// The event type of the payload, as stored and as receivers see it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TaskInputRequired => "task.input_required",
            Self::TaskApproved => "task.approved",
            Self::TaskRejected => "task.rejected",
            Self::TaskResumed => "task.resumed",
            Self::TaskDead => "task.dead",
            Self::IntegrityCorrupt => "integrity.corrupt",
        }
    }

    /// A stored type back; a row no release wrote is `Internal`.
    pub fn parse(raw: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.as_str() == raw)
            .ok_or_else(|| Error::internal(format!("event row holds type {raw:?}")))
    }

    /// Whether the event is about a task (what `WatchTasks` streams).
    pub fn is_task(self) -> bool {
        !matches!(self, Self::IntegrityCorrupt)
    }
}

/// One event as written to the outbox.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// A time-ordered UUID: the `webhook-id` of every delivery of it.
    pub id: String,
    pub tenant: Tenant,
    pub kind: EventKind,
    /// The task it is about, for task events.
    pub task_id: Option<String>,
    pub run_id: Option<String>,
    /// The JSON body every delivery sends, byte for byte (signatures cover these bytes).
    pub payload: Vec<u8>,
    pub created_at: SystemTime,
    /// The outbox's order, assigned when stored (0 before): `WatchTasks` resumes after it.
    pub sequence: u64,
}

impl Event {
    fn new(
        tenant: &Tenant,
        kind: EventKind,
        task_id: Option<String>,
        run_id: Option<String>,
        data: Map<String, Value>,
        now: SystemTime,
    ) -> Self {
        // As every backend keeps it, so a stored event reads back equal.
        let now = crate::time::whole_micros(now);
        let payload = json!({
            "type": kind.as_str(),
            "timestamp": humantime::format_rfc3339_micros(now).to_string(),
            "data": data,
        });
        Self {
            id: uuid::Uuid::now_v7().to_string(),
            tenant: tenant.clone(),
            kind,
            task_id,
            run_id,
            payload: payload.to_string().into_bytes(),
            created_at: now,
            sequence: 0,
        }
    }
}

/// The event a transition from `before` to `after` raises, if any. Only the moments a person
/// cares about raise one: parking for a person, a decision, a resume after one, a death.
pub fn task_event(tenant: &Tenant, before: &Task, after: &Task, now: SystemTime) -> Option<Event> {
    let decided = |task: &Task| task.approval.as_ref().and_then(|a| a.decision);
    let kind = if after.state == TaskState::Dead && before.state != TaskState::Dead {
        EventKind::TaskDead
    } else if after.state == TaskState::InputRequired && before.state != TaskState::InputRequired {
        EventKind::TaskInputRequired
    } else if decided(before).is_none() && decided(after).is_some() {
        if decided(after) == Some(true) {
            EventKind::TaskApproved
        } else {
            EventKind::TaskRejected
        }
    } else if before.state == TaskState::InputRequired
        && decided(before).is_some()
        && after.state == TaskState::Pending
    {
        EventKind::TaskResumed
    } else {
        return None;
    };
    let mut data = Map::new();
    data.insert("tenant".into(), tenant.as_str().into());
    data.insert("task_id".into(), after.id.as_str().into());
    data.insert("run_id".into(), after.run_id.as_str().into());
    data.insert("state".into(), after.state.as_str().into());
    data.insert("attempt".into(), after.attempt.get().into());
    if let Some(approval) = &after.approval
        && kind != EventKind::TaskDead
    {
        data.insert("action".into(), approval.action.clone().into());
        if kind == EventKind::TaskInputRequired {
            let reason = if approval.action.starts_with(IN_DOUBT_PREFIX) {
                "in_doubt"
            } else {
                "approval_requested"
            };
            data.insert("reason".into(), reason.into());
        }
        if approval.decision.is_some() {
            data.insert("decided_by".into(), approval.decided_by.clone().into());
            data.insert("comment".into(), approval.comment.clone().into());
        }
    }
    if kind == EventKind::TaskDead
        && let Some(error) = &after.last_error
    {
        data.insert("last_error".into(), error.clone().into());
    }
    Some(Event::new(
        tenant,
        kind,
        Some(after.id.as_str().to_owned()),
        Some(after.run_id.as_str().to_owned()),
        data,
        now,
    ))
}

/// Corrupt stored data, as a verification found it.
#[derive(Clone, Debug, PartialEq)]
pub struct CorruptFinding {
    pub run_id: RunId,
    /// Who found it: `quarantine` when the store raised it with the checkpoint's first
    /// quarantine (whether a load's fallback, Validate or a scrub found it).
    pub found_by: &'static str,
    /// The checkpoint's step, when a checkpoint is corrupt.
    pub step: Option<u64>,
    /// The journal entry's call id, when a journal entry is corrupt.
    pub call_id: Option<String>,
    pub detail: String,
}

/// The `integrity.corrupt` event of one finding.
pub fn corrupt_event(tenant: &Tenant, finding: &CorruptFinding, now: SystemTime) -> Event {
    let mut data = Map::new();
    data.insert("tenant".into(), tenant.as_str().into());
    data.insert("run_id".into(), finding.run_id.as_str().into());
    data.insert("found_by".into(), finding.found_by.into());
    if let Some(step) = finding.step {
        data.insert("step".into(), step.into());
    }
    if let Some(call_id) = &finding.call_id {
        data.insert("call_id".into(), call_id.clone().into());
    }
    data.insert("detail".into(), finding.detail.clone().into());
    Event::new(
        tenant,
        EventKind::IntegrityCorrupt,
        None,
        Some(finding.run_id.as_str().to_owned()),
        data,
        now,
    )
}

/// The `integrity.corrupt` event of a checkpoint's first quarantine. Each backend writes it in
/// the quarantine's own transaction, and only when the quarantine is new, so a corrupt
/// checkpoint is told once however many loads, validations or scrubs come across it.
pub fn quarantine_event(run: &RunKey, step: Step, reason: &str, now: SystemTime) -> Event {
    let finding = CorruptFinding {
        run_id: run.run_id.clone(),
        found_by: "quarantine",
        step: Some(step.get()),
        call_id: None,
        detail: reason.to_owned(),
    };
    corrupt_event(&run.tenant, &finding, now)
}
