//! `checkpointd tasks ...`: list, show and steer queued tasks through `TaskService`.

use serde_json::json;

use super::client::{CliError, Client};
use super::output::print_json;
use super::task_view::{print_task, state_name, task_json, task_table};
use super::{Decision, StateFilter, TasksCommand};
use checkpointd::proto::{self, Task};

/// Largest page the server accepts.
const MAX_PAGE: u32 = 1000;

pub async fn run(client: &Client, command: TasksCommand, json: bool) -> Result<(), CliError> {
    match command {
        TasksCommand::List { state, limit } => list(client, state, limit, json).await,
        TasksCommand::Dead { limit } => list(client, Some(StateFilter::Dead), limit, json).await,
        TasksCommand::Show { id } => {
            let task = get(client, &id).await?;
            print_one(&task, json);
            Ok(())
        }
        TasksCommand::Approve(decision) => decide(client, decision, true, json).await,
        TasksCommand::Reject(decision) => decide(client, decision, false, json).await,
        TasksCommand::Resume { id } => {
            let request = proto::ResumeTaskRequest { task_id: id };
            let reply = client.tasks().resume_task(request).await;
            let task = task_of(client, reply.map(|r| r.into_inner().task))?;
            report(&task, "resumed", json);
            Ok(())
        }
        TasksCommand::Requeue { id } => {
            let request = proto::RequeueRequest { task_id: id };
            let reply = client.tasks().requeue(request).await;
            let task = task_of(client, reply.map(|r| r.into_inner().task))?;
            report(&task, "requeued", json);
            Ok(())
        }
        TasksCommand::Cancel { id } => {
            let request = proto::CancelRequest { task_id: id };
            let reply = client.tasks().cancel(request).await;
            let task = task_of(client, reply.map(|r| r.into_inner().task))?;
            report(&task, "cancelled", json);
            Ok(())
        }
        TasksCommand::Enqueue {
            run,
            input,
            idempotency_key,
            max_attempts,
            auto_resume_hitl,
        } => {
            let request = proto::EnqueueRequest {
                run_id: run,
                input: input.into_bytes(),
                idempotency_key: idempotency_key.unwrap_or_default(),
                retry_policy: max_attempts.map(|max_attempts| proto::RetryPolicy {
                    max_attempts,
                    ..proto::RetryPolicy::default()
                }),
                auto_resume_hitl,
            };
            let reply = client
                .tasks()
                .enqueue(request)
                .await
                .map_err(|status| client.status(status))?
                .into_inner();
            let task = task_of(client, Ok(reply.task))?;
            if json {
                print_json(&json!({
                    "already_existed": reply.already_existed,
                    "task": task_json(&task),
                }));
            } else if reply.already_existed {
                println!(
                    "task {} already existed for this idempotency key; nothing enqueued",
                    task.task_id
                );
                print_task(&task);
            } else {
                println!("enqueued task {}", task.task_id);
                print_task(&task);
            }
            Ok(())
        }
    }
}

/// Follows page tokens until `limit` tasks are collected or the pages run out.
async fn list(
    client: &Client,
    state: Option<StateFilter>,
    limit: u32,
    json: bool,
) -> Result<(), CliError> {
    let wire_state = state.map_or(proto::TaskState::Unspecified, StateFilter::to_wire);
    let mut tasks: Vec<Task> = Vec::new();
    let mut page_token = String::new();
    let more = loop {
        let wanted = limit - tasks.len() as u32;
        let request = proto::ListRequest {
            state: wire_state as i32,
            page_size: wanted.min(MAX_PAGE),
            page_token: page_token.clone(),
        };
        let page = client
            .tasks()
            .list(request)
            .await
            .map_err(|status| client.status(status))?
            .into_inner();
        tasks.extend(page.tasks);
        if tasks.len() >= limit as usize {
            // A server may send more than asked for; the limit is the operator's.
            tasks.truncate(limit as usize);
            break !page.next_page_token.is_empty();
        }
        if page.next_page_token.is_empty() {
            break false;
        }
        page_token = page.next_page_token;
    };
    if json {
        print_json(&json!({
            "tasks": tasks.iter().map(task_json).collect::<Vec<_>>(),
            "truncated": more,
        }));
        return Ok(());
    }
    let filter = state.map_or_else(
        || "tasks".to_owned(),
        |state| format!("{} tasks", state_name(state.to_wire() as i32)),
    );
    if tasks.is_empty() {
        println!("no {filter}");
        return Ok(());
    }
    print!(
        "{}",
        task_table(&tasks, state == Some(StateFilter::InputRequired)).render()
    );
    if more {
        println!("(showing the first {limit} {filter}; raise --limit to see more)");
    }
    Ok(())
}

async fn get(client: &Client, id: &str) -> Result<Task, CliError> {
    let request = proto::GetRequest {
        task_id: id.to_owned(),
    };
    let reply = client.tasks().get(request).await;
    task_of(client, reply.map(|r| r.into_inner().task))
}

async fn decide(
    client: &Client,
    decision: Decision,
    approve: bool,
    json: bool,
) -> Result<(), CliError> {
    let Decision { id, by, comment } = decision;
    let task = if approve {
        let request = proto::ApproveRequest {
            task_id: id,
            decided_by: by.clone(),
            comment,
        };
        let reply = client.tasks().approve(request).await;
        task_of(client, reply.map(|r| r.into_inner().task))?
    } else {
        let request = proto::RejectRequest {
            task_id: id,
            decided_by: by.clone(),
            comment,
        };
        let reply = client.tasks().reject(request).await;
        task_of(client, reply.map(|r| r.into_inner().task))?
    };
    let verb = if approve { "approved" } else { "rejected" };
    report(&task, &format!("{verb} by {by}"), json);
    Ok(())
}

/// The task in a reply; a reply without one is a server bug worth naming.
fn task_of(client: &Client, reply: Result<Option<Task>, tonic::Status>) -> Result<Task, CliError> {
    reply
        .map_err(|status| client.status(status))?
        .ok_or_else(|| CliError::Other("the server replied without a task".to_owned()))
}

fn print_one(task: &Task, json: bool) {
    if json {
        print_json(&task_json(task));
    } else {
        print_task(task);
    }
}

/// After a transition: the task as JSON, or one line saying what happened and where it is now.
fn report(task: &Task, what: &str, json: bool) {
    if json {
        print_json(&task_json(task));
    } else {
        println!(
            "task {} {what}; now {}",
            task.task_id,
            state_name(task.state)
        );
    }
}
