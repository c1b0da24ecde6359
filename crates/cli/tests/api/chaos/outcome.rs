//! What a chaos run left behind: the tasks' end states, the emails counted from the side-effect
//! file, every checkpoint's verdict, and the summary the run prints.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use checkpointd::proto::checkpoint_service_client::CheckpointServiceClient;
use checkpointd::proto::task_service_client::TaskServiceClient;
use checkpointd::proto::{ListRequest, Task, TaskState};
use tonic::transport::Channel;

use super::plan::{ChaosPlan, email_lines};
use crate::support::validate_run;

/// The side-effect file read back: the demo agent appends one `RUN step-N/send_email` line per
/// email it sends, so the same line twice is the same email sent twice.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct EmailTally {
    /// Lines in the file: emails actually sent.
    pub sent: usize,
    /// How many times each distinct line was written.
    pub times: BTreeMap<String, usize>,
}

impl EmailTally {
    pub fn from_spool(text: &str) -> Self {
        let mut times = BTreeMap::new();
        for line in text.lines() {
            *times.entry(line.to_owned()).or_default() += 1;
        }
        Self {
            sent: text.lines().count(),
            times,
        }
    }

    /// Every email sent more than once, with how many times it was.
    pub fn repeated(&self) -> impl Iterator<Item = (&str, usize)> {
        self.times
            .iter()
            .filter(|(_, times)| **times > 1)
            .map(|(line, times)| (line.as_str(), *times))
    }

    /// Emails sent once too many, summed over every repeated email.
    pub fn duplicates(&self) -> usize {
        self.repeated().map(|(_, times)| times - 1).sum()
    }

    pub fn distinct(&self) -> usize {
        self.times.len()
    }

    /// Lines that are no email of the plan: torn writes, or steps a run does not have.
    pub fn unexpected(&self, plan: &ChaosPlan) -> Vec<&str> {
        let expected: BTreeSet<String> = plan
            .runs()
            .iter()
            .flat_map(|(run_id, steps)| email_lines(run_id, *steps).collect::<Vec<_>>())
            .collect();
        self.times
            .keys()
            .filter(|line| !expected.contains(*line))
            .map(String::as_str)
            .collect()
    }

    /// Emails of a run that were never sent.
    pub fn missing(&self, run_id: &str, steps: u64) -> Vec<String> {
        email_lines(run_id, steps)
            .filter(|line| !self.times.contains_key(line))
            .collect()
    }
}

/// Every task of the tenant, all pages.
pub async fn all_tasks(tasks: &mut TaskServiceClient<Channel>) -> Vec<Task> {
    let mut all = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = tasks
            .list(ListRequest {
                page_size: 1000,
                page_token,
                ..ListRequest::default()
            })
            .await
            .expect("list the tasks")
            .into_inner();
        all.extend(page.tasks);
        if page.next_page_token.is_empty() {
            return all;
        }
        page_token = page.next_page_token;
    }
}

/// True once no task can move without a human: each is completed or parked awaiting one.
/// A task that failed, went dead or was cancelled can never settle, so it fails the run at once.
pub fn settled(tasks: &[Task]) -> bool {
    for task in tasks {
        let state = TaskState::try_from(task.state).unwrap_or(TaskState::Unspecified);
        assert!(
            !matches!(
                state,
                TaskState::Failed | TaskState::Dead | TaskState::Cancelled
            ),
            "task {} of {} ended {state:?}: {}",
            task.task_id,
            task.run_id,
            task.last_error
        );
    }
    tasks.iter().all(|task| {
        task.state == TaskState::Completed as i32 || task.state == TaskState::InputRequired as i32
    })
}

