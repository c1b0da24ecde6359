//! The task states as the console names them in URLs, in the order the tasks page shows them,
//! and the one listing of a state that the tasks page and its bulk changes share.

use tonic::Status;

use crate::console::Shared;
use crate::console::calls::request;
use crate::console::session::Session;
use crate::proto::task_service_server::TaskService;
use crate::proto::{self, TaskState};

/// The states the page offers, in the order shown, with their names in URLs. The first three
/// are the ones an operator acts on; without `?state=` the page opens on the first state in
/// this order that holds any task.
pub const STATES: [(&str, TaskState); 7] = [
    ("input_required", TaskState::InputRequired),
    ("dead", TaskState::Dead),
    ("failed", TaskState::Failed),
    ("running", TaskState::Running),
    ("pending", TaskState::Pending),
    ("completed", TaskState::Completed),
    ("cancelled", TaskState::Cancelled),
];

/// A state's name in URLs.
pub fn state_name(state: i32) -> &'static str {
    STATES
        .iter()
        .find(|(_, known)| *known as i32 == state)
        .map_or("unknown", |(name, _)| name)
}

/// Up to `limit` tasks in `state` as the session lists them; whether more follow.
pub async fn list_in(
    console: &Shared,
    session: &Session,
    state: TaskState,
    limit: u32,
) -> Result<(Vec<proto::Task>, bool), Status> {
    let tasks = console.calls.tasks()?;
    let list = proto::ListRequest {
        state: state as i32,
        page_size: limit,
        page_token: String::new(),
    };
    let call = request(&session.context, "TaskService/List", list)?;
    let listed = tasks.list(call).await?.into_inner();
    Ok((listed.tasks, !listed.next_page_token.is_empty()))
}
