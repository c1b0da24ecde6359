//! The approval inbox's listing: one page of a tenant's tasks waiting for a decision
//! (`input_required`), filtered and ordered in the backend, with the counts the inbox shows.
//! [`select_waiting`] is the reference every backend's SQL must agree with (the suite checks).

use std::time::SystemTime;

use super::{Task, TaskState};

/// The most tasks one page may hold; a query asking for more gets this many.
pub const MAX_WAITING_PAGE: usize = 100;

/// The most actions [`WaitingPage::actions`] counts: the inbox offers them as a filter, and a
/// list longer than this is no use as one.
pub const MAX_ACTION_COUNTS: usize = 50;

/// Which waiting tasks, in what order, which page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaitingQuery {
    /// Only tasks whose approval request names exactly this action.
    pub action: Option<String>,
    /// Only tasks whose approval was requested at or before this time, i.e. that have waited
    /// at least a given age.
    pub requested_before: Option<SystemTime>,
    /// Newest request first; otherwise the longest waiting first. Ties go by task id, in the
    /// same direction, so pages never overlap.
    pub newest_first: bool,
    /// Matching tasks skipped before the page starts.
    pub offset: usize,
    /// The page's size, at most [`MAX_WAITING_PAGE`].
    pub limit: usize,
}

/// One page and the counts around it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WaitingPage {
    pub tasks: Vec<Task>,
    /// Every task of the tenant waiting for a decision, whatever the filters.
    pub waiting: u64,
    /// The tasks the filters match, of which `tasks` is one page.
    pub matching: u64,
    /// How many waiting tasks name each action, whatever the filters: most first, then by
    /// action; at most [`MAX_ACTION_COUNTS`].
    pub actions: Vec<(String, u64)>,
}

impl WaitingQuery {
    /// The page size a backend applies: `limit` capped at [`MAX_WAITING_PAGE`].
    pub fn page_size(&self) -> usize {
        self.limit.min(MAX_WAITING_PAGE)
    }
}

/// When `task` asked for its approval; `None` for a task that is not waiting.
fn requested_at(task: &Task) -> Option<SystemTime> {
    (task.state == TaskState::InputRequired).then_some(task.approval.as_ref()?.requested_at)
}

/// The answer to `query` over `tasks` (one tenant's): the memory backend's, and the
/// reference the SQL backends agree with.
pub fn select_waiting<'a>(
    tasks: impl IntoIterator<Item = &'a Task>,
    query: &WaitingQuery,
) -> WaitingPage {
    let mut waiting: Vec<(SystemTime, &Task)> = tasks
        .into_iter()
        .filter_map(|task| Some((requested_at(task)?, task)))
        .collect();
    let mut actions = std::collections::BTreeMap::<&str, u64>::new();
    for (_, task) in &waiting {
        let action = task.approval.as_ref().map_or("", |a| a.action.as_str());
        *actions.entry(action).or_default() += 1;
    }
    let mut actions: Vec<(String, u64)> = actions
        .into_iter()
        .map(|(action, count)| (action.to_owned(), count))
        .collect();
    actions.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    actions.truncate(MAX_ACTION_COUNTS);
    let total = waiting.len() as u64;
    waiting.retain(|(requested, task)| {
        query
            .action
            .as_deref()
            .is_none_or(|action| task.approval.as_ref().is_some_and(|a| a.action == action))
            && query
                .requested_before
                .is_none_or(|before| *requested <= before)
    });
    waiting.sort_by(|a, b| (a.0, &a.1.id).cmp(&(b.0, &b.1.id)));
    if query.newest_first {
        waiting.reverse();
    }
    WaitingPage {
        matching: waiting.len() as u64,
        tasks: waiting
            .into_iter()
            .skip(query.offset)
            .take(query.page_size())
            .map(|(_, task)| task.clone())
            .collect(),
        waiting: total,
        actions,
    }
}