/// Polls the queue until every task settled, for at most `limit`; the tasks as they ended.
pub async fn wait_until_settled(
    tasks: &mut TaskServiceClient<Channel>,
    limit: Duration,
) -> Vec<Task> {
    let deadline = Instant::now() + limit;
    loop {
        let now = all_tasks(tasks).await;
        if settled(&now) {
            return now;
        }
        let unsettled: Vec<_> = now
            .iter()
            .filter(|task| task.state != TaskState::Completed as i32)
            .map(|task| format!("{}:{}", task.run_id, task.state))
            .collect();
        assert!(
            Instant::now() < deadline,
            "tasks still unsettled after {limit:?}: {unsettled:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs with a checkpoint whose checksum no longer verifies, each with its first bad verdict.
pub async fn corrupt_checkpoints(
    checkpoints: &mut CheckpointServiceClient<Channel>,
    runs: &[(String, u64)],
) -> Vec<String> {
    let mut corrupt = Vec::new();
    for (run_id, _) in runs {
        let verdicts = validate_run(checkpoints, run_id).await;
        if let Some(bad) = verdicts.iter().find(|verdict| !verdict.valid) {
            corrupt.push(format!("{run_id} step {}: {}", bad.step, bad.reason));
        }
    }
    corrupt
}

/// Everything a chaos run measured.
#[derive(Debug)]
pub struct ChaosReport {
    pub tasks: Vec<Task>,
    pub kills: usize,
    pub workers_started: usize,
    pub emails: EmailTally,
    pub corrupt: Vec<String>,
    pub wall: Duration,
}

impl ChaosReport {
    /// Parked tasks with the call each one names for a human: the in-doubt calls.
    pub fn in_doubt(&self) -> Vec<String> {
        self.tasks
            .iter()
            .filter(|task| task.state == TaskState::InputRequired as i32)
            .map(|task| {
                let action = task.approval.as_ref().map_or("", |a| a.action.as_str());
                format!("{} {action}", task.run_id)
            })
            .collect()
    }

    pub fn summary(&self, plan: &ChaosPlan) -> String {
        let completed = self
            .tasks
            .iter()
            .filter(|task| task.state == TaskState::Completed as i32)
            .count();
        let mut text = format!(
            "chaos summary backend={:?} seed={} tasks={} completed={completed} parked={} \
             workers_started={} kills={} emails={} distinct_emails={} duplicates={} \
             unexpected_lines={} in_doubt={} corrupt_runs={} wall_ms={}",
            plan.backend,
            plan.seed,
            self.tasks.len(),
            self.tasks.len() - completed,
            self.workers_started,
            self.kills,
            self.emails.sent,
            self.emails.distinct(),
            self.emails.duplicates(),
            self.emails.unexpected(plan).len(),
            self.in_doubt().len(),
            self.corrupt.len(),
            self.wall.as_millis(),
        );
        for (email, times) in self.emails.repeated() {
            text.push_str(&format!("\nchaos duplicate: {email} sent {times} times"));
        }
        for line in self.emails.unexpected(plan) {
            text.push_str(&format!("\nchaos unexpected spool line: {line:?}"));
        }
        for call in self.in_doubt() {
            text.push_str(&format!("\nchaos in doubt: {call}"));
        }
        for run in &self.corrupt {
            text.push_str(&format!("\nchaos corrupt checkpoint: {run}"));
        }
        text
    }

    /// The promises: every email of a completed run sent, and no email sent twice or torn; every
    /// parked run naming its in-doubt call; every checkpoint intact.
    pub fn assert_holds(&self, plan: &ChaosPlan) {
        let summary = self.summary(plan);
        assert_eq!(self.tasks.len(), plan.tasks, "{summary}");
        assert!(self.corrupt.is_empty(), "{summary}");
        assert!(self.emails.unexpected(plan).is_empty(), "{summary}");
        let steps: HashMap<String, u64> = plan.runs().into_iter().collect();
        for task in &self.tasks {
            if task.state == TaskState::Completed as i32 {
                let missing = self.emails.missing(&task.run_id, steps[&task.run_id]);
                assert!(missing.is_empty(), "never sent: {missing:?}\n{summary}");
            } else {
                let named = task.approval.as_ref().map(|a| a.action.as_str());
                assert!(
                    named.is_some_and(|action| !action.is_empty()),
                    "parked {} names no in-doubt call\n{summary}",
                    task.run_id
                );
            }
        }
        if !plan.duplicates_tolerated {
            assert_eq!(self.emails.duplicates(), 0, "{summary}");
        }
    }
}
