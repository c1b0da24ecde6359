//! In-memory queue for tests and throwaway runs.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use super::{
    ClaimBatch, NewTask, Task, TaskId, TaskQueue, TaskState, Transition, WaitingPage, WaitingQuery,
    rules, select_waiting,
};
use crate::notifications::MemoryNotifications;
use checkpointd_core::domain::Tenant;
use checkpointd_core::error::{Error, Result};
use checkpointd_core::notify::task_event;

#[derive(Default)]
struct Tasks {
    /// Ordered by id, which is time-ordered, so iteration is oldest first.
    by_id: BTreeMap<(Tenant, TaskId), Task>,
    by_key: HashMap<(Tenant, String), TaskId>,
}

impl Tasks {
    /// Replaces a stored task by `change` of it and returns the new one.
    fn replace(&mut self, key: &(Tenant, TaskId), change: impl FnOnce(&Task) -> Task) -> Task {
        let task = self
            .by_id
            .get_mut(key)
            .expect("a task chosen under the same lock");
        *task = change(task);
        task.clone()
    }
}

/// Every task in one map behind a mutex; each call is atomic. A transition's event is
/// recorded in the queue's outbox while the lock is held, so no one sees the one without the
/// other.
#[derive(Default)]
pub struct MemoryQueue {
    tasks: Mutex<Tasks>,
    notifications: Arc<MemoryNotifications>,
}

impl MemoryQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// The outbox this queue writes its events to: the notification store of `memory://`.
    pub fn notifications(&self) -> Arc<MemoryNotifications> {
        self.notifications.clone()
    }

    /// Stores `task` as given, bypassing the rules: how the behaviour suite sets up any state
    /// and moves time, as it rewrites rows in the databases.
    #[cfg(any(test, feature = "testsuite"))]
    pub(crate) fn put(&self, tenant: &Tenant, task: Task) {
        self.with(|tasks| {
            if let Some(key) = &task.idempotency_key {
                tasks
                    .by_key
                    .insert((tenant.clone(), key.clone()), task.id.clone());
            }
            tasks.by_id.insert((tenant.clone(), task.id.clone()), task)
        });
    }

    fn with<T>(&self, f: impl FnOnce(&mut Tasks) -> T) -> T {
        let mut tasks = self
            .tasks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut tasks)
    }
}

#[async_trait]
impl TaskQueue for MemoryQueue {
    async fn depth(&self) -> Result<Vec<(TaskState, u64)>> {
        self.with(|tasks| {
            let mut counts: HashMap<TaskState, u64> = HashMap::new();
            for task in tasks.by_id.values() {
                *counts.entry(task.state).or_default() += 1;
            }
            Ok(counts.into_iter().collect())
        })
    }

    async fn enqueue(&self, tenant: &Tenant, task: NewTask) -> Result<(Task, bool)> {
        self.with(|tasks| {
            if let Some(key) = &task.idempotency_key
                && let Some(id) = tasks.by_key.get(&(tenant.clone(), key.clone()))
            {
                return Ok((tasks.by_id[&(tenant.clone(), id.clone())].clone(), true));
            }
            let task = Task::new(task, SystemTime::now());
            if let Some(key) = &task.idempotency_key {
                tasks
                    .by_key
                    .insert((tenant.clone(), key.clone()), task.id.clone());
            }
            tasks
                .by_id
                .insert((tenant.clone(), task.id.clone()), task.clone());
            Ok((task, false))
        })
    }

    async fn claim(
        &self,
        tenant: &Tenant,
        worker: &str,
        lease: Duration,
        batch: ClaimBatch,
        now: SystemTime,
    ) -> Result<Vec<Task>> {
        self.with(|tasks| {
            let mine = tasks.by_id.iter().filter(|((owner, _), _)| owner == tenant);
            let chosen: Vec<(Tenant, TaskId)> = rules::select_claims(mine, now, batch.as_usize())
                .into_iter()
                .map(|(key, _)| key.clone())
                .collect();
            Ok(chosen
                .iter()
                .map(|key| tasks.replace(key, |task| rules::claim(task, worker, lease, now)))
                .collect())
        })
    }

    async fn reap_exhausted(&self, now: SystemTime, limit: usize) -> Result<u64> {
        self.with(|tasks| {
            let chosen: Vec<(Tenant, TaskId)> = rules::select_reaps(&tasks.by_id, now, limit)
                .into_iter()
                .map(|(key, _)| key.clone())
                .collect();
            for key in &chosen {
                let before = tasks.by_id[key].clone();
                let after = tasks.replace(key, |task| rules::reap(task, now));
                if let Some(event) = task_event(&key.0, &before, &after, now) {
                    self.notifications.record(&event);
                }
            }
            Ok(chosen.len() as u64)
        })
    }

    async fn update(
        &self,
        tenant: &Tenant,
        id: &TaskId,
        transition: Transition,
        now: SystemTime,
    ) -> Result<Task> {
        self.with(|tasks| {
            let task = tasks
                .by_id
                .get_mut(&(tenant.clone(), id.clone()))
                .ok_or_else(|| Error::task_not_found(id))?;
            let next = rules::apply(task, transition, now)?;
            if let Some(event) = task_event(tenant, task, &next, now) {
                self.notifications.record(&event);
            }
            *task = next;
            Ok(task.clone())
        })
    }

    async fn get(&self, tenant: &Tenant, id: &TaskId) -> Result<Option<Task>> {
        self.with(|tasks| Ok(tasks.by_id.get(&(tenant.clone(), id.clone())).cloned()))
    }

    async fn list_tasks(
        &self,
        tenant: &Tenant,
        state: Option<TaskState>,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<Task>> {
        self.with(|tasks| {
            Ok(tasks
                .by_id
                .iter()
                .filter(|((owner, id), task)| {
                    owner == tenant
                        && after.is_none_or(|after| id > after)
                        && state.is_none_or(|state| task.state == state)
                })
                .take(limit)
                .map(|(_, task)| task.clone())
                .collect())
        })
    }

    async fn list_waiting(&self, tenant: &Tenant, query: &WaitingQuery) -> Result<WaitingPage> {
        self.with(|tasks| {
            let owned = tasks
                .by_id
                .iter()
                .filter(|((owner, _), _)| owner == tenant)
                .map(|(_, task)| task);
            Ok(select_waiting(owned, query))
        })
    }
}
